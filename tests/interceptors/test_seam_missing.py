"""A library that changed under its interceptor (a private name gone, as websockets 17 renamed
the asyncio client's seam) never breaks a cassette for the traffic it does not carry: that
interceptor warns once, naming the library, its version and what to do, and steps aside; the
others record and replay as before. Broken here for real: the private name is deleted from the
installed library for the test's duration."""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

import pytest
import urllib3
import websockets.asyncio.client
import websockets.sync.client
from fake_provider import FakeProvider
from google import genai
from google.genai import types as genai_types

from promptvcr import use_cassette
from promptvcr.interceptors import _compat, unavailable
from promptvcr.interceptors.unavailable import InterceptorUnavailableWarning

#: Each library whose seam is broken (its distribution's name first), how to break it.
BREAKS = {
    "websockets": (
        websockets.asyncio.client.connect,
        [method for method, _ in _compat.WEBSOCKETS_ASYNC_SEAMS],
    ),
    "urllib3": (urllib3.HTTPConnectionPool, [_compat.URLLIB3_ATTEMPT_SEAM]),
}
_SYNC_CLASS, _SYNC_METHOD = _compat.WEBSOCKETS_SYNC_SEAM
if hasattr(websockets.sync.client, _SYNC_CLASS):  # websockets 17: the threaded client's seam too
    BREAKS["websockets threaded"] = (getattr(websockets.sync.client, _SYNC_CLASS), [_SYNC_METHOD])


def _ask(base_url: str) -> str:
    options = genai_types.HttpOptions(base_url=base_url, api_version="v1beta")
    client = genai.Client(api_key="test-key", http_options=options)
    try:
        answer = client.models.generate_content(model="gemini-2.5-flash", contents="hello there")
    finally:
        client.close()
    return str(answer.text)


@pytest.mark.parametrize("library", sorted(BREAKS))
def test_a_missing_seam_warns_once_and_http_cassettes_still_record_and_replay(
    library: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner, names = BREAKS[library]
    library = library.split()[0]
    for name in names:
        monkeypatch.delattr(owner, name, raising=False)
    monkeypatch.setattr(unavailable, "_warned", set())  # this process may have warned before
    path = tmp_path / "gemini.yaml"

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FakeProvider() as provider:
            base_url = provider.base_url
            with use_cassette(path, record_mode="record"):
                recorded = _ask(base_url)
        with use_cassette(path, record_mode="none") as cassette:  # the server is stopped
            replayed = _ask(base_url)
        with use_cassette(path, record_mode="none"):
            assert _ask(base_url) == recorded

    assert replayed == recorded
    assert [play.outcome for play in cassette.played] == ["replayed"]
    # Only this library's: another may be unsupported here too (urllib3 1.26 in nox -s compat).
    told = [
        w
        for w in caught
        if issubclass(w.category, InterceptorUnavailableWarning) and f" {library} " in str(w.message)
    ]
    assert len(told) == 1, [str(w.message) for w in told]
    message = str(told[0].message)
    assert f"cannot intercept {library} {importlib.metadata.version(library)}" in message
    assert names[-1] in message  # what is missing
    assert f"Disabled: recording and replaying {library} traffic" in message
    assert "pip install" in message


def test_a_seam_put_back_is_intercepted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stepping aside is decided at each cassette, not for the rest of the process."""
    owner, names = BREAKS["websockets"]
    seam, _ = _compat.websockets_async_seam(owner)
    original = getattr(owner, seam)
    monkeypatch.setattr(unavailable, "_warned", set())
    with monkeypatch.context() as broken:
        for name in names:
            broken.delattr(owner, name, raising=False)
        with pytest.warns(InterceptorUnavailableWarning), use_cassette(tmp_path / "a.yaml"):
            assert not hasattr(owner, seam)
    with use_cassette(tmp_path / "b.yaml"):
        assert getattr(owner, seam) is not original  # patched again
    assert getattr(owner, seam) is original

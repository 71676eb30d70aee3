"""urllib3 below the floor promptvcr supports (2.2.2; 1.26 still comes with older botocore
and requests) is left unpatched with one clear warning, and a cassette keeps recording and
replaying every other library in the same process, requests and boto3 imported: what
``nox -s "compat(urllib3-1.26)"`` checks. On a supported urllib3 the same test checks the
other side: no warning, and requests' traffic is recorded and replayed with openai's."""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

import boto3  # noqa: F401  (imported as an AWS suite has it: botocore sends through urllib3)
import pytest
import requests
import sdk_calls
from fake_provider import FakeProvider
from packaging.version import Version

from promptvcr import use_cassette
from promptvcr.interceptors import unavailable
from promptvcr.interceptors.unavailable import InterceptorUnavailableWarning

URLLIB3 = importlib.metadata.version("urllib3")
#: What docs/versions.md promises: urllib3 2.2.2 and newer is intercepted, an older one is not.
SUPPORTED = Version(URLLIB3) >= Version("2.2.2")


def _ask(base_url: str) -> str | None:
    client = sdk_calls.openai_client(base_url, max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    return answer.choices[0].message.content


def test_urllib3_is_intercepted_or_steps_aside_with_one_warning_and_openai_still_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unavailable, "_warned", set())  # this process may have warned before
    path = tmp_path / "mixed.yaml"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with FakeProvider() as fake:
            base_url = fake.base_url
            with use_cassette(path, record_mode="record") as recording:
                recorded = _ask(base_url)
                live = requests.get(f"{base_url}/raw/json", timeout=5).json()
            reached_the_server = len(fake.requests)
        with use_cassette(path, record_mode="none") as replaying:  # the server is stopped
            replayed = _ask(base_url)
            if SUPPORTED:
                assert requests.get(f"{base_url}/raw/json", timeout=5).json() == live

    told = [str(w.message) for w in caught if issubclass(w.category, InterceptorUnavailableWarning)]
    assert replayed == recorded == "echo 1: hi" and live["n"] == 2
    assert reached_the_server == 2
    if SUPPORTED:
        assert told == []
        assert [play.outcome for play in recording.played] == ["recorded", "recorded"]
        assert [play.outcome for play in replaying.played] == ["replayed", "replayed"]
        return
    # Below the floor: requests went to the server unrecorded; one warning for two cassettes.
    assert [play.outcome for play in recording.played] == ["recorded"]
    assert [play.outcome for play in replaying.played] == ["replayed"]
    assert len(told) == 1, told
    assert f"cannot intercept urllib3 {URLLIB3}" in told[0]
    assert "urllib3 2.2.2 or newer" in told[0] and "pip install 'urllib3>=2.2.2'" in told[0]
    assert "Disabled: recording and replaying urllib3 traffic" in told[0]

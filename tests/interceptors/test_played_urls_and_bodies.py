"""What a cassette keeps of each request it served: the URL text and the body the SDK sent.

Both are kept without copies (issue 22): the httpx-family interceptors find a URL's text by
the library's parsed parts instead of making it again for every request, and a replayed
request that sent the recorded bytes keeps the recorded body, so that its own may go. Either
shortcut must read back exactly what was sent.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import httpx2
import pytest
import sdk_calls
from fake_provider import FakeProvider
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

import promptvcr

LIBRARIES = [httpx2, httpx]

_piece = st.text(alphabet=string.ascii_letters + string.digits + "-._~%!$&'()*+,;=:@/?#[] é€", max_size=6)
_query = st.lists(st.tuples(_piece, _piece), max_size=3)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda m: m.__name__)
@property_settings(60)
@given(urls=st.lists(st.tuples(_piece, _query, st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_played_urls_are_the_text_the_library_gives(
    server: FakeProvider, library: ModuleType, urls: list[tuple[str, list[tuple[str, str]], bool, bool]]
) -> None:
    """URLs that differ anywhere (path, query, an empty query, userinfo, a fragment, the host's
    spelling) each read back as the library's own text, also when one is sent again."""
    sent: list[str] = []
    base = server.base_url.rstrip("/")
    client = library.Client(event_hooks={"request": [lambda r: sent.append(str(r.url))]})
    with client, promptvcr.use_cassette("unused.yaml", record_mode="passthrough") as cassette:
        for path, query, userinfo, localhost in [*urls, urls[0]]:
            url = base.replace("127.0.0.1", "localhost") if localhost else base
            if userinfo:
                url = url.replace("://", "://user:p%40ss@")
            client.get(f"{url}/v1/{path}", params=query or None)
    assert [play.request.url for play in cassette.played] == sent


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda m: m.__name__)
def test_the_same_parts_built_two_ways_read_the_same(server: FakeProvider, library: ModuleType) -> None:
    """A URL parsed from text and one built with ``copy_with`` hold equal parts: one text."""
    sent: list[str] = []
    base = library.URL(server.base_url)
    client = library.Client(event_hooks={"request": [lambda r: sent.append(str(r.url))]})
    with client, promptvcr.use_cassette("unused.yaml", record_mode="passthrough") as cassette:
        client.get(base.copy_with(path="/v1/models", query=b"a=1"))
        client.get(f"{server.base_url.rstrip('/')}/v1/models?a=1")
        client.get(base.copy_with(path="/v1/models", query=b"a=2"))
    assert [play.request.url for play in cassette.played] == sent
    assert sent[0] == sent[1] != sent[2]


def _ask(base_url: str, texts: list[str]) -> list[Any]:
    client = sdk_calls.openai_client(base_url)
    return [
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": t}])
        for t in texts
    ]


def test_a_replayed_request_keeps_the_recorded_body_when_it_sent_the_same(tmp_path: Path) -> None:
    path = tmp_path / "bodies.yaml"
    with FakeProvider() as provider, promptvcr.use_cassette(path, record_mode="record") as recording:
        _ask(provider.base_url, ["first question", "second question"])
    sent = [play.request.content for play in recording.played]

    with promptvcr.use_cassette(path) as replaying:
        _ask(sdk_calls.OFFLINE, ["first question", "second question"])
    recorded = [interaction.request.content for interaction in replaying.interactions]
    assert [play.outcome for play in replaying.played] == ["replayed", "replayed"]
    assert [play.request.content for play in replaying.played] == sent == recorded
    for play, body in zip(replaying.played, recorded, strict=True):
        assert play.request.content is body  # one copy of the bytes, not two

    # Replayed for a request whose body differs (a fuzzy match): it keeps the body it sent.
    with pytest.warns(promptvcr.FuzzyMatchWarning), promptvcr.use_cassette(path, fuzzy=0.5) as fuzzy:
        _ask(sdk_calls.OFFLINE, ["first questions"])
    (play,) = fuzzy.played
    assert play.outcome == "replayed"
    assert b"first questions" in play.request.content
    assert play.request.content != fuzzy.interactions[0].request.content

"""What a cassette keeps of each request it served: its headers exactly as the SDK sent them.

The httpx-family interceptors keep a compact copy of the library's header lines (issue 22),
decoded only when read: what reads back must be what the library's own ``items()`` gives
(names lower-cased, repeated names joined with ", ", the library's decoding).
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import httpx2
import sdk_calls
from fake_provider import FakeProvider
from openai_features import needs_openai_on_httpx2

import promptvcr
from promptvcr.cassettes.models import Request

pytestmark = needs_openai_on_httpx2  # every test hands openai an httpx2 client

# Repeated names (either case) and a UTF-8 value: httpx2 decodes that one as UTF-8.
EXTRA = [("X-Dup", "first"), ("x-dup", "second"), ("X-Utf8", "caf\u00e9".encode())]


def ask(base_url: str, sent: list[dict[str, str]]) -> None:
    def capture(request: httpx2.Request) -> None:
        sent.append(dict(request.headers.items()))

    http = httpx2.Client(headers=EXTRA, event_hooks={"request": [capture]})
    openai = sdk_calls.openai_client(base_url, http_client=http)
    anthropic = sdk_calls.anthropic_client(base_url, http_client=http)
    for n in range(3):
        openai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": f"q{'x' * n}"}])
        anthropic.messages.create(
            model="claude-x", max_tokens=8, messages=[{"role": "user", "content": f"q{n}"}]
        )


def check(played: list[Any], sent: list[dict[str, str]]) -> None:
    assert len(played) == len(sent) == 6
    for play, headers in zip(played, sent, strict=True):
        request = play.request
        assert request.headers == headers
        assert list(request.headers) == list(headers)  # the order too
        assert request.headers["x-dup"] == "first, second"
        assert request.headers["x-utf8"] == "caf\u00e9"
        plain = Request(request.method, request.url, dict(headers), request.content)
        assert request == plain
        assert copy.copy(request) == plain
        assert pickle.loads(pickle.dumps(request)) == plain


def test_played_requests_keep_the_headers_the_sdk_sent(tmp_path: Path) -> None:
    path = tmp_path / "headers.yaml"
    recorded: list[dict[str, str]] = []
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record") as recording:
        ask(server.base_url, recorded)
        on_the_wire = [r.headers for r in server.requests]
    check(recording.played, recorded)
    ascii_only = [{k: v for k, v in h.items() if k != "x-utf8"} for h in recorded]
    assert [{k: v for k, v in h.items() if k != "x-utf8"} for h in on_the_wire] == ascii_only

    replayed: list[dict[str, str]] = []
    with promptvcr.use_cassette(path) as replaying:
        ask(sdk_calls.OFFLINE, replayed)
    assert [p.outcome for p in replaying.played] == ["replayed"] * 6
    check(replaying.played, replayed)


def test_requests_that_differ_in_their_length_alone_each_keep_their_own(tmp_path: Path) -> None:
    """Consecutive requests whose header lines differ in the last one only (httpx puts the
    content-length last) share the lines they have in common; each still reads back its own."""
    lengths = [1, 2, 1, 3, 2, 1, 3, 3]  # lengths seen again, and the same length twice in a row
    sent: list[dict[str, str]] = []

    def capture(request: httpx2.Request) -> None:
        sent.append(dict(request.headers.items()))

    def ask_each(base_url: str) -> None:
        http = httpx2.Client(event_hooks={"request": [capture]})
        openai = sdk_calls.openai_client(base_url, http_client=http)
        for n in lengths:
            openai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "q" * n}])

    path = tmp_path / "lengths.yaml"
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record"):
        ask_each(server.base_url)
    sent.clear()
    with promptvcr.use_cassette(path, allow_playback_repeats=True) as replaying:
        ask_each(sdk_calls.OFFLINE)
    assert [play.outcome for play in replaying.played] == ["replayed"] * len(lengths)
    lengths_read = [int(play.request.headers["content-length"]) for play in replaying.played]
    assert lengths_read == [int(headers["content-length"]) for headers in sent]
    assert len(set(lengths_read)) == 3
    for play, headers in zip(replaying.played, sent, strict=True):
        assert play.request.headers == headers
        assert play.request.content_type == "application/json"


def test_requests_sharing_lines_each_get_their_own_headers(tmp_path: Path) -> None:
    """Header lines shared by several requests are decoded once: each request still reads a
    dict of its own, which a change to another request's leaves as it was."""
    sent: list[dict[str, str]] = []
    path = tmp_path / "same.yaml"
    with promptvcr.use_cassette(path, record_mode="record") as cassette, FakeProvider() as server:
        http = httpx2.Client(event_hooks={"request": [lambda r: sent.append(dict(r.headers.items()))]})
        openai = sdk_calls.openai_client(server.base_url, http_client=http)
        for _ in range(3):  # the same request: the same lines, kept once
            openai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "q"}])
    first, second, third = (play.request.headers for play in cassette.played)
    assert first == second == third == sent[0]
    assert first is not second and second is not third
    first["x-changed"] = "yes"
    del second["content-type"]
    assert cassette.played[2].request.headers == sent[2]
    assert "x-changed" not in cassette.played[1].request.headers

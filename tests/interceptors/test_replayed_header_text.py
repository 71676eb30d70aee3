"""A recorded header value that is not ASCII replays as the text it was recorded as.

httpx and httpx2 encode header text as ASCII: a value such as ``caf\u00e9`` given to them as text
raises ``UnicodeEncodeError``. The stored value goes back as UTF-8 bytes, which both decode
back to the same text (they read UTF-8 before Latin-1).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from plugin_suites import write_cassette

import promptvcr

URL = "http://127.0.0.1:9/v1/models"  # nothing listens: only the cassette can answer


def stored(value: str) -> dict[str, Any]:
    return {
        "request": {"method": "GET", "url": URL, "headers": {}},
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json", "x-model-owner": value},
            "json": {"data": []},
        },
    }


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize("value", ["caf\u00e9 \u2014 na\u00efve", "plain"])
def test_a_recorded_header_value_replays_as_its_text(tmp_path: Path, library: Any, value: str) -> None:
    path = write_cassette(tmp_path / "owner.yaml", stored(value))
    with promptvcr.use_cassette(path, allow_playback_repeats=True), library.Client() as client:
        for _ in range(2):  # the second is served from the header list built for the first
            response = client.get(URL)
            assert response.headers["x-model-owner"] == value
            assert response.json() == {"data": []}


@pytest.mark.parametrize("value", ["caf\u00e9", "plain"])
def test_one_stored_response_serves_httpx_and_httpx2_in_turn(tmp_path: Path, value: str) -> None:
    """The header list a replay keeps on a stored response is one library's own ``Headers``: the
    other library, served the same response next, gets its own, with the same lines."""
    path = write_cassette(tmp_path / "owner.yaml", stored(value))
    with promptvcr.use_cassette(path, allow_playback_repeats=True):
        seen = []
        for library in (httpx2, httpx, httpx2, httpx):
            with library.Client() as client:
                response = client.get(URL)
            seen.append((response.headers.raw, response.content))
            assert response.headers["x-model-owner"] == value
            assert response.headers["content-length"] == str(len(response.content))
    assert seen.count(seen[0]) == 4


def test_the_served_headers_are_what_the_library_builds_from_the_stored_text() -> None:
    """A replay builds the library's header lines itself (issue 22): the same lines, names and
    values as the library's own ``Headers`` of the stored text, for names in any case, repeated
    responses, non-ASCII values, streams and bodies in several chunks."""
    from promptvcr.cassettes.models import Response
    from promptvcr.interceptors._httpx_replay import replay_response

    chosen = random.Random(22)
    names = ["content-type", "X-Request-Id", "date", "set-cookie", "x-\u00e9t\u00e9", "ETag"]
    values = ["application/json", "text/event-stream", "req_1", "a=b; Path=/", "caf\u00e9", ""]
    for library in (httpx2, httpx):
        for _ in range(300):
            headers = {chosen.choice(names): chosen.choice(values) for _ in range(chosen.randint(0, 6))}
            chunks = [b"x" * chosen.randint(0, 9) for _ in range(chosen.randint(0, 3))]
            stored = Response(200, headers, chunks)
            expected = [_as_served(name, value) for name, value in headers.items()]
            if stored.content_type != "text/event-stream":
                expected.append(("content-length", str(sum(map(len, chunks)))))
            for _ in range(2):  # built, then kept
                served = replay_response(library, stored).headers
                built = library.Headers(expected)
                assert served.raw == built.raw
                assert served.multi_items() == built.multi_items()
                assert served.encoding == built.encoding


def test_headers_one_response_was_served_with_are_not_changed_by_the_application() -> None:
    """Stored responses with the same headers and body size are served headers made once (issue
    22): what the application does to one response's headers stays in that response."""
    from promptvcr.cassettes.models import Response
    from promptvcr.interceptors._httpx_replay import replay_response

    for library in (httpx2, httpx):
        stored = [Response(200, {"content-type": "application/json"}, [b'{"n":%d}' % n]) for n in range(4)]
        first = replay_response(library, stored[0])
        first.headers["x-added"] = "by the application"
        del first.headers["content-type"]
        first.headers["content-length"] = "0"
        for response in stored[1:]:
            served = replay_response(library, response).headers
            assert served.multi_items() == [("content-type", "application/json"), ("content-length", "7")]


def _as_served(name: str, value: str) -> tuple[str, str] | tuple[bytes, bytes]:
    return (name, value) if name.isascii() and value.isascii() else (name.encode(), value.encode())


def test_headers_are_made_without_init_only_in_the_layout_known() -> None:
    """The served headers skip the library's ``__init__`` only when an empty one holds its lines
    and encoding alone; a ``Headers`` with anything more is left to the library to build."""
    from types import ModuleType

    from promptvcr.interceptors._compat import headers_with_lines

    lines = [(b"Content-Type", b"content-type", b"application/json")]
    for library in (httpx2, httpx):
        made = headers_with_lines(library, list(lines))
        assert type(made) is library.Headers
        assert made.raw == [(b"Content-Type", b"application/json")]
        assert made.encoding == library.Headers(lines and [("Content-Type", "application/json")]).encoding

    class Headers:  # like the library's, with one attribute more
        def __init__(self) -> None:
            self._list: list[tuple[bytes, bytes, bytes]] = []
            self._encoding = None
            self._seen: dict[str, str] = {}

    other = ModuleType("other")
    other.Headers = Headers  # type: ignore[attr-defined]
    assert headers_with_lines(other, list(lines)) is None

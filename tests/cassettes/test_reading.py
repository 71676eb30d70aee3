"""Reading a file checks each item straight into the compact form (issue 22): what it gives must be
what building each interaction field by field and walking it back gives, for every kind of item."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.cassettes.wsframes import Frame, WebSocketSession
from promptvcr.files import compactform, fileformat, reading

URL = "http://127.0.0.1:9/v1/chat/completions"
WHEN = datetime(2026, 11, 24, 6, 0, 0, tzinfo=timezone.utc)


def _varied() -> list[Interaction]:
    """Each kind of item a file holds: a chat, a timed stream, bodies ended early, binary, none."""
    sse = {"content-type": "text/event-stream"}
    events = [b'data: {"delta": "%d"}\n\n' % n for n in range(3)]
    sent = {"content-type": "application/json"}
    return [
        Interaction(
            Request("POST", URL, sent, b'{"model":"m","messages":[]}'),
            Response(200, dict(sent), [b'{"id": "c", "n": 1}']),
            WHEN,
        ),
        Interaction(
            Request("POST", URL, sent, b'{"stream":true}'),
            Response(200, sse, events, timing=Timing(0.1, (0.2, 0.3, 0.5))),
            WHEN,
        ),
        Interaction(Request("POST", URL, {}, b"x=1&y=2"), Response(200, sse, events[:1], end="closed")),
        Interaction(Request("GET", f"{URL}?page=2"), Response(200, {}, [b"half"], end="read_timeout")),
        Interaction(Request("GET", "http://127.0.0.1:9/img"), Response(200, {}, [bytes(range(256))])),
        Interaction(Request("GET", "http://127.0.0.1:9/empty"), Response(204)),
    ]


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_the_compact_form_read_makes_the_interactions_read_also_through_marshal(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"c.{suffix}"
    stored = [fileformat.interaction_to_data(i) for i in _varied()]
    path.write_text(fileformat.dumps(stored, path))
    interactions, compact = fileformat.read(path.read_text(), path)
    one_by_one = [
        reading.interaction_from_data(item, path, n)
        for n, item in enumerate(reading.load_document(path.read_text(), path))
    ]
    assert interactions == one_by_one
    assert [i.response.playback for i in interactions] == [i.response.playback for i in one_by_one]
    assert compact is not None
    items = compactform.items_from(compactform.dumps(compact) or b"")
    assert [compactform.interaction(item, f" in {path}") for item in items] == interactions
    assert [_held(i) for i in interactions] == [_held(i) for i in _varied()]
    assert interactions[2].response.playback is not None
    assert str(path) in interactions[2].response.playback.reason


def _held(i: Interaction) -> tuple[object, ...]:
    """What a recording holds, whatever playback a load gives a body that ended early."""
    r = i.response
    return (i.request, r.status, r.headers, r.chunks, r.timing, r.end, i.recorded)


def test_hand_written_headers_are_lower_cased_and_made_text_and_never_shared(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text(
        "interactions:\n"
        "- request: {method: post, url: 'http://127.0.0.1:9/a', headers: &h {Content-Type: application/json, "
        "X-Count: 3}}\n"
        "  response: {status: 200, headers: *h, text: ok}\n"
        "  recorded: 2026-11-24 06:00:00\n"
        "- request: {method: GET, url: 'http://127.0.0.1:9/b', headers: {'123': x}}\n"
        "  response: {status: 200, headers: &w {x-a: b}, text: ok}\n"
        "- request: {method: GET, url: 'http://127.0.0.1:9/c', headers: *w}\n"
        "  response: {status: 200, headers: *w, text: ok}\n"
        "version: 1\n"
    )
    (first, second, third), compact = fileformat.read(path.read_text(), path)
    assert first.request.method == "POST"
    assert first.request.headers == {"content-type": "application/json", "x-count": "3"}
    assert first.response.headers == first.request.headers
    first.response.headers["x-changed"] = "1"  # each interaction owns its headers
    assert "x-changed" not in first.request.headers
    assert first.recorded == WHEN
    assert second.request.headers == {"123": "x"}
    assert compact is not None and compact[1][2] == ("123", "x")
    third.request.headers["x-changed"] = "1"  # headers as promptvcr writes them, shared by an alias
    assert second.response.headers == third.response.headers == {"x-a": "b"}


def test_a_websocket_session_is_built_whole_and_leaves_no_compact_form(tmp_path: Path) -> None:
    session = WebSocketSession(
        [Frame("client", "text", b'{"type":"hi"}'), Frame("server", "text", b"{}", 0.25)]
    )
    handshake = Response(101, {"upgrade": "websocket"}, websocket=session)
    items = [*_varied()[:1], Interaction(Request("GET", "ws://127.0.0.1:9/rt"), handshake)]
    path = tmp_path / "ws.yaml"
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in items], path))
    interactions, compact = fileformat.read(path.read_text(), path)
    assert compact is None
    assert interactions[1].response.websocket == session
    assert interactions[1].response.chunks == [b'{"type":"hi"}', b"{}"]
    assert interactions[1].response.timing == Timing(0.0, (0.0, 0.25))
    assert interactions[0] == items[0]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            {"request": {"method": "GET", "url": "u", "headers": ["a"]}, "response": {"status": 200}},
            "request.headers",
        ),
        (
            {"request": {"method": "GET", "url": "u"}, "response": {"status": 200, "end": "gone"}},
            "response.end",
        ),
        (
            {
                "request": {"method": "GET", "url": "u"},
                "response": {"status": 200, "text": "x", "timing": {"chunks": []}},
            },
            "response.timing.chunks",
        ),
        (
            {"request": {"method": "GET", "url": "u"}, "response": {"status": 200}, "recorded": "soon"},
            "recorded",
        ),
    ],
)
def test_a_broken_item_names_itself(tmp_path: Path, item: dict[str, object], message: str) -> None:
    path = tmp_path / "broken.json"
    ok = fileformat.interaction_to_data(_varied()[0])
    path.write_text(fileformat.dumps([ok, item], path))
    with pytest.raises(Exception, match=rf"interactions\[1\]\.{message}") as raised:
        fileformat.read(path.read_text(), path)
    assert str(path) in str(raised.value)

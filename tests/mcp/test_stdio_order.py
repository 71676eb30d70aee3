"""The order a replayed stdio session keeps, on sessions written out message by message: what
no real client can be made to do on cue (write a call it recorded concurrently only after an
answer it never waited for live, drop a call, answer a server's own request mid-call).
The real ``mcp`` client against a real server is in ``test_mcp_concurrent.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptvcr import CassetteMiss
from promptvcr.cassettes.models import Request, Response
from promptvcr.cassettes.wsframes import Frame, WebSocketSession, with_session
from promptvcr.interceptors.stdiosession import Line, LinePlayer, stdio_request


def _call(id_: int, name: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def _answer(id_: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}}


def player(*messages: tuple[str, Any]) -> LinePlayer:
    """A player of the session ``messages``: ``(sender, JSON message)``, or ``(sender, None)``
    for the end of that side's stream (the server's: exit status 0)."""
    frames = [
        Frame(sender, "close", b"", code=0 if sender == "server" else None)  # type: ignore[arg-type]
        if message is None
        else Frame(sender, "text", json.dumps(message).encode())  # type: ignore[arg-type]
        for sender, message in messages
    ]
    request: Request = stdio_request("python", ["server.py"])
    return LinePlayer(request, with_session(Response(200), WebSocketSession(frames, "stdio")), None)


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def read(lines: list[Line]) -> list[tuple[Any, Any]]:
    """Each line as ``(id, text)``."""
    out = []
    for raw in lines:
        message = json.loads(raw.data)
        out.append((message.get("id"), message.get("result", {}).get("content", [{}])[0].get("text")))
    return out


CONCURRENT = (
    ("client", _call(1, "a")),
    ("client", _call(2, "b")),
    ("server", _answer(2, "B")),
    ("server", _answer(1, "A")),
    ("client", None),
    ("server", None),
)


def test_answers_keep_the_recorded_order_whatever_order_the_calls_come_in() -> None:
    played = player(*CONCURRENT)
    assert played.client_wrote(line(_call(10, "a"))) == []  # its answer came after b's
    assert read(played.client_wrote(line(_call(11, "b")))) == [(11, "B"), (10, "A")]  # live ids


def test_an_answer_held_for_a_call_that_does_not_come_is_sent_when_the_client_stalls() -> None:
    """Recorded concurrently, now awaited one after the other: no hang."""
    played = player(
        ("client", _call(1, "a")),
        ("client", _call(2, "b")),
        ("server", _answer(1, "A")),
        ("server", _answer(2, "B")),
    )
    assert played.client_wrote(line(_call(5, "b"))) == []
    assert read(played.stalled()) == [(5, "B")]
    assert played.stalled() == []  # nothing more is due
    assert read(played.client_wrote(line(_call(6, "a")))) == [(6, "A")]


def test_a_stall_releases_one_answer_and_the_order_resumes_after_it() -> None:
    """A call dropped (``a``): the stall gives ``b``'s answer; the listing the client sends on
    reading it is answered as recorded, before ``c``'s answer, recorded after the listing's."""
    listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    played = player(
        ("client", _call(1, "a")),
        ("client", _call(2, "b")),
        ("client", _call(3, "c")),
        ("server", _answer(1, "A")),
        ("server", _answer(2, "B")),
        ("client", listing),
        ("server", _answer(4, "tools")),
        ("server", _answer(3, "C")),
    )
    assert played.client_wrote(line(_call(1, "b"))) == []
    assert played.client_wrote(line(_call(2, "c"))) == []
    assert read(played.stalled()) == [(1, "B")]
    assert read(played.client_wrote(line({**listing, "id": 3}))) == [(3, "tools"), (2, "C")]


def test_a_server_request_inside_a_call_is_answered_before_the_calls_answer() -> None:
    sampling = {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {"maxTokens": 5}}
    reply = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}},
    }
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    played = player(
        ("client", _call(1, "ask")),
        ("server", log),
        ("server", sampling),
        ("client", reply),
        ("server", _answer(1, "asked")),
    )
    assert [json.loads(raw.data).get("method") for raw in played.client_wrote(line(_call(9, "ask")))] == [
        "notifications/message",
        "sampling/createMessage",
    ]
    assert read(played.client_wrote(line(reply))) == [(9, "asked")]


def test_the_close_passes_over_calls_not_made_and_the_server_exits() -> None:
    played = player(*CONCURRENT)
    assert played.client_wrote(line(_call(1, "a"))) == []  # held behind ``b``'s, which never comes
    assert read(played.client_closed()) == [(1, "A")]
    assert (played.ended, played.exit_code) == (True, 0)


def test_a_changed_call_misses_naming_the_nearest_call_not_yet_played() -> None:
    played = player(*CONCURRENT)
    played.client_wrote(line(_call(1, "b")))
    with pytest.raises(CassetteMiss) as caught:
        played.client_wrote(line(_call(2, "z")))
    assert "client frame 2 matches none of the recorded ones not yet played" in str(caught.value)
    assert "Differences from the nearest (recorded -> sent):" in str(caught.value)
    assert 'params.name: "a" -> "z"' in str(caught.value)


def test_a_client_that_waits_for_no_answer_is_only_idle() -> None:
    """A client busy elsewhere between two calls: the stall sends nothing ahead of its call."""
    played = player(
        ("client", _call(1, "a")),
        ("server", _answer(1, "A")),
        ("client", _call(2, "b")),
        ("server", {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {}}),
    )
    assert read(played.client_wrote(line(_call(1, "a")))) == [(1, "A")]
    assert played.stalled() == []
    assert [json.loads(raw.data)["method"] for raw in played.client_wrote(line(_call(2, "b")))] == [
        "sampling/createMessage"
    ]


def test_a_server_request_behind_a_dropped_call_is_sent_at_the_stall() -> None:
    """The server's own request keeps its place behind every client line recorded before it;
    the stall passes over the call that no longer comes, which still plays if it does."""
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    sampling = {"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {}}
    reply = {"jsonrpc": "2.0", "id": 0, "result": {"role": "assistant"}}
    played = player(
        ("client", listing),
        ("server", _answer(1, "tools")),
        ("client", _call(2, "ask")),
        ("server", sampling),
        ("client", reply),
        ("server", _answer(2, "asked")),
    )
    assert played.client_wrote(line(_call(5, "ask"))) == []
    assert [json.loads(raw.data).get("method") for raw in played.stalled()] == ["sampling/createMessage"]
    assert read(played.client_wrote(line(reply))) == [(5, "asked")]
    assert read(played.client_wrote(line({**listing, "id": 6}))) == [(6, "tools")]  # late, still played


def test_an_answer_taped_before_its_request_waits_for_it() -> None:
    """Recorded by a tap that saw a quick server's answer before the client's line (the wrapper
    taped a line after passing it on): replayed, the answer still waits for its call; sent at
    once, the client dropped it as an answer to nothing and timed out (issue 52)."""
    played = player(
        ("client", _call(1, "a")),
        ("server", _answer(1, "A")),
        ("server", _answer(2, "B")),
        ("client", _call(2, "b")),
        ("client", None),
        ("server", None),
    )
    assert played.opening() == []
    assert read(played.client_wrote(line(_call(1, "a")))) == [(1, "A")]
    assert read(played.client_wrote(line(_call(2, "b")))) == [(2, "B")]

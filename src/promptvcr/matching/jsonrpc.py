"""JSON-RPC answers renumbered: the ids in a replayed answer follow the live request's.

A JSON-RPC client numbers its requests (the ``mcp`` SDK: ``0, 1, 2...`` per session) and
matches each answer to its request by that ``id``. Keys ignore the id
(:func:`~promptvcr.matching.rules.mcp.jsonrpc_ids`), so that one call inserted before the
others does not make every later call miss; the answer recorded for a request then carries
the id it was recorded with, and is given the live one here. The same goes for the
``progressToken`` a request names in ``params._meta`` (the SDK uses its id): the progress
notifications the answer's stream holds carry it.

Only answers (``result`` or ``error``) to the request's own ids and its progress
notifications change; requests the server sends (their ids are the server's) stay as
recorded.

Which request a server message answers is named here too (:func:`handles`, :func:`answers`):
a session replayed over one stream (stdio) sends each answer once its own request came,
whatever order concurrent requests are written in.

Which requests only read (:data:`READS`, :func:`reads_again`) is named here as well: a live
MCP server asked twice for its tools lists them twice, so a read asked more times than it
was recorded gets its last recorded answer again (:meth:`~.tape.Tape.play`) rather than a
miss. The ``mcp`` client lists the tools when a call's answer comes and it knows none: once
per answer that comes before the listing's, which depends on how far apart the answers came.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from ..cassettes.jsonstyle import dump_json, json_style
from ..cassettes.sse import decode_events, encode_event

if TYPE_CHECKING:
    from ..cassettes.models import Response

__all__ = [
    "MARKER",
    "READS",
    "Renumbering",
    "answers",
    "handles",
    "message_renumbered",
    "reads_again",
    "renumbered",
    "renumbering",
    "text_renumbered",
]

#: Bytes that every JSON-RPC message holds: a body without them costs one search.
MARKER = b'"jsonrpc"'

#: MCP methods that read and change nothing: asked again, a live server gives the same
#: answer (until it says the list changed, when it was recorded asking again). Not
#: ``initialize`` (it opens a session), ``tools/call`` (a tool may act), ``completion/complete``
#: nor ``tasks/*`` (their answers move on), nor anything that subscribes or sets.
READS = frozenset(
    {
        "ping",
        "server/discover",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)


def reads_again(content: bytes) -> bool:
    """Whether the request body ``content`` is one JSON-RPC request of a :data:`READS` method,
    whose recorded answer a live server would give again."""
    if MARKER not in content:
        return False
    message = _parsed(content)
    return isinstance(message, dict) and "id" in message and message.get("method") in READS


@dataclasses.dataclass(slots=True)
class Renumbering:
    """Recorded id -> live id, and recorded progress token -> live token (each by its JSON text)."""

    ids: dict[str, Any] = dataclasses.field(default_factory=dict)
    tokens: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.ids or self.tokens)

    def learn(self, recorded: Any, sent: Any) -> None:
        """Add what differs between a recorded request message and the live one (batches by position)."""
        if isinstance(recorded, list) and isinstance(sent, list):
            for was, now in zip(recorded, sent, strict=False):
                self.learn(was, now)
            return
        if not (isinstance(recorded, dict) and isinstance(sent, dict)) or "method" not in sent:
            return
        if "id" in recorded and "id" in sent and recorded["id"] != sent["id"]:
            self.ids[json.dumps(recorded["id"])] = sent["id"]
        was, now = _progress_token(recorded), _progress_token(sent)
        if was is not None and now is not None and was != now:
            self.tokens[json.dumps(was)] = now


def _progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def handles(message: Any) -> tuple[str, ...]:
    """How the server's messages refer to the client request ``message``: its id (answers)
    and its progress token (progress notifications); empty for anything but a request."""
    if not (isinstance(message, dict) and "method" in message and "id" in message):
        return ()
    token = _progress_token(message)
    by_id = "id:" + json.dumps(message["id"])
    return (by_id,) if token is None else (by_id, "token:" + json.dumps(token))


def answers(message: Any) -> str | None:
    """The handle (see :func:`handles`) of the request that the server message ``message``
    answers or reports progress on; ``None`` for any other message (the server's own
    requests and notifications, a batch, text that is not JSON)."""
    if not isinstance(message, dict):
        return None
    if "method" not in message:
        return "id:" + json.dumps(message["id"]) if "id" in message else None
    if message["method"] == "notifications/progress" and isinstance(message.get("params"), dict):
        return "token:" + json.dumps(message["params"].get("progressToken"))
    return None


def _parsed(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def renumbering(recorded: bytes, sent: bytes) -> Renumbering:
    """What to change in the answer recorded for ``recorded`` so that it answers ``sent``."""
    change = Renumbering()
    if MARKER in recorded and MARKER in sent:
        change.learn(_parsed(recorded), _parsed(sent))
    return change


def message_renumbered(message: Any, change: Renumbering) -> Any:
    """``message`` (a parsed JSON-RPC message or batch) with ``change`` applied; the same
    object when nothing in it changes."""
    if isinstance(message, list):
        items = [message_renumbered(item, change) for item in message]
        return items if any(a is not b for a, b in zip(items, message, strict=True)) else message
    if not isinstance(message, dict):
        return message
    if ("result" in message or "error" in message) and "method" not in message:
        key = json.dumps(message.get("id"))
        if key in change.ids:
            return {**message, "id": change.ids[key]}
    elif message.get("method") == "notifications/progress" and isinstance(message.get("params"), dict):
        key = json.dumps(message["params"].get("progressToken"))
        if key in change.tokens:
            return {**message, "params": {**message["params"], "progressToken": change.tokens[key]}}
    return message


def text_renumbered(text: str, change: Renumbering) -> str | None:
    """The JSON text ``text`` with ``change`` applied, written in its own style; ``None``: unchanged."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    new = message_renumbered(value, change)
    if new is value:
        return None
    style = json_style(text, value)
    return dump_json(new, style) if style is not None else json.dumps(new, separators=(",", ":"))


def _chunk_renumbered(chunk: bytes, change: Renumbering, event_stream: bool) -> bytes:
    if MARKER not in chunk:
        return chunk
    if not event_stream:
        text = text_renumbered(chunk.decode("utf-8", "replace"), change)
        return chunk if text is None else text.encode()
    events = decode_events(chunk)
    changed = False
    for event in events:
        data = event.get("data")
        new = message_renumbered(data, change) if isinstance(data, (dict, list)) else data
        if new is not data:
            event["data"], changed = new, True
    return b"".join(encode_event(event) for event in events) if changed else chunk


def renumbered(response: Response, change: Renumbering) -> Response:
    """``response`` (a JSON body or an event stream of JSON-RPC messages) answering the live ids."""
    if not change or MARKER not in response.content:
        return response
    if response.is_event_stream:
        chunks = [_chunk_renumbered(chunk, change, True) for chunk in response.chunks]
    else:  # one JSON document, however it was chunked
        chunks = [_chunk_renumbered(response.content, change, False)]
        if chunks[0] == response.content:
            return response
        timing = response.timing
        if timing is not None and len(timing.chunks) != 1:  # one chunk now: arrived with the last
            timing = type(timing)(timing.headers, timing.chunks[-1:])
        return dataclasses.replace(response, chunks=chunks, timing=timing)
    return dataclasses.replace(response, chunks=chunks)

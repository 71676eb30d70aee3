"""The structure of an answer, without its text: what ``RecordMode.verify`` compares.

A live answer never has the recorded text (the model words it anew, ids and timestamps
change), so verify compares what code depends on instead: the status, the content type,
the JSON shape (every key, recursively; the merged shape of a list's elements), for a
stream the event types in order with their data shapes, the tool calls (names and argument
keys) and the finish reasons. Runs of the same event type collapse into one, so a longer
or shorter answer (more or fewer text deltas) is no drift; a ``null`` matches any type,
since providers send ``null`` for an optional value they have none of.

A websocket session (realtime APIs) or an MCP session over stdio is compared the same way:
the server's messages are its events, typed by their ``type`` (OpenAI Realtime) or their
one key (Gemini Live), its close (``close 1000``) or dropped connection the last. A JSON-RPC
message (MCP) is typed by its method, an answer by the method of the request it answers
(``tools/list result``): its result is compared by structure, never by value.

Pure: a :class:`Response` in, a :class:`Shape` out, and :func:`differences` as lines a
person reads (``choices[].message: new field 'audio'``).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from ..cassettes.models import Request, Response
from ..cassettes.sse import parse_events
from ..cassettes.wsframes import WebSocketSession, frame_json

__all__ = ["SEVERITIES", "Shape", "differences", "json_shape", "severity_of", "shape_of"]

#: Keys whose string value says why an answer ended: OpenAI, Anthropic, Gemini.
_FINISH_KEYS = ("finish_reason", "stop_reason", "finishReason")
_SHOWN_EVENTS = 12

#: The kinds of difference, worst first: what breaks code that reads the answer before what
#: it can ignore. A summary of drift groups by these (see :func:`severity_of`).
SEVERITIES = (
    "status changed",
    "type changed",
    "removed field",
    "removed event",
    "new event",
    "events reordered",
    "tool calls changed",
    "finish reason changed",
    "new field",
    "not recorded",
    "other",
)


@dataclass(frozen=True)
class Shape:
    """What :func:`differences` compares; ``body`` is a :func:`json_shape` (``None``: not JSON)."""

    status: int
    content_type: str
    body: Any = None
    #: A stream's events: ``(type, merged data shape)``, runs of one type collapsed.
    events: tuple[tuple[str, Any], ...] | None = None
    tool_calls: tuple[tuple[str, tuple[str, ...]], ...] = ()
    finish: tuple[str, ...] = ()


def json_shape(value: Any) -> Any:
    """A JSON value's shape: a dict of key shapes, a one-item list of the merged element
    shape (``[]`` for an empty list), or a scalar's type name."""
    if isinstance(value, dict):
        return {str(key): json_shape(item) for key, item in value.items()}
    if isinstance(value, list):
        merged: Any = None
        for item in value:
            merged = _merge(merged, json_shape(item))
        return [] if merged is None else [merged]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def _merge(a: Any, b: Any) -> Any:
    if a is None or a == "null":
        return b
    if b == "null":
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        return {
            key: _merge(a.get(key), b.get(key)) if key in a and key in b else a.get(key, b.get(key))
            for key in {**a, **b}
        }
    if isinstance(a, list) and isinstance(b, list):
        return [_merge(a[0] if a else None, b[0] if b else None)] if a or b else []
    return a


def _event_type(event: dict[str, Any]) -> str:
    data = event.get("data")
    if isinstance(event.get("event"), str):
        return str(event["event"])
    if isinstance(data, dict):
        for key in ("type", "object"):
            if isinstance(data.get(key), str):
                return str(data[key])
        return "data"
    if isinstance(data, str):
        return data if data.strip() == "[DONE]" else "data (text)"
    return "comment" if "comment" in event else "event"


def _run(runs: list[tuple[str, Any]], kind: str, shape: Any) -> None:
    if runs and runs[-1][0] == kind:
        runs[-1] = (kind, _merge(runs[-1][1], shape))
    else:
        runs.append((kind, shape))


def _request_methods(message: Any, into: dict[str, str]) -> None:
    """The method of each JSON-RPC request in ``message`` (a batch: each), by its id's JSON."""
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and isinstance(item.get("method"), str) and "id" in item:
            into[json.dumps(item["id"])] = item["method"]


def _jsonrpc(data: Any, methods: dict[str, str]) -> tuple[str, Any] | None:
    """A JSON-RPC message's type (its method; an answer: ``<method> result``/``error``) and
    its shape without the id; ``None`` for anything else."""
    if not isinstance(data, dict) or "jsonrpc" not in data:
        return None
    shape = json_shape({key: value for key, value in data.items() if key != "id"})
    if isinstance(data.get("method"), str):
        return data["method"], shape
    answer = "error" if "error" in data else "result"
    method = methods.get(json.dumps(data.get("id")))
    return (f"{method} {answer}" if method else answer), shape


def _events(text: str, methods: dict[str, str]) -> tuple[tuple[str, Any], ...]:
    runs: list[tuple[str, Any]] = []
    for event in parse_events(text):
        data = event.get("data")
        if (typed := _jsonrpc(data, methods)) is not None:
            _run(runs, *typed)
            continue
        _run(runs, _event_type(event), json_shape(data) if isinstance(data, (dict, list)) else None)
    return tuple(runs)


def _message_type(document: Any) -> str:
    if isinstance(document, dict):
        if isinstance(document.get("type"), str):  # OpenAI Realtime
            return str(document["type"])
        return next(iter(document), "{}")  # Gemini Live: {"serverContent": ...}
    return "array"


def _session_events(session: WebSocketSession) -> tuple[tuple[str, Any], ...]:
    """What the server sent in a session, as events: see the module's documentation."""
    methods: dict[str, str] = {}
    runs: list[tuple[str, Any]] = []
    for frame in session.frames:
        document = frame_json(frame)
        if frame.sender == "client":
            _request_methods(document, methods)
        elif frame.kind == "close":
            _run(runs, f"close {frame.code}", None)
        elif frame.kind == "eof":
            _run(runs, "connection dropped", None)
        elif document is None:
            _run(runs, f"{frame.kind} message", None)
        elif (typed := _jsonrpc(document, methods)) is not None:
            _run(runs, *typed)
        else:
            _run(runs, _message_type(document), json_shape(document))
    return tuple(runs)


def _arg_keys(arguments: Any) -> tuple[str, ...]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return ("(arguments not JSON)",)
    return tuple(sorted(str(key) for key in arguments)) if isinstance(arguments, dict) else ()


def _walk(value: Any, calls: list[tuple[str, Any]], finish: list[str]) -> None:
    """Tool calls and finish reasons of a complete JSON answer (or one streamed chunk)."""
    if isinstance(value, list):
        for item in value:
            _walk(item, calls, finish)
        return
    if not isinstance(value, dict):
        return
    kind, name = value.get("type"), value.get("name")
    if kind == "tool_use" and isinstance(name, str):  # Anthropic
        calls.append((name, value.get("input")))
    elif kind == "function_call" and isinstance(name, str):  # OpenAI Responses
        calls.append((name, value.get("arguments")))
    for key, tool in (("function", "arguments"), ("functionCall", "args")):  # OpenAI chat, Gemini
        inner = value.get(key)
        if isinstance(inner, dict) and isinstance(inner.get("name"), str) and "index" not in value:
            calls.append((inner["name"], inner.get(tool)))
    for key in _FINISH_KEYS:
        if isinstance(value.get(key), str):
            finish.append(value[key])
    if value.get("object") == "response" and isinstance(value.get("status"), str):
        finish.append(value["status"])
    for key, item in value.items():
        if key not in ("input", "arguments", "args"):
            _walk(item, calls, finish)


def _stream_calls(datas: list[Any], calls: list[tuple[str, Any]], finish: list[str]) -> None:
    """Tool calls of a stream, put together from their pieces; finish reasons on the way."""
    pieces: dict[tuple[Any, ...], list[Any]] = {}  # (where, index) -> [name, arguments so far]
    for data in datas:
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "response.completed":  # OpenAI Responses: the whole answer at the end
            _walk(data.get("response"), calls, finish)
            continue
        if isinstance(kind, str) and kind.startswith("response."):
            continue
        if kind == "content_block_start" and isinstance(block := data.get("content_block"), dict):
            if block.get("type") == "tool_use":
                pieces[("anthropic", data.get("index"))] = [block.get("name"), ""]
            continue
        delta = data.get("delta")
        if kind == "content_block_delta" and isinstance(delta, dict):
            if (piece := pieces.get(("anthropic", data.get("index")))) is not None:
                piece[1] += str(delta.get("partial_json", ""))
            continue
        for choice in data.get("choices") or []:  # OpenAI chat: tool calls by index
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for call in (delta or {}).get("tool_calls") or []:
                function = call.get("function") or {}
                piece = pieces.setdefault(("openai", choice.get("index"), call.get("index")), [None, ""])
                piece[0] = function.get("name") or piece[0]
                piece[1] += str(function.get("arguments") or "")
        _walk(data, calls, finish)  # Gemini sends each function call whole; finish reasons
    calls.extend((str(name), arguments) for name, arguments in pieces.values() if name)


def shape_of(response: Response, request: Request | None = None) -> Shape:
    """The structure of ``response`` (see the module's documentation); ``request``, the one
    it answers, names the method of a JSON-RPC answer."""
    body: Any = None
    events = None
    calls: list[tuple[str, Any]] = []
    finish: list[str] = []
    methods: dict[str, str] = {}
    if request is not None and b'"jsonrpc"' in request.content:
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            _request_methods(json.loads(request.content), methods)
    if response.websocket is not None:
        events = _session_events(response.websocket)
    elif response.is_event_stream:
        try:
            text = response.content.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        events = _events(text, methods)
        _stream_calls([event.get("data") for event in parse_events(text)], calls, finish)
    elif response.websocket is None and response.content:
        try:
            value = json.loads(response.content)
        except (ValueError, UnicodeDecodeError):
            pass
        else:
            body = json_shape(value)
            _walk(value, calls, finish)
    return Shape(
        status=response.status,
        content_type=response.content_type,
        body=body,
        events=events,
        tool_calls=tuple((name, _arg_keys(arguments)) for name, arguments in calls),
        finish=tuple(dict.fromkeys(finish)),
    )


def _type_name(shape: Any) -> str:
    if isinstance(shape, dict):
        return "object"
    if isinstance(shape, list):
        return "array"
    return str(shape)


def _json_differences(recorded: Any, live: Any, where: str, out: list[str]) -> None:
    at = where or "the body"
    if recorded is None or live is None or recorded == live:
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in recorded:
            if key not in live:
                out.append(f"{at}: field {key!r} is gone")
        for key in live:
            if key not in recorded:
                out.append(f"{at}: new field {key!r}")
            else:
                _json_differences(recorded[key], live[key], f"{where}.{key}" if where else key, out)
    elif isinstance(recorded, list) and isinstance(live, list):
        if recorded and live:
            _json_differences(recorded[0], live[0], f"{where}[]", out)
    elif "null" not in (recorded, live):
        out.append(f"{at}: was {_type_name(recorded)}, now {_type_name(live)}")


def _listed(events: tuple[tuple[str, Any], ...]) -> str:
    names = [name for name, _ in events]
    more = f", ... ({len(names)} in all)" if len(names) > _SHOWN_EVENTS else ""
    return ", ".join(names[:_SHOWN_EVENTS]) + more


def _calls(calls: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    return ", ".join(f"{name}({', '.join(keys)})" for name, keys in calls) or "none"


def differences(recorded: Shape, live: Shape) -> list[str]:
    """What changed from ``recorded`` to ``live``, one line each; ``[]`` for the same structure."""
    out: list[str] = []
    if recorded.status != live.status:
        out.append(f"status: was {recorded.status}, now {live.status}")
    if recorded.content_type != live.content_type:
        out.append(
            f"content type: was {recorded.content_type or 'none'!r}, now {live.content_type or 'none'!r}"
        )
    if recorded.events is not None and live.events is not None:
        if [name for name, _ in recorded.events] != [name for name, _ in live.events]:
            out.append(f"stream events: were {_listed(recorded.events)}; now {_listed(live.events)}")
        else:
            for (name, was), (_, now) in zip(recorded.events, live.events, strict=True):
                _json_differences(was, now, f"event {name}", out)
    else:
        _json_differences(recorded.body, live.body, "", out)
    if recorded.tool_calls != live.tool_calls:
        out.append(f"tool calls: were {_calls(recorded.tool_calls)}; now {_calls(live.tool_calls)}")
    if recorded.finish != live.finish:
        was, now = ", ".join(recorded.finish) or "none", ", ".join(live.finish) or "none"
        out.append(f"finish reason: was {was}, now {now}")
    return out


def _names(listed: str) -> set[str]:
    return {name.strip() for name in listed.split(", ") if name.strip() and not name.startswith("...")}


def severity_of(line: str) -> str:
    """Which of :data:`SEVERITIES` one line of :func:`differences` is: read back here, beside
    the code that writes the lines, so that a reworded line and its kind change together."""
    if line.startswith("status: "):
        return "status changed"
    if line.startswith("content type: "):
        return "type changed"
    if line.startswith("stream events: were "):
        were, _, now = line[len("stream events: were ") :].partition("; now ")
        before, after = _names(were), _names(now)
        if after - before:
            return "new event"
        return "removed event" if before - after else "events reordered"
    if line.startswith("tool calls: "):
        return "tool calls changed"
    if line.startswith("finish reason: "):
        return "finish reason changed"
    if line.startswith("not recorded"):
        return "not recorded"
    _, _, what = line.rpartition(": ")
    if what.startswith("new field "):
        return "new field"
    if what.startswith("field ") and what.endswith(" is gone"):
        return "removed field"
    if what.startswith("was ") and ", now " in what:
        return "type changed"
    return "other"

"""A real HTTP server on 127.0.0.1 that speaks the OpenAI, Anthropic and Gemini wire formats.

Recording tests must capture genuine HTTP traffic produced by the real SDKs, so they need a
real socket on the other end: mocking our own interceptor would only test the mock. This server
answers deterministically (computed from the request plus a per-server request counter ``n``),
so that two identical requests still get distinguishable answers, which is what replay tests
need to tell recorded interactions apart.

Stdlib only on purpose: the server must not depend on the HTTP stacks we are testing.

Switches, chosen by the first words of the last user message, for every provider:

* ``FAIL <code>``: answer with that status, the provider's error body shape and ``retry-after: 0``.
* ``FLAKY <code>``: the same, the first time this server gets that exact request body; then
  answer normally (a rate limit an SDK's retry gets past).
* ``SLOW``: streams wait ``chunk_delay`` (or 0.05 s) between events.
* ``PARALLEL``: a model turn that calls a tool calls every tool offered, in one turn (parallel
  tool calls; non-streamed answers of chat completions, Responses, Anthropic and Gemini).

Tools: when the request offers tools and the last message is a user turn (not a tool result),
the model calls the first tool, with arguments derived from its schema and the user text; a
tool-result turn gets a text answer, so agent loops terminate.

``prompt_cache=True``: answers report cached prompt tokens as the providers do (OpenAI's
``cached_tokens``, Anthropic's ``cache_read_input_tokens``/``cache_creation_input_tokens``,
Gemini's ``cachedContentTokenCount``): the words of the longest byte prefix the request's body
shares with the previous request to the same endpoint, as a provider's prefix cache would.

``hold_stream``: set it to a ``threading.Event`` and every stream sends its first event, then
waits (max ``HOLD_TIMEOUT``) for the event, so a test can prove nothing buffers the stream.

Non-streamed JSON is gzip-compressed when the client accepts it (SDKs always do), since the
recorder must cope with compressed bodies; streams never are. ``/raw/*`` endpoints serve
non-provider edge cases (plain text, binary, echo, non-ASCII JSON, Set-Cookie).

Usage::

    with FakeProvider() as fake:
        client = openai.OpenAI(api_key="test-key", base_url=fake.openai_base_url)
        ...
        assert fake.requests[0].json()["model"] == "gpt-4o-mini"
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import itertools
import json
import re
import secrets
import socket
import statistics
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeProvider", "ReceivedRequest", "Reply", "paced_as_sent"]

HOLD_TIMEOUT = 10.0
"""Longest a stream waits for ``hold_stream``, so a broken test fails instead of hanging."""
SLOW_DELAY = 0.05
"""Delay between stream events for ``SLOW`` requests when no ``chunk_delay`` was given."""
CREATED = 1_700_000_000
"""Fixed ``created`` timestamp: answers must be byte-for-byte reproducible."""
EMBEDDING_SIZE = 8


def paced_as_sent(offsets: Sequence[float], delay: float) -> bool:
    """Whether recorded event times ``offsets`` keep a stream sent ``chunk_delay=delay`` apart:
    in order, and the median gap at least ``delay`` less 10 ms. The median, since a reader a busy
    machine holds back finds the next event already waiting (one gap short, the one before it
    long), as any client would."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(offsets)]
    return min(gaps) >= 0 and statistics.median(gaps) >= delay - 0.01


# --------------------------------------------------------------------------------------------
# Public data types
# --------------------------------------------------------------------------------------------


@dataclass
class ReceivedRequest:
    """One request exactly as it reached the socket, so tests can assert on the wire traffic."""

    method: str
    path: str
    """Path including the query string."""
    headers: dict[str, str]
    """Header names are lower-cased; repeated headers are joined with ``", "``."""
    body: bytes
    """The complete body, with chunked transfer framing removed."""

    def json(self) -> Any:
        """Decode the body as JSON (raises ``ValueError`` if it is not JSON)."""
        return json.loads(self.body)


@dataclass
class Reply:
    """What a route answers: either a complete body, or a list of SSE events to stream."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    events: list[bytes] | None = None
    """When set, the reply is streamed as chunked ``text/event-stream``, one event per chunk."""
    slow: bool = False
    """Stream with at least ``SLOW_DELAY`` between events (``SLOW`` requests)."""


@dataclass(frozen=True)
class Call:
    """Everything a route needs: the request, its sequence number and the path parameters."""

    request: ReceivedRequest
    n: int
    params: dict[str, str]
    query: dict[str, list[str]]
    repeat: bool = False
    """This server got the same request body before (see ``FLAKY``)."""
    cached_tokens: int | None = None
    """With ``prompt_cache``: the tokens of the prefix shared with the previous request."""


@dataclass(frozen=True)
class Answer:
    """What the fake model 'says'; each provider renders it in its own wire format."""

    n: int
    model: str
    text: str
    """The user text being echoed (also used as the value of string tool arguments)."""
    tool_name: str | None
    tool_args: dict[str, Any]
    input_tokens: int
    more_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    """``PARALLEL``: the calls after the first, in the same turn."""
    cached_tokens: int | None = None

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Every tool call of the turn, the first one first."""
        return [(self.tool_name, self.tool_args), *self.more_calls] if self.tool_name else []

    @property
    def content(self) -> str:
        return f"echo {self.n}: {self.text}"

    @property
    def arguments(self) -> str:
        return json.dumps(self.tool_args, separators=(",", ":"), ensure_ascii=False)

    @property
    def output_tokens(self) -> int:
        return count_tokens(self.arguments if self.tool_name else self.content)


# --------------------------------------------------------------------------------------------
# Helpers shared by the providers
# --------------------------------------------------------------------------------------------


def dumps(payload: Any) -> bytes:
    """Compact UTF-8 JSON, like the real APIs send (non-ASCII stays readable)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def json_reply(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body=dumps(payload), headers=dict(headers or {}))


def fail_reply(status: int, payload: Any) -> Reply:
    """Error reply with ``retry-after: 0`` so SDK retries (if enabled) do not slow tests down.

    The openai and anthropic SDKs treat ``retry-after: 0`` as "no advice" and back off 0.5 s or
    more, so we also send ``retry-after-ms: 1`` (which they prefer, as the real APIs send it).
    """
    return json_reply(payload, status, {"retry-after": "0", "retry-after-ms": "1"})


def count_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: one token per whitespace-separated word."""
    return max(1, len(text.split()))


def fail_status(text: str, repeat: bool = False) -> int | None:
    """The status requested by a ``FAIL <code>`` message (4xx or 5xx only), or by a ``FLAKY
    <code>`` one sent for the first time (not ``repeat``), else ``None``."""
    match = re.match(r"\s*(FAIL|FLAKY) ([45]\d\d)\b", text)
    if match is None or (match.group(1) == "FLAKY" and repeat):
        return None
    return int(match.group(2))


def is_slow(text: str) -> bool:
    return text.split()[:1] == ["SLOW"]


def word_pieces(text: str) -> list[str]:
    """Split into word chunks that concatenate back to exactly ``text``."""
    return re.findall(r"\s*\S+\s*", text) or [text]


def json_pieces(text: str, size: int = 12) -> list[str]:
    """Split a JSON string into fragments, the way providers stream tool-call arguments."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def fake_arguments(schema: Any, text: str) -> dict[str, Any]:
    """Arguments that satisfy a JSON-schema-ish ``properties`` map, derived from the user text."""
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    by_type: dict[str, Any] = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
    args: dict[str, Any] = {}
    for name, prop in properties.items():
        kind = str(prop.get("type", "string")).lower() if isinstance(prop, dict) else "string"
        args[name] = by_type.get(kind, text)
    return args


def parallel(answer: Answer, call: Call, tools: list[tuple[str, Any]]) -> Answer:
    """``answer`` calling every tool of ``tools`` (name, schema) when the text asks ``PARALLEL``,
    with the cached tokens of ``call``."""
    more: tuple[tuple[str, dict[str, Any]], ...] = ()
    if answer.tool_name and answer.text.split()[:1] == ["PARALLEL"]:
        more = tuple((name, fake_arguments(schema, answer.text)) for name, schema in tools[1:])
    return replace(answer, more_calls=more, cached_tokens=call.cached_tokens)


def text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of parts/blocks with ``text`` fields.

    Anthropic ``tool_result`` blocks nest their own content, which is included too.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts: list[str] = []
    for part in content:
        if isinstance(part, dict):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif "content" in part:
                texts.append(text_of(part["content"]))
    return " ".join(t for t in texts if t)


# --------------------------------------------------------------------------------------------
# OpenAI
# --------------------------------------------------------------------------------------------

_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def openai_error(status: int) -> Reply:
    kind, code = _OPENAI_ERRORS.get(status, ("server_error", None))
    message = f"Fake provider failure {status} (requested by FAIL {status})."
    return fail_reply(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})


def openai_answer(call: Call, body: dict[str, Any]) -> Answer:
    messages = body.get("messages") or []
    user_texts = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    text = user_texts[-1] if user_texts else ""
    tools = body.get("tools") or []
    tool_name, args = None, {}
    if tools and messages and messages[-1].get("role") == "user":
        function = tools[0].get("function") or tools[0]
        tool_name = function.get("name", "tool")
        args = fake_arguments(function.get("parameters"), text)
    prompt = " ".join(text_of(m.get("content")) for m in messages)
    answer = Answer(call.n, body.get("model", ""), text, tool_name, args, count_tokens(prompt))
    functions = [tool.get("function") or tool for tool in tools]
    return parallel(answer, call, [(f.get("name", "tool"), f.get("parameters")) for f in functions])


def openai_usage(answer: Answer) -> dict[str, Any]:
    total = answer.input_tokens + answer.output_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": answer.input_tokens,
        "completion_tokens": answer.output_tokens,
        "total_tokens": total,
    }
    if answer.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": answer.cached_tokens}
    return usage


def openai_tool_call(answer: Answer) -> dict[str, Any]:
    function = {"name": answer.tool_name, "arguments": answer.arguments}
    return {"id": f"call_fake_{answer.n}", "type": "function", "function": function}


def openai_completion(answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.content, "refusal": None}
    if answer.tool_name:
        more = [
            {
                "id": f"call_fake_{answer.n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": dumps(args).decode()},
            }
            for i, (name, args) in enumerate(answer.more_calls, 1)
        ]
        message.update(content=None, tool_calls=[openai_tool_call(answer), *more])
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": "tool_calls" if answer.tool_name else "stop",
    }
    return {
        "id": f"chatcmpl-fake-{answer.n}",
        "object": "chat.completion",
        "created": CREATED,
        "model": answer.model,
        "choices": [choice],
        "usage": openai_usage(answer),
        "system_fingerprint": "fp_fake",
    }


def openai_deltas(answer: Answer) -> list[dict[str, Any]]:
    """The ``delta`` objects of a streamed completion, in order (without the finish chunk)."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    if not answer.tool_name:
        return deltas + [{"content": piece} for piece in word_pieces(answer.content)]
    first = openai_tool_call(answer)
    first["function"] = {"name": answer.tool_name, "arguments": ""}
    deltas[0]["content"] = None
    deltas.append({"tool_calls": [{"index": 0, **first}]})
    for piece in json_pieces(answer.arguments):
        deltas.append({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    return deltas


def openai_chunks(answer: Answer, include_usage: bool) -> list[bytes]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        payload = {
            "id": f"chatcmpl-fake-{answer.n}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": answer.model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
            **({"usage": None} if include_usage else {}),
            **extra,
        }
        return b"data: " + dumps(payload) + b"\n\n"

    def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}

    events = [chunk([choice(delta)]) for delta in openai_deltas(answer)]
    events.append(chunk([choice({}, "tool_calls" if answer.tool_name else "stop")]))
    if include_usage:
        events.append(chunk([], usage=openai_usage(answer)))
    return [*events, b"data: [DONE]\n\n"]


def openai_chat(call: Call) -> Reply:
    body = call.request.json()
    answer = openai_answer(call, body)
    if (status := fail_status(answer.text, call.repeat)) is not None:
        return openai_error(status)
    if not body.get("stream"):
        return json_reply(openai_completion(answer))
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    return Reply(events=openai_chunks(answer, include_usage), slow=is_slow(answer.text))


def responses_answer(call: Call, body: dict[str, Any]) -> Answer:
    """The Responses API's ``input`` (a string, or items) read like a chat conversation."""
    items = body.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])
    users = [text_of(i.get("content")) for i in items if i.get("role") == "user"]
    text = users[-1] if users else ""
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    tool_name, args = None, {}
    if tools and items and items[-1].get("role") == "user":
        tool_name, args = tools[0].get("name", "tool"), fake_arguments(tools[0].get("parameters"), text)
    prompt = " ".join([str(body.get("instructions") or "")] + [text_of(i.get("content")) for i in items])
    answer = Answer(call.n, body.get("model", ""), text, tool_name, args, count_tokens(prompt))
    return parallel(answer, call, [(t.get("name", "tool"), t.get("parameters")) for t in tools])


def openai_responses(call: Call) -> Reply:
    """``POST /v1/responses``, not streamed: a text message, or the turn's function calls."""
    body = call.request.json()
    answer = responses_answer(call, body)
    if (status := fail_status(answer.text, call.repeat)) is not None:
        return openai_error(status)
    output: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "id": f"fc_fake_{answer.n}_{i}",
            "call_id": f"call_fake_{answer.n}_{i}",
            "name": name,
            "arguments": dumps(args).decode(),
            "status": "completed",
        }
        for i, (name, args) in enumerate(answer.calls)
    ]
    if not output:
        text = {"type": "output_text", "text": answer.content, "annotations": []}
        output = [
            {
                "type": "message",
                "id": f"msg_fake_{answer.n}",
                "status": "completed",
                "role": "assistant",
                "content": [text],
            }
        ]
    usage = {
        "input_tokens": answer.input_tokens,
        "input_tokens_details": {"cached_tokens": answer.cached_tokens or 0},
        "output_tokens": answer.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": answer.input_tokens + answer.output_tokens,
    }
    return json_reply(
        {
            "id": f"resp_fake_{answer.n}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed",
            "model": answer.model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "usage": usage,
        }
    )


def fake_embedding(text: str) -> list[float]:
    """Values are multiples of 1/128, exact in float32, so base64 and float formats agree."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(byte - 128) / 128 for byte in digest[:EMBEDDING_SIZE]]


def openai_embeddings(call: Call) -> Reply:
    body = call.request.json()
    inputs = body.get("input", "")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    texts = [item if isinstance(item, str) else json.dumps(item) for item in inputs]
    if texts and (status := fail_status(texts[-1])) is not None:
        return openai_error(status)
    data = []
    for index, text in enumerate(texts):
        vector: Any = fake_embedding(text)
        if body.get("encoding_format") == "base64":
            vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": vector})
    tokens = sum(count_tokens(t) for t in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return json_reply({"object": "list", "data": data, "model": body.get("model", ""), "usage": usage})


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------

_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_error(status: int, n: int) -> Reply:
    error = {
        "type": _ANTHROPIC_ERRORS.get(status, "api_error"),
        "message": f"Fake provider failure {status} (requested by FAIL {status}).",
    }
    return fail_reply(status, {"type": "error", "error": error, "request_id": f"req_fake_{n}"})


def is_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def anthropic_answer(call: Call, body: dict[str, Any]) -> Answer:
    messages = body.get("messages") or []
    user_texts = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    text = user_texts[-1] if user_texts else ""
    tools = body.get("tools") or []
    last = messages[-1] if messages else {}
    tool_name, args = None, {}
    # A user turn carrying tool results continues the agent loop, so answer it with text.
    if tools and last.get("role") == "user" and not is_tool_result(last.get("content")):
        tool_name = tools[0].get("name", "tool")
        args = fake_arguments(tools[0].get("input_schema"), text)
    prompt = " ".join([text_of(body.get("system"))] + [text_of(m.get("content")) for m in messages])
    answer = Answer(call.n, body.get("model", ""), text, tool_name, args, count_tokens(prompt))
    return parallel(answer, call, [(t.get("name", "tool"), t.get("input_schema")) for t in tools])


def anthropic_block(answer: Answer) -> dict[str, Any]:
    if answer.tool_name:
        return {
            "type": "tool_use",
            "id": f"toolu_fake_{answer.n}",
            "name": answer.tool_name,
            "input": answer.tool_args,
        }
    return {"type": "text", "text": answer.content}


def anthropic_message(answer: Answer) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{answer.n}",
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": [anthropic_block(answer)]
        + [
            {"type": "tool_use", "id": f"toolu_fake_{answer.n}_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(answer.more_calls, 1)
        ],
        "stop_reason": "tool_use" if answer.tool_name else "end_turn",
        "stop_sequence": None,
        "usage": anthropic_usage(answer),
    }


def anthropic_usage(answer: Answer) -> dict[str, int]:
    usage = {"input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens}
    if answer.cached_tokens is not None:
        read = answer.cached_tokens
        usage.update(
            cache_read_input_tokens=read, cache_creation_input_tokens=max(0, answer.input_tokens - read)
        )
    return usage


def anthropic_deltas(answer: Answer) -> list[dict[str, Any]]:
    if answer.tool_name:
        return [{"type": "input_json_delta", "partial_json": p} for p in json_pieces(answer.arguments)]
    return [{"type": "text_delta", "text": piece} for piece in word_pieces(answer.content)]


def anthropic_events(answer: Answer) -> list[bytes]:
    def event(name: str, payload: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: ".encode() + dumps({"type": name, **payload}) + b"\n\n"

    message = anthropic_message(answer)
    start_block = anthropic_block(answer)
    start_block.update({"input": {}} if answer.tool_name else {"text": ""})
    message.update(content=[], stop_reason=None)
    message["usage"] = {"input_tokens": answer.input_tokens, "output_tokens": 1}
    final = anthropic_message(answer)
    return [
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": start_block}),
        event("ping", {}),
        *(event("content_block_delta", {"index": 0, "delta": d}) for d in anthropic_deltas(answer)),
        event("content_block_stop", {"index": 0}),
        event(
            "message_delta",
            {
                "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": answer.output_tokens},
            },
        ),
        event("message_stop", {}),
    ]


def anthropic_messages(call: Call) -> Reply:
    body = call.request.json()
    answer = anthropic_answer(call, body)
    if (status := fail_status(answer.text, call.repeat)) is not None:
        return anthropic_error(status, call.n)
    if not body.get("stream"):
        return json_reply(anthropic_message(answer))
    return Reply(events=anthropic_events(answer), slow=is_slow(answer.text))


# --------------------------------------------------------------------------------------------
# Gemini (generativelanguage v1beta, as used by google-genai)
# --------------------------------------------------------------------------------------------

_GEMINI_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def gemini_error(status: int) -> Reply:
    error = {
        "code": status,
        "message": f"Fake provider failure {status} (requested by FAIL {status}).",
        "status": _GEMINI_STATUSES.get(status, "UNKNOWN"),
    }
    return fail_reply(status, {"error": error})


def gemini_answer(call: Call, body: dict[str, Any]) -> Answer:
    contents = body.get("contents") or []
    user_parts = [c.get("parts") for c in contents if c.get("role", "user") == "user"]
    text = text_of(user_parts[-1]) if user_parts else ""
    declarations = [d for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]
    last_parts = (contents[-1].get("parts") or []) if contents else []
    answers_a_call = any("functionResponse" in part for part in last_parts)
    tool_name, args = None, {}
    if declarations and contents and contents[-1].get("role", "user") == "user" and not answers_a_call:
        tool_name = declarations[0].get("name", "tool")
        # google-genai sends `parameters_json_schema` in snake case, the REST docs camel case.
        keys = ("parameters", "parametersJsonSchema", "parameters_json_schema")
        schema = next((declarations[0][key] for key in keys if key in declarations[0]), None)
        args = fake_arguments(schema, text)
    prompt = " ".join(text_of(c.get("parts")) for c in contents)
    answer = Answer(call.n, call.params["model"], text, tool_name, args, count_tokens(prompt))
    keys = ("parameters", "parametersJsonSchema", "parameters_json_schema")
    named = [(d.get("name", "tool"), next((d[k] for k in keys if k in d), None)) for d in declarations]
    return parallel(answer, call, named)


def gemini_response(answer: Answer, parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    usage = {"promptTokenCount": answer.input_tokens, "totalTokenCount": answer.input_tokens}
    if final:
        candidate["finishReason"] = "STOP"
        usage["candidatesTokenCount"] = answer.output_tokens
        usage["totalTokenCount"] += answer.output_tokens
    if answer.cached_tokens is not None:
        usage["cachedContentTokenCount"] = answer.cached_tokens
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": answer.model,
        "responseId": f"resp_fake_{answer.n}",
    }


def gemini_parts(answer: Answer) -> list[list[dict[str, Any]]]:
    """The parts of each streamed chunk (a single chunk for a function call)."""
    if answer.tool_name:
        return [[{"functionCall": {"name": answer.tool_name, "args": answer.tool_args}}]]
    return [[{"text": piece}] for piece in word_pieces(answer.content)]


def gemini_generate(call: Call) -> Reply:
    answer = gemini_answer(call, call.request.json())
    if (status := fail_status(answer.text)) is not None:
        return gemini_error(status)
    parts = gemini_parts(answer)[0] if answer.tool_name else [{"text": answer.content}]
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in answer.more_calls]
    return json_reply(gemini_response(answer, parts, final=True))


def gemini_stream(call: Call) -> Reply:
    answer = gemini_answer(call, call.request.json())
    if (status := fail_status(answer.text)) is not None:
        return gemini_error(status)
    pieces = gemini_parts(answer)
    chunks = [gemini_response(answer, parts, i == len(pieces) - 1) for i, parts in enumerate(pieces)]
    if call.query.get("alt") != ["sse"]:
        # Without alt=sse the real API streams one JSON array; a complete array is equivalent.
        return json_reply(chunks)
    # The real API terminates SSE lines with CRLF; google-genai accepts both.
    return Reply(events=[b"data: " + dumps(c) + b"\r\n\r\n" for c in chunks], slow=is_slow(answer.text))


# --------------------------------------------------------------------------------------------
# Raw endpoints for edge cases of the recorder (not provider-shaped)
# --------------------------------------------------------------------------------------------


def raw_text(call: Call) -> Reply:
    body = b"line one\nline two: not JSON {\nline three\n"
    return Reply(body=body, content_type="text/plain; charset=utf-8")


def raw_binary(call: Call) -> Reply:
    return Reply(body=bytes(range(256)), content_type="application/octet-stream")


def raw_echo(call: Call) -> Reply:
    content_type = call.request.headers.get("content-type", "application/octet-stream")
    return Reply(body=call.request.body, content_type=content_type)


def raw_json(call: Call) -> Reply:
    return json_reply({"greeting": "héllo wörld", "city": "Zürich", "emoji": "🎞️", "n": call.n})


def raw_set_cookie(call: Call) -> Reply:
    cookie = f"session=fake-{call.n}; Path=/; HttpOnly"
    return json_reply({"ok": True}, headers={"Set-Cookie": cookie})


def not_found(call: Call) -> Reply:
    message = f"Unknown path {call.request.method} {call.request.path}"
    return json_reply({"error": {"message": message, "type": "not_found", "code": 404}}, 404)


Route = Callable[[Call], Reply]

# (method, path pattern, handler, is a provider endpoint i.e. sends provider cookies)
ROUTES: list[tuple[str, re.Pattern[str], Route, bool]] = [
    ("POST", re.compile(r"/v1/chat/completions"), openai_chat, True),
    ("POST", re.compile(r"/v1/embeddings"), openai_embeddings, True),
    ("POST", re.compile(r"/v1/responses"), openai_responses, True),
    ("POST", re.compile(r"/v1/messages"), anthropic_messages, True),
    ("POST", re.compile(r"/v1beta/models/(?P<model>[^/:]+):generateContent"), gemini_generate, True),
    ("POST", re.compile(r"/v1beta/models/(?P<model>[^/:]+):streamGenerateContent"), gemini_stream, True),
    ("GET", re.compile(r"/raw/text"), raw_text, False),
    ("GET", re.compile(r"/raw/binary"), raw_binary, False),
    ("POST", re.compile(r"/raw/echo"), raw_echo, False),
    ("GET", re.compile(r"/raw/json"), raw_json, False),
    ("GET", re.compile(r"/raw/set-cookie"), raw_set_cookie, False),
]


def route(method: str, path: str) -> tuple[Route, dict[str, str], bool]:
    for route_method, pattern, handler, is_provider in ROUTES:
        match = pattern.fullmatch(path)
        if match and route_method == method:
            return handler, match.groupdict(), is_provider
    return not_found, {}, False


def volatile_headers(n: int, is_provider: bool) -> dict[str, str]:
    """Headers that differ on every call, like the real providers', so tests can check the
    recorder does not store them (``Date`` is added by ``http.server`` itself)."""
    headers = {
        "x-request-id": f"req_{secrets.token_hex(12)}",
        "request-id": f"req_{secrets.token_hex(12)}",
        "openai-processing-ms": str(secrets.randbelow(900) + 100),
        "x-ratelimit-remaining-requests": str(10_000 - n),
    }
    if is_provider:
        headers["set-cookie"] = f"__cf_bm={secrets.token_urlsafe(24)}; path=/; HttpOnly; Secure"
    return headers


# --------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    """Reads the whole request, asks the route for a ``Reply`` and writes it (whole or streamed)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms ACK stalls
    server: _Server

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        """Silence: tests must not see server chatter on stderr."""

    def _handle(self) -> None:
        request = ReceivedRequest(
            method=self.command,
            path=self.path,
            headers=self._header_dict(),
            body=self._read_body(),
        )
        provider = self.server.provider
        n = provider._record(request)
        repeat = any(earlier.body == request.body for earlier in provider.requests[: n - 1])
        url = urlsplit(self.path)
        handler, params, is_provider = route(self.command, url.path)
        cached = provider._cached_tokens(request, n) if provider.prompt_cache and is_provider else None
        call = Call(request, n, params, parse_qs(url.query), repeat, cached)
        try:
            reply = handler(call)
        except ValueError as exc:  # includes malformed JSON bodies
            reply = json_reply({"error": {"message": f"Bad request: {exc}", "type": "invalid_request"}}, 400)
        except Exception as exc:
            reply = json_reply({"error": {"message": f"Fake provider crashed: {exc!r}"}}, 500)
        headers = {**volatile_headers(n, is_provider), **reply.headers}
        if reply.events is None:
            self._send_whole(reply, headers)
        else:
            self._send_stream(reply, headers)

    def _header_dict(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return headers

    def _read_body(self) -> bytes:
        """Read the whole body (Content-Length or chunked) so keep-alive stays in sync."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()  # CRLF after each chunk
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def _accepts_gzip(self) -> bool:
        codings = self.headers.get("Accept-Encoding", "").lower().split(",")
        return "gzip" in {coding.split(";")[0].strip() for coding in codings}

    def _send_whole(self, reply: Reply, headers: dict[str, str]) -> None:
        body = reply.body
        if reply.content_type.startswith("application/json") and self._accepts_gzip():
            body = gzip.compress(body, mtime=0)
            headers["Content-Encoding"] = "gzip"
        self.send_response(reply.status)
        self._send_headers({**headers, "Content-Type": reply.content_type, "Content-Length": str(len(body))})
        self.wfile.write(body)
        self.wfile.flush()

    def _send_stream(self, reply: Reply, headers: dict[str, str]) -> None:
        """Chunked SSE, flushed per event; never compressed, so each event leaves at once."""
        provider = self.server.provider
        delay = (provider.chunk_delay or SLOW_DELAY) if reply.slow else provider.chunk_delay
        self.send_response(reply.status)
        self._send_headers(
            {
                **headers,
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
            }
        )
        try:
            for index, event in enumerate(reply.events or []):
                if index == 1:
                    provider._wait_for_hold()
                if index and delay:
                    time.sleep(delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client went away mid-stream: nothing left to say
            self.close_connection = True

    def _send_headers(self, headers: dict[str, str]) -> None:
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()


class _Server(ThreadingHTTPServer):
    """Tracks every open connection so ``stop()`` can close keep-alive sockets and join threads."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False  # we join our own threads, with a timeout, in FakeProvider.stop()

    def __init__(self, provider: FakeProvider) -> None:
        self.provider = provider
        self.live: dict[socket.socket, threading.Thread] = {}
        self.live_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name=f"fake-provider-conn-{client_address[1]}",
            daemon=self.daemon_threads,
        )
        with self.live_lock:
            self.live[request] = thread
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self.live_lock:
            self.live.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connection errors are expected when clients hang up; stay quiet on stderr."""

    def close_connections(self) -> list[threading.Thread]:
        """Unblock handler threads waiting on idle keep-alive sockets; return them for joining."""
        with self.live_lock:
            live = list(self.live.items())
        for sock, _ in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return [thread for _, thread in live]


class FakeProvider:
    """Context manager: starts on 127.0.0.1 port 0 in a daemon thread, stops and joins on exit."""

    def __init__(self, *, chunk_delay: float = 0.0, prompt_cache: bool = False) -> None:
        self.chunk_delay = chunk_delay
        self.prompt_cache = prompt_cache
        self.requests: list[ReceivedRequest] = []
        self.hold_stream: threading.Event | None = None
        """When set, streams send their first event, then wait (max 10 s) for this event."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeProvider is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    def start(self) -> FakeProvider:
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-provider",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        for handler_thread in server.close_connections():
            handler_thread.join(timeout=5)
        thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, request: ReceivedRequest) -> int:
        """Append under the lock and return the request's number ``n`` (1-based)."""
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def _cached_tokens(self, request: ReceivedRequest, n: int) -> int:
        """The words of the byte prefix ``request`` shares with the previous one to its path."""
        path = urlsplit(request.path).path
        earlier = [r for r in self.requests[: n - 1] if urlsplit(r.path).path == path]
        if not earlier:
            return 0
        previous, body, size = earlier[-1].body, request.body, 0
        while size < min(len(previous), len(body)) and previous[size] == body[size]:
            size += 1
        return len(body[:size].split())

    def _wait_for_hold(self) -> None:
        """Block a stream after its first event until the test releases it (or we stop)."""
        hold = self.hold_stream
        deadline = time.monotonic() + HOLD_TIMEOUT
        while hold is not None and not hold.wait(0.02):
            if self._stopping.is_set() or time.monotonic() > deadline:
                return

"""A recorded interaction as a conversation: who said what, which tools were called, the answer.

Providers shape the same conversation differently (OpenAI chat and responses, Anthropic
messages, Gemini contents, Bedrock Converse), and a streamed answer arrives as hundreds of
deltas (SSE events, or AWS event-stream frames for Bedrock); a person
reviewing a cassette wants neither. Turns are plain ``(role, text)`` pairs; anything this
module does not recognise is shown as its JSON, so nothing recorded is hidden.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..cassettes.bodyfiles import described
from ..cassettes.eventstream import Frame, chunk_event, decode_frames
from ..cassettes.eventstream import is_event_stream as is_aws_event_stream
from ..cassettes.models import Request, Response
from ..cassettes.sse import parse_events

__all__ = ["Turn", "answer_turns", "request_turns"]


@dataclass(frozen=True)
class Turn:
    role: str
    """``system``, ``user``, ``assistant``, ``thinking``, ``tool call``, ``tool result``, ``tools``..."""
    text: str
    image: str = ""
    """An image part's ``data:`` URI, for views that can show it; ``""`` else (an image given by
    URL too: a report opened offline must not fetch anything)."""


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _body(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _call(name: Any, arguments: Any, call_id: Any = None) -> Turn:
    suffix = f" [{call_id}]" if call_id else ""
    return Turn("tool call", f"{name}({_json(arguments) if arguments not in (None, '') else ''}){suffix}")


def _text(value: Any) -> str:
    """Text given as a string or as a list of parts (Anthropic tool results, Mistral thinking)."""
    if isinstance(value, list):
        return "".join(turn.text for part in value for turn in _block_turns("", part))
    return _json(value) if value is not None else ""


# Blocks: Anthropic content blocks, OpenAI content parts, Gemini parts, Converse blocks -------


def _converse_block(block: dict[str, Any]) -> list[Turn] | None:
    """A Bedrock Converse block, named by its only key as Gemini parts are; ``None`` for others."""
    if isinstance(use := block.get("toolUse"), dict):
        return [_call(use.get("name"), use.get("input"), use.get("toolUseId"))]
    if isinstance(result := block.get("toolResult"), dict):
        return [Turn("tool result", f"[{result.get('toolUseId', '')}] {_text(result.get('content'))}")]
    if isinstance(reasoning := block.get("reasoningContent"), dict):
        readable = reasoning.get("reasoningText")
        text = readable.get("text") if isinstance(readable, dict) else None
        return [Turn("thinking", str(text))] if text else []  # redactedContent: nothing to read
    return None


def _block_turns(role: str, block: Any) -> list[Turn]:
    if isinstance(block, str):
        return [Turn(role, block)]
    if not isinstance(block, dict):
        return [Turn(role, _json(block))]
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and "text" in block):
        return [Turn("thinking" if block.get("thought") else role, str(block.get("text", "")))]
    if kind in ("thinking", "redacted_thinking", "reasoning"):
        text = _text(block.get("thinking") or block.get("data") or block.get("summary"))
        return [Turn("thinking", text)] if text else []  # encrypted reasoning: nothing to read
    if kind in ("tool_use", "server_tool_use"):
        return [_call(block.get("name"), block.get("input"), block.get("id"))]
    if kind == "tool_result" or (kind and kind.endswith("_tool_result")):
        return [Turn("tool result", f"[{block.get('tool_use_id', '')}] {_text(block.get('content'))}")]
    if kind in ("function_call",):  # OpenAI responses output/input item
        return [_call(block.get("name"), block.get("arguments"), block.get("call_id"))]
    if kind == "function_call_output":
        return [Turn("tool result", f"[{block.get('call_id', '')}] {_json(block.get('output'))}")]
    if (converse := _converse_block(block)) is not None:
        return converse
    if "functionCall" in block:  # Gemini
        call = block["functionCall"]
        return [_call(call.get("name"), call.get("args"), call.get("id"))]
    if "functionResponse" in block:
        response = block["functionResponse"]
        return [Turn("tool result", f"{response.get('name')}: {_json(response.get('response'))}")]
    if kind == "message" and "content" in block:  # OpenAI responses output item
        return _content_turns(str(block.get("role", role)), block["content"])
    label = f"{role} ({kind or next(iter(block), 'part')})"
    return [Turn(label, _json(block), _image(block))]  # images, code, ...


def _image(block: dict[str, Any]) -> str:
    """The image a block holds, as a ``data:`` URI: OpenAI ``image_url``/``input_image``,
    Anthropic ``image`` (base64 source), Gemini ``inlineData``; ``""`` for any other block."""
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and url.startswith("data:image/"):
        return url
    source, inline = block.get("source"), block.get("inlineData") or block.get("inline_data")
    if isinstance(source, dict) and source.get("type") == "base64":
        kind, data = source.get("media_type"), source.get("data")
    elif isinstance(inline, dict):
        kind, data = inline.get("mimeType") or inline.get("mime_type"), inline.get("data")
    else:
        return ""
    ok = isinstance(kind, str) and kind.startswith("image/") and isinstance(data, str)
    return f"data:{kind};base64,{data}" if ok else ""


def _content_turns(role: str, content: Any) -> list[Turn]:
    if content is None:
        return []
    if isinstance(content, list):
        return [turn for block in content for turn in _block_turns(role, block)]
    return _block_turns(role, content)


def _message_turns(message: dict[str, Any]) -> list[Turn]:
    """One OpenAI chat / Anthropic message / Gemini content."""
    role = str(message.get("role", "user"))
    if role == "model":
        role = "assistant"
    if role == "tool":
        return [Turn("tool result", f"[{message.get('tool_call_id', '')}] {_json(message.get('content'))}")]
    turns = _content_turns(role, message.get("content", message.get("parts")))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        turns.append(_call(function.get("name"), function.get("arguments"), call.get("id")))
    return turns


def _tools(tools: Any) -> list[Turn]:
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
        converse = tool.get("toolSpec") or tool.get("systemTool")  # Bedrock toolConfig.tools
        tool = converse if isinstance(converse, dict) else tool
        if isinstance(declarations, list):
            names.extend(str(d.get("name")) for d in declarations if isinstance(d, dict))
        else:
            function = tool.get("function")
            named = tool.get("name") or (function.get("name") if isinstance(function, dict) else None)
            # Gemini names built-in tools by their only key: {"codeExecution": {}}
            names.append(str(named or tool.get("type") or next(iter(tool), "?")))
    return [Turn("tools", ", ".join(names))] if names else []


def request_turns(request: Request) -> list[Turn]:
    """The conversation a request sends; its body as JSON when it is no known chat shape."""
    body = _body(request.content) if request.content else None
    if not isinstance(body, dict):
        return [Turn("body", request.content.decode("utf-8", "replace"))] if request.content else []
    turns: list[Turn] = []
    system = body.get("system", body.get("instructions", body.get("systemInstruction")))
    if system:
        turns.extend(_content_turns("system", system.get("parts") if isinstance(system, dict) else system))
    config = body.get("toolConfig")
    turns.extend(_tools(body.get("tools") or (config.get("tools") if isinstance(config, dict) else None)))
    messages = body.get("messages", body.get("contents"))
    if isinstance(messages, list):
        for message in messages:
            turns.extend(
                _message_turns(message) if isinstance(message, dict) else [Turn("user", _json(message))]
            )
    elif "input" in body:  # OpenAI responses
        items = body["input"]
        for item in items if isinstance(items, list) else [items]:
            if isinstance(item, dict) and "role" in item:
                turns.extend(_message_turns(item))
            else:
                turns.extend(_block_turns("user", item))
    elif not turns:
        turns.append(Turn("body", _json(body)))
    return turns


# Answers ------------------------------------------------------------------------------------


def _answer_of_body(body: Any) -> list[Turn]:
    if not isinstance(body, dict):
        return [Turn("body", _json(body))] if body is not None else []
    if isinstance(body.get("choices"), list):  # OpenAI chat
        return [t for choice in body["choices"] for t in _message_turns(choice.get("message") or {})]
    if body.get("type") == "message" and "content" in body:  # Anthropic
        return _content_turns("assistant", body["content"])
    if isinstance(body.get("output"), list):  # OpenAI responses
        return [t for item in body["output"] for t in _block_turns("assistant", item)]
    output = body.get("output")
    if isinstance(output, dict) and isinstance(output.get("message"), dict):  # Bedrock Converse
        return _message_turns(output["message"])
    if isinstance(body.get("candidates"), list):  # Gemini
        return [t for c in body["candidates"] for t in _message_turns(c.get("content") or {"role": "model"})]
    if "error" in body:
        return [Turn("error", _json(body["error"]))]
    return [Turn("body", _json(body))]


def _merge(turns: Iterable[Turn]) -> list[Turn]:
    """Consecutive pieces of the same role into one turn: a stream's deltas into its answer."""
    merged: list[Turn] = []
    for turn in turns:
        if merged and merged[-1].role == turn.role and turn.role in ("assistant", "thinking"):
            merged[-1] = Turn(turn.role, merged[-1].text + turn.text)
        elif turn.text or turn.role not in ("assistant", "thinking"):
            merged.append(turn)
    return merged


def _anthropic_stream(events: list[Any]) -> list[Turn]:
    blocks: dict[int, dict[str, Any]] = {}
    for data in events:
        kind = data.get("type")
        if kind == "content_block_start":
            blocks[data["index"]] = dict(data.get("content_block") or {})
            blocks[data["index"]].setdefault("_json", "")
        elif kind == "content_block_delta":
            block = blocks.setdefault(data["index"], {"type": "text", "_json": ""})
            delta = data.get("delta") or {}
            for field, into in (("text", "text"), ("thinking", "thinking")):
                if field in delta:
                    block[into] = block.get(into, "") + delta[field]
            if "partial_json" in delta:
                block["_json"] += delta["partial_json"]
        elif kind == "error":
            return [Turn("error", _json(data.get("error")))]
    for block in blocks.values():
        if block["_json"]:
            block["input"] = _body(block["_json"].encode()) or block["_json"]
        del block["_json"]
    return _content_turns("assistant", [blocks[i] for i in sorted(blocks)])


def _openai_chat_stream(events: list[Any]) -> list[Turn]:
    text: list[Turn] = []
    calls: dict[int, dict[str, str]] = {}
    for data in events:
        for choice in data.get("choices") or ():
            delta = choice.get("delta") or {}
            for field in ("reasoning_content", "reasoning", "content"):
                role = "assistant" if field == "content" else "thinking"
                if delta.get(field):  # text, or a list of parts (Mistral)
                    text.extend(_content_turns(role, delta[field]))
            for call in delta.get("tool_calls") or ():
                into = calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                into["id"] = call.get("id") or into["id"]
                function = call.get("function") or {}
                into["name"] += function.get("name") or ""
                into["arguments"] += function.get("arguments") or ""
    return [*_merge(text), *(_call(c["name"], c["arguments"], c["id"]) for _, c in sorted(calls.items()))]


def _events_answer(events: list[Any]) -> list[Turn]:
    """A provider's stream events: SSE ``data``, or those a Bedrock ``chunk`` frame carries."""
    data = [e for e in events if isinstance(e, dict)]
    if any(str(e.get("type", "")).startswith(("message_start", "content_block")) for e in data):
        return _anthropic_stream(data)
    if any("choices" in e for e in data):
        return _openai_chat_stream(data)
    completed = [e["response"] for e in data if e.get("type") == "response.completed" and "response" in e]
    if completed:  # OpenAI responses: the last event holds the whole answer
        return _answer_of_body(completed[-1])
    if any("candidates" in e for e in data):  # Gemini: each event a piece of the answer
        return _merge(t for e in data for t in _answer_of_body(e))
    return [Turn("events", f"{len(events)} events (--raw shows them)")]


# Bedrock streams: AWS event-stream frames ---------------------------------------------------


def _converse_delta(block: dict[str, Any], delta: dict[str, Any]) -> None:
    """Grow a converse-stream block into the shape a non-streaming Converse answer gives it,
    so that both render through the same block code."""
    if isinstance(delta.get("text"), str):
        block["text"] = block.get("text", "") + delta["text"]
    if isinstance(tool := delta.get("toolUse"), dict):  # input arrives as pieces of a JSON text
        use = block.setdefault("toolUse", {})
        use["input"] = use.get("input", "") + str(tool.get("input", ""))
    if isinstance(delta.get("toolResult"), list):  # server tools (code interpreter)
        result = block.setdefault("toolResult", {})
        result["content"] = [*result.get("content", ()), *delta["toolResult"]]
    if isinstance(reasoning := delta.get("reasoningContent"), dict):
        into = block.setdefault("reasoningContent", {})
        if isinstance(reasoning.get("text"), str):
            readable = into.setdefault("reasoningText", {})
            readable["text"] = readable.get("text", "") + reasoning["text"]


def _converse_stream(frames: list[Frame]) -> list[Turn]:
    """converse-stream: ``contentBlockStart``/``contentBlockDelta`` frames, by block index."""
    blocks: dict[Any, dict[str, Any]] = {}
    for frame in frames:
        event, data = (frame.get("headers") or {}).get(":event-type"), frame.get("json")
        if not isinstance(data, dict) or "contentBlockIndex" not in data:
            continue  # messageStart, messageStop, metadata: the summary line has the usage
        if event == "contentBlockStart" and isinstance(data.get("start"), dict):
            block = blocks.setdefault(data["contentBlockIndex"], {})
            block.update(
                {kind: dict(start) for kind, start in data["start"].items() if isinstance(start, dict)}
            )
        elif event == "contentBlockDelta" and isinstance(data.get("delta"), dict):
            _converse_delta(blocks.setdefault(data["contentBlockIndex"], {}), data["delta"])
    for block in blocks.values():
        use = block.get("toolUse")
        if isinstance(use, dict) and isinstance(use.get("input"), str):
            use["input"] = _body(use["input"].encode()) or use["input"]
    return _merge(_content_turns("assistant", [blocks[i] for i in sorted(blocks)]))


def _frame_error(frame: Frame) -> Turn | None:
    """An exception frame (throttling, validation...) sent instead of the rest of the answer."""
    headers = frame.get("headers") or {}
    if headers.get(":message-type") not in ("exception", "error"):
        return None
    name = headers.get(":exception-type") or headers.get(":error-code") or "error"
    detail = frame.get("json", frame.get("text")) or headers.get(":error-message", "")
    return Turn("error", f"{name}: {_json(detail)}")


def _frames_answer(content: bytes) -> list[Turn]:
    frames = decode_frames(content)
    if frames is None:
        return [Turn("events", f"{len(content)} bytes that are not whole AWS event-stream frames")]
    errors = [turn for turn in map(_frame_error, frames) if turn]
    chunks = [chunk_event(f) for f in frames if (f.get("headers") or {}).get(":event-type") == "chunk"]
    return [*(_events_answer(chunks) if chunks else _converse_stream(frames)), *errors]


def answer_turns(response: Response) -> list[Turn]:
    """The answer as a person reads it; a streamed answer reassembled from its events. A body
    file beside the cassette is named, never read (it may be hundreds of megabytes)."""
    if (body_file := described(response.chunks)) is not None:
        return [Turn("body", body_file)]
    if response.is_event_stream:
        events = parse_events(response.content.decode("utf-8", "replace"))
        return _events_answer([event.get("data") for event in events])
    if is_aws_event_stream(response.content_type):
        return _frames_answer(response.content)
    if not response.content:
        return []
    body = _body(response.content)
    if body is None:
        return [Turn("body", response.content.decode("utf-8", "replace"))]
    return _merge(_answer_of_body(body))

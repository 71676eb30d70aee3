"""Gemini ``generateContent`` (a ``GenerateContentResponse`` body) and
``streamGenerateContent?alt=sse`` (one response per event, each holding the next part).

Thinking is a part with ``thought: true``; a function call comes whole in one part, as Gemini
streams it; the last event carries the ``finishReason`` and the full ``usageMetadata``.
Gemini has no refusal field either: a refusal is its text.
"""

from __future__ import annotations

from typing import Any

from ..cassettes.models import Response
from ..cassettes.sse import Event
from .rendering import Turn, json_response, sse_response, text_pieces

__all__ = ["render_gemini"]

_FINISH = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "refusal": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def _usage(turn: Turn, final: bool) -> dict[str, Any]:
    usage = turn.usage
    prompt = [{"modality": "TEXT", "tokenCount": usage.input}]
    if not final:
        return {
            "promptTokenCount": usage.input,
            "totalTokenCount": usage.input,
            "promptTokensDetails": prompt,
        }
    written = usage.output - usage.thinking
    metadata: dict[str, Any] = {
        "promptTokenCount": usage.input,
        "candidatesTokenCount": written,
        "totalTokenCount": usage.total,
        "promptTokensDetails": prompt,
        "candidatesTokensDetails": [{"modality": "TEXT", "tokenCount": written}],
    }
    if usage.thinking:
        metadata["thoughtsTokenCount"] = usage.thinking
    if usage.cached:
        metadata["cachedContentTokenCount"] = usage.cached
    return metadata


def _parts(turn: Turn, stream: bool) -> list[dict[str, Any]]:
    """The parts of the answer; for a stream, its text cut into the pieces each event carries."""
    reply = turn.reply

    def pieces(text: str) -> list[str]:
        return text_pieces(text) if stream else [text] if text else []

    parts: list[dict[str, Any]] = [{"text": piece, "thought": True} for piece in pieces(reply.thinking or "")]
    text = "".join(part for part in (reply.text, reply.refusal) if part)
    parts += [{"text": piece} for piece in pieces(text)]
    parts += [{"functionCall": {"name": call.name, "args": dict(call.args)}} for call in reply.tool_calls]
    return parts or [{"text": ""}]


def _candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    return candidate


def _body(turn: Turn, parts: list[dict[str, Any]], final: bool) -> dict[str, Any]:
    finish = _FINISH.get(turn.finish, turn.finish) if final else None
    return {
        "candidates": [_candidate(parts, finish)],
        "usageMetadata": _usage(turn, final),
        "modelVersion": turn.model,
        "responseId": turn.make_id("", length=22),
    }


def _events(turn: Turn) -> list[Event]:
    parts = _parts(turn, stream=True)
    last = len(parts) - 1
    return [{"data": _body(turn, [part], n == last)} for n, part in enumerate(parts)]


def render_gemini(turn: Turn) -> Response:
    if turn.stream:
        return sse_response(turn, _events(turn))
    return json_response(
        turn, _body(turn, _parts(turn, stream=False), final=True), "application/json; charset=UTF-8"
    )

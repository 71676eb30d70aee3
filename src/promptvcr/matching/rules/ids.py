"""Tool-call ids: the link between a call and its result, not a value the answer depends on."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..parts import KeyParts

__all__ = ["call_placeholders", "tool_call_ids"]

#: Fields that name a tool call wherever they appear: OpenAI chat, Groq, Mistral and Cohere
#: (``tool_call_id``), Anthropic (``tool_use_id``), OpenAI Responses (``call_id``).
_LINK_FIELDS = frozenset({"tool_call_id", "tool_use_id", "call_id"})
#: Containers whose ``id`` is a tool-call id: OpenAI-style ``tool_calls[]``, Gemini's
#: ``functionCall``/``functionResponse``.
_ID_CONTAINERS = frozenset(
    {"tool_calls", "functionCall", "functionResponse", "function_call", "function_response"}
)
#: Anthropic content blocks whose ``id`` is a tool-call id.
_ID_BLOCK_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_CONVERSATION_FIELDS = ("messages", "contents", "input")
#: Bytes without any of these hold no tool-call id: the rule then costs one search.
_MARKERS = re.compile(
    rb"tool_call|tool_use|call_id|functionCall|functionResponse|function_call|function_response"
)


def _replace_ids(value: Any, names: dict[str, str], parent: str) -> Any:
    if isinstance(value, list):
        return [_replace_ids(v, names, parent) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    is_call = parent in _ID_CONTAINERS or value.get("type") in _ID_BLOCK_TYPES
    for key, item in value.items():
        if isinstance(item, str) and (key in _LINK_FIELDS or (key == "id" and is_call)):
            out[key] = names.setdefault(item, f"<tool-call-{len(names) + 1}>")
        else:
            out[key] = _replace_ids(item, names, key)
    return out


def call_placeholders(body: Any) -> dict[str, str]:
    """Each tool-call id of ``body`` -> the placeholder :func:`tool_call_ids` puts in its place,
    for a message that names the call as it was sent (``call_abc``, not ``<tool-call-2>``)."""
    names: dict[str, str] = {}
    if isinstance(body, dict):
        for k, v in body.items():  # as the rule walks them: the same numbering
            if k in _CONVERSATION_FIELDS:
                _replace_ids(v, names, k)
    return names


def tool_call_ids(parts: KeyParts) -> KeyParts:
    """Tool-call ids replaced by ``<tool-call-N>`` in order of first appearance.

    Real case: pydantic-ai invents ``pyd_ai_<hex>`` ids for Gemini function calls and Groq
    tool calls on every run (36 corpus cassettes, e.g. ``google-gla/test_google_model_
    thinking_part_from_other_model``), and frameworks invent ``call_…`` ids when they
    replay a conversation. Replacing each id consistently keeps which result answers which
    call, which is all the id means to the model; server-side ids such as
    ``previous_response_id`` are not touched.
    """
    body = parts.body
    if parts.raw and not _MARKERS.search(parts.raw):
        return parts
    if not isinstance(body, dict) or not any(isinstance(body.get(f), list) for f in _CONVERSATION_FIELDS):
        return parts
    names: dict[str, str] = {}
    new = {k: (_replace_ids(v, names, k) if k in _CONVERSATION_FIELDS else v) for k, v in body.items()}
    return replace(parts, body=new) if names else parts

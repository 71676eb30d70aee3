"""Rules about text: the same words in different Unicode or content forms are the same prompt."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from typing import Any

from ..parts import KeyParts
from ._walk import map_strings

__all__ = ["nfc_text", "single_text_part"]


def _nfc(text: str) -> str:
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def nfc_text(parts: KeyParts) -> KeyParts:
    """Text in the body compared in Unicode NFC form.

    Real case: "café" typed on macOS arrives decomposed (NFD, ``e`` + U+0301) and the
    same word pasted from a web page composed (NFC); the corpus's bodies were even
    re-normalized by its serializer (see corpus README: NFKC). Both mean one prompt.
    """
    raw = parts.raw
    if raw and raw.isascii() and b"\\u" not in raw and b"%" not in raw:
        return parts  # ASCII bytes, no \\u or %-escape: every string is ASCII, already NFC
    body = map_strings(parts.body, _nfc)
    return parts if body is parts.body else replace(parts, body=body)


def _as_string(content: Any) -> Any:
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].get("type") == "text"
        and set(content[0]) == {"type", "text"}
        and isinstance(content[0]["text"], str)
    ):
        return content[0]["text"]
    return content


def single_text_part(parts: KeyParts) -> KeyParts:
    """A message whose content is one plain text part is the same as that text as a string.

    OpenAI (chat ``messages[].content``) and Anthropic (``messages[].content``, ``system``)
    document both forms as equal. Real case: pydantic-ai sends Anthropic ``content`` as a
    list of one text block while LangChain sends a string for the same prompt; a part with
    anything else (``cache_control``, an image) keeps its list form.
    """
    body = parts.body
    if not isinstance(body, dict) or (parts.raw and b'"text"' not in parts.raw):
        return parts
    changed: dict[str, Any] = {}
    messages = body.get("messages")
    if isinstance(messages, list):
        new_messages = [
            {**m, "content": _as_string(m["content"])}
            if isinstance(m, dict) and isinstance(m.get("content"), list)
            else m
            for m in messages
        ]
        if any(a is not b and a != b for a, b in zip(new_messages, messages, strict=True)):
            changed["messages"] = new_messages
    if isinstance(body.get("system"), list):
        system = _as_string(body["system"])
        if system is not body["system"]:
            changed["system"] = system
    return replace(parts, body={**body, **changed}) if changed else parts

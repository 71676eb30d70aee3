"""The text the record path searches for credentials, built without writing the bodies again.

Redaction (:mod:`.redaction`) decides most interactions with a few searches over one text
that holds every key and string of the stored interaction as ``json.dumps(...,
ensure_ascii=False)`` writes it: credential field names, URL queries, secret clues, the
values to mask. Writing the whole interaction as JSON for that re-encodes its bodies, the
largest part of it, although a JSON body received compact *is* that text already: a body
stored as ``json`` alone (no ``style``, no ``raw``: :func:`.jsonstyle.json_style` found it
compact and free of ``\\uXXXX`` escapes) was received as exactly
``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``.

So :func:`scan_text` writes the interaction compactly without those bodies and appends each
body's received text, one document per line. Every key and string is in it, escaped as in
``json.dumps``; only the spaces after ``,`` and ``:`` and the place of the bodies differ.
The searches find the same things in it: a secret clue, a credential field name (``"api_key"``),
a ``?name=`` pair, ``"base64"`` and ``\\u`` each lie inside one string (or number), never across
the JSON punctuation or the line breaks between documents; and a value searched for as a
substring (an environment credential, a value to mask) that is in some string of the
interaction is in the string's JSON text, so is found here too. A hit only sends the
interaction down the field-by-field walk, which decides as before
(``tests/cassettes/test_scan_text.py`` compares both texts over varied interactions).
"""

from __future__ import annotations

import json
from typing import Any

from ..cassettes.jsonstyle import c_encoder
from ..cassettes.models import Interaction

__all__ = ["json_text", "scan_text"]


def json_text(data: Any) -> str | None:
    """``json.dumps(data, ensure_ascii=False)``; ``None`` for data JSON cannot hold (a large body)."""
    try:
        return json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


_PARTS = ("request", "response")


def _received_text(stored: dict[str, Any], content: bytes) -> str | None:
    """The body's received text when it is the compact JSON of its stored ``json``."""
    if "style" in stored or "raw" in stored:
        return None
    try:
        return content.decode("utf-8")  # UTF-16 or -32 JSON is stored without a style too
    except UnicodeDecodeError:
        return None


def scan_text(data: dict[str, Any], interaction: Interaction) -> str | None:
    """A text for the credential searches of ``data``, the stored form of ``interaction`` (see
    above): ``json.dumps(data, ensure_ascii=False)`` when no body was received as its compact
    JSON; ``None`` for data JSON cannot hold (a large body)."""
    encoder = c_encoder(",", ":", False)
    if encoder is None:  # pragma: no cover - CPython has it
        return json_text(data)
    item = dict(data)
    texts: list[str] = []
    for part in _PARTS:
        stored = data.get(part)
        if not isinstance(stored, dict) or "json" not in stored:
            continue
        if part == "request":
            content = interaction.request.content
        else:
            chunks = interaction.response.chunks
            content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        text = _received_text(stored, content)
        if text is None:
            return json_text(data)
        texts.append(text)
        item[part] = {key: value for key, value in stored.items() if key != "json"}
    if not texts:
        return json_text(data)
    try:
        written = "".join(encoder(item, 0))
    except (TypeError, ValueError, RecursionError):  # a large body, or data JSON cannot hold
        return None
    return "\n".join((written, *texts))

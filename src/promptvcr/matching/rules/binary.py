"""Large base64 payloads (images, audio, PDFs) keyed by what they decode to."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import replace

from ..parts import KeyParts
from ._walk import map_strings

__all__ = ["BASE64_MIN_LENGTH", "base64_digests"]

#: Shorter strings are left alone: no prompt text of this length is one unbroken base64 run.
BASE64_MIN_LENGTH = 256
_BASE64 = re.compile(r"[A-Za-z0-9+/\-_]+={0,2}")
_LONG_RUN = re.compile(rb"[A-Za-z0-9+/_\\-]{%d}" % BASE64_MIN_LENGTH)
_DATA_URL = re.compile(r"data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*);base64,", re.IGNORECASE)


def _decoded(payload: str) -> bytes | None:
    if not _BASE64.fullmatch(payload):
        return None
    text = payload.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _digest(text: str) -> str:
    if len(text) < BASE64_MIN_LENGTH:
        return text
    prefix = ""
    match = _DATA_URL.match(text)
    if match is not None:
        prefix, text = text[: match.end()], text[match.end() :]
    decoded = _decoded(text)
    if decoded is None:
        return prefix + text if prefix else text
    return f"{prefix}<base64 sha256:{hashlib.sha256(decoded).hexdigest()}>"


def base64_digests(parts: KeyParts) -> KeyParts:
    """Base64 strings of 256+ characters replaced by the digest of their decoded bytes.

    Real case: the corpus sends the same PDF as standard base64 to Gemini (``inlineData.
    data``) and in a ``data:application/pdf;base64,`` URL to OpenAI
    (``test_multimodal_tool_return_matrix``); clients differ in padding and in URL-safe vs
    standard alphabets. The digest is the same for every spelling of the same bytes and
    different for any other bytes, and it keeps megabytes out of the key.
    """
    if parts.raw and not _LONG_RUN.search(parts.raw):
        return parts  # no run of base64 characters long enough anywhere in the bytes
    body = map_strings(parts.body, _digest)
    return parts if body is parts.body else replace(parts, body=body)

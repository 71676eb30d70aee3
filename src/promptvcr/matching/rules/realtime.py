"""Realtime (websocket) client events: fields that change from run to run by design.

A client frame is matched against the recorded one as a parsed document after these rules.
OpenAI Realtime events carry an optional ``event_id`` the SDK or the application generates;
a long base64 payload (``input_audio_buffer.append``'s ``audio``, Gemini's ``data``) is
compared by its digest so that a miss names it without printing it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .redacted import without_credentials

__all__ = ["VOLATILE_FRAME_FIELDS", "normalize_frame"]

#: Top-level fields of a client event dropped before comparing it.
VOLATILE_FRAME_FIELDS = frozenset({"event_id"})
_LONG = 256


def _digested(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _digested(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_digested(item) for item in value]
    if isinstance(value, str) and len(value) > _LONG:
        return f"<{len(value)} characters, sha256:{hashlib.sha256(value.encode()).hexdigest()[:16]}>"
    return value


def normalize_frame(document: Any, volatile: frozenset[str] = VOLATILE_FRAME_FIELDS) -> Any:
    """``document`` without its volatile top-level fields and its credentials (redacted from
    the recording, see :mod:`.credentials`), long strings as their digests."""
    if isinstance(document, dict):
        document = {key: value for key, value in document.items() if key not in volatile}
    return _digested(without_credentials(document))

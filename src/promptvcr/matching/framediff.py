"""Whether a client frame of a replayed websocket session is the recorded one, and if not, why.

Client frames are matched in order: the ``n``-th message the code sends must be the ``n``-th
the client sent while recording, compared as parsed JSON after
:func:`~.rules.realtime.normalize_frame` and, for a JSON-RPC message (MCP over stdio or a
websocket), without its ``id`` (:func:`~.rules.mcp.without_jsonrpc_id`); text and binary
frames that are not JSON: byte for byte. A difference becomes the message of a
:class:`~promptvcr.CassetteMiss`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..cassettes.wsframes import Frame, frame_json
from ..credentials.printing import safe_text
from .diffs import _walk, describe
from .rules.mcp import without_jsonrpc_id
from .rules.realtime import normalize_frame

__all__ = ["frame_differences", "frame_miss_message"]


def _comparable(frame: Frame) -> Any:
    document = frame_json(frame)
    if document is not None:
        return normalize_frame(without_jsonrpc_id(document))
    if frame.kind == "text":
        return normalize_frame(frame.data.decode("utf-8", "replace"))
    return f"<{len(frame.data)} bytes, sha256:{hashlib.sha256(frame.data).hexdigest()[:16]}>"


def frame_differences(recorded: Frame, sent: Frame) -> list[str]:
    """The differences of ``sent`` from ``recorded``, each a line; empty when they match."""
    if recorded.kind != sent.kind and "close" in (recorded.kind, sent.kind):
        return [f"frame: recorded a {recorded.kind} frame, sent a {sent.kind} frame"]
    if recorded.kind == "close":
        return []
    return [describe(diff) for diff in _walk("", _comparable(recorded), _comparable(sent))]


def frame_miss_message(
    path: Path,
    url: str,
    index: int,
    recorded: Frame | None,
    sent: Frame,
    transport: str = "websocket",
    any_order: bool = False,
) -> str:
    """Why client frame ``index`` (counted from 0) of the session with ``url`` missed.
    ``any_order``: frames match whichever recorded one not yet played they equal (MCP over
    stdio), and ``recorded`` is the nearest of those."""
    what = "matches none of the recorded ones not yet played" if any_order else "is not the recorded one"
    head = f"promptvcr: {transport} {url}: client frame {index + 1} {what} in cassette {path}."
    if recorded is None:
        shown = _comparable(sent)
        return safe_text(
            f"{head}\nThe recorded session ends before it: the code now sends more ({str(shown)[:200]}).\n"
            f"Record it again (PROMPTVCR_RECORD_MODE=rewrite)."
        )
    lines = "\n".join(f"  {line}" for line in frame_differences(recorded, sent))
    nearest = " from the nearest" if any_order else ""
    return safe_text(
        f"{head}\nDifferences{nearest} (recorded -> sent):\n{lines}\n"
        f"Record it again if the change is intended (PROMPTVCR_RECORD_MODE=rewrite)."
    )

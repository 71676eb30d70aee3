"""The message of a miss: which request, which recorded one is nearest, and what differs.

Nothing here runs unless a request misses, so it may be as thorough as it likes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .models import Interaction, Request
from .normalize import KeyParts, Rule, apply_rules, key_parts

__all__ = ["Difference", "differences", "miss_message", "nearest"]

_MISSING = object()
_MAX_SHOWN = 8


@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    recorded: Any
    sent: Any


def _walk(path: str, recorded: Any, sent: Any) -> Iterator[Difference]:
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted({*recorded, *sent}, key=str):
            child = f"{path}.{key}" if path else str(key)
            yield from _walk(child, recorded.get(key, _MISSING), sent.get(key, _MISSING))
    elif isinstance(recorded, (list, tuple)) and isinstance(sent, (list, tuple)):
        for i in range(max(len(recorded), len(sent))):
            left = recorded[i] if i < len(recorded) else _MISSING
            right = sent[i] if i < len(sent) else _MISSING
            yield from _walk(f"{path}[{i}]", left, right)
    elif recorded != sent or type(recorded) is not type(sent):
        yield Difference(path or "body", recorded, sent)


def _apply(request: Request, rules: Sequence[Rule]) -> KeyParts:
    return apply_rules(request, rules)


def differences(recorded: Request, sent: Request, rules: Sequence[Rule]) -> list[Difference]:
    """The fields, by JSON path, in which two requests' keys differ."""
    left, right = _apply(recorded, rules), _apply(sent, rules)
    found = []
    if left.method != right.method:
        found.append(Difference("method", left.method, right.method))
    if left.path != right.path:
        found.append(Difference("path", left.path, right.path))
    if left.query != right.query:
        found.append(Difference("query", dict(left.query), dict(right.query)))
    found.extend(_walk("", left.body, right.body))
    return found


def nearest(
    sent: Request, interactions: Sequence[Interaction], rules: Sequence[Rule]
) -> tuple[int, list[Difference]] | None:
    """The recorded request closest to ``sent``: same endpoint first, then fewest differing fields."""
    best: tuple[tuple[int, int], int, list[Difference]] | None = None
    for position, interaction in enumerate(interactions):
        diffs = differences(interaction.request, sent, rules)
        endpoint_differs = any(d.path in ("method", "path") for d in diffs)
        score = (int(endpoint_differs), len(diffs))
        if best is None or score < best[0]:
            best = (score, position, diffs)
    return None if best is None else (best[1], best[2])


def _show(value: Any, limit: int = 70) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _summary(request: Request) -> str:
    parts = key_parts(request)
    body = parts.body
    if isinstance(body, dict):
        fields = [f"model={body['model']}"] if "model" in body else []
        messages = body.get("messages") or body.get("contents") or body.get("input")
        if isinstance(messages, list) and messages:
            fields.append(f"{len(messages)} messages, last: {_show(messages[-1], 90)}")
        elif messages is not None:
            fields.append(f"input: {_show(messages, 90)}")
        return ", ".join(fields) or _show(body, 100)
    return "(no body)" if body is None else _show(body, 100)


def miss_message(
    *,
    path: Path,
    request: Request,
    interactions: Sequence[Interaction],
    rules: Sequence[Rule],
    file_exists: bool,
    times_recorded: int,
) -> str:
    """The text of a :class:`~promptvcr.CassetteMiss`, for someone reading a failed test."""
    lines: list[str] = []
    if not file_exists:
        lines.append(f"promptvcr: cassette {path} does not exist, so nothing can be replayed from it.")
    elif times_recorded:
        lines.append(
            f"promptvcr: this request was recorded {times_recorded} time(s) in {path}, and every recorded "
            f"answer has already been played; the code sent it once more."
        )
    else:
        lines.append(f"promptvcr: no recorded request in {path} matches this one (record mode: replay).")
    lines.append(f"  request: {request.method} {request.url}")
    lines.append(f"  body:    {_summary(request)}")
    if file_exists and not times_recorded:
        found = nearest(request, interactions, rules)
        if found is None:
            lines.append("The cassette holds no interactions.")
        else:
            position, diffs = found
            recorded = interactions[position].request
            lines.append(f"Nearest recorded request: interactions[{position}] {recorded.method} {recorded.url}")
            lines.append("  differs at (recorded -> sent):")
            lines.extend(f"    {d.path}: {_show(d.recorded)} -> {_show(d.sent)}" for d in diffs[:_MAX_SHOWN])
            if len(diffs) > _MAX_SHOWN:
                lines.append(f"    ... and {len(diffs) - _MAX_SHOWN} more: " + ", ".join(d.path for d in diffs[_MAX_SHOWN:]))
    lines.append("To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: --record-mode=record).")
    if times_recorded:
        lines.append("If the code may repeat this call, pass allow_playback_repeats=True to replay the last answer.")
    return "\n".join(lines)

"""The message of a miss, and the fuzzy match: the nearest recorded request and what differs.

The message reads like a code review: the nearest recorded request (same endpoint first,
then the fewest differing fields), each differing field by JSON path with long texts as a
word diff, then the other recorded requests to the same endpoint. Nothing here runs
unless a request misses.

``promptvcr explain`` shows the other side, for every interaction of a cassette: its key,
its provider family, the rules that changed something, the other interactions that share
its key (they replay in recorded order), and the normalized key input, long strings shortened.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.models import Interaction, Request
from ..credentials.printing import safe_text
from ..policies.modes import option_text, record_flag, rerecord_text, serving
from .diffs import Candidate, Difference, candidates, describe, differences, show
from .key import request_key
from .parts import KeyParts, Rule, key_parts
from .rules import DEFAULT_RULES, family_of, rule_name, rules_for

__all__ = [
    "FuzzyMatch",
    "FuzzyMatchWarning",
    "differences",
    "explain_interactions",
    "fuzzy_match",
    "miss_message",
    "nearest",
    "record_hint",
]

_MAX_SHOWN = 8
_MAX_OTHERS = 5
#: JSON path segments under which a string is the text of a message (a prompt, not a setting).
_TEXT_CONTAINERS = ("messages", "contents", "input", "system", "systemInstruction", "instructions", "prompt")


def record_hint() -> str:
    """How to record a missed request, with the pytest option (or serve flag) that works in this run."""
    if serving():
        return f"To record it, run again with PROMPTVCR_RECORD_MODE=record: {rerecord_text('record')}."
    return f"To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: {record_flag()}=record)."


def nearest(
    sent: Request, interactions: Sequence[Interaction], rules: Sequence[Rule]
) -> tuple[int, list[Difference]] | None:
    """The recorded request closest to ``sent``: same endpoint first, then fewest differing fields."""
    found = candidates(sent, interactions, rules)
    return (found[0].position, found[0].diffs) if found else None


def _summary(request: Request) -> str:
    body = key_parts(request).body
    if isinstance(body, dict):
        fields = [f"model={body['model']}"] if "model" in body else []
        messages = body.get("messages") or body.get("contents") or body.get("input")
        if isinstance(messages, list) and messages:
            fields.append(f"{len(messages)} messages, last: {show(messages[-1], 90)}")
        elif messages is not None:
            fields.append(f"input: {show(messages, 90)}")
        return ", ".join(fields) or show(body, 100)
    return "(no body)" if body is None else show(body, 100)


def _review(best: Candidate, others: list[Candidate]) -> list[str]:
    recorded = best.interaction.request
    lines = [f"Nearest recorded request: interactions[{best.position}] {recorded.method} {recorded.url}"]
    lines.append("  differs at (recorded -> sent):")
    lines.extend(f"    {describe(d)}" for d in best.diffs[:_MAX_SHOWN])
    if len(best.diffs) > _MAX_SHOWN:
        rest = ", ".join(d.path for d in best.diffs[_MAX_SHOWN:])
        lines.append(f"    ... and {len(best.diffs) - _MAX_SHOWN} more: {rest}")
    same_endpoint = [c for c in others if c.same_endpoint]
    if same_endpoint and best.same_endpoint:
        shown = same_endpoint[:_MAX_OTHERS]
        lines.append("Other recorded requests to this endpoint (differing fields):")
        lines.extend(f"  interactions[{c.position}]: {', '.join(d.path for d in c.diffs)}" for c in shown)
        if len(same_endpoint) > len(shown):
            lines.append(f"  ... and {len(same_endpoint) - len(shown)} more")
    return lines


def _why(request: Request, best: Candidate, rules: Sequence[Rule]) -> list[str]:
    """The class of the miss (prompt, tool drift, tools, parameters, a volatile value), first."""
    if not best.same_endpoint or not best.diffs:
        return []
    from .whymissed import why_missed

    why = why_missed(best.interaction.request, request, rules)
    return [] if why is None else why.lines()


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
        found = candidates(request, interactions, rules)
        if not found:
            lines.append("The cassette holds no interactions.")
        else:
            lines.extend(_why(request, found[0], rules))
            lines.extend(_review(found[0], found[1:]))
    lines.append(record_hint())
    if times_recorded:
        lines.append(
            f"If the code may repeat this call, pass {option_text('allow_playback_repeats', True)} "
            f"to replay the last answer."
        )
    return safe_text("\n".join(lines))


# Fuzzy matching -----------------------------------------------------------------------------


class FuzzyMatchWarning(UserWarning):
    """A request that did not match was answered by a recorded one with similar message text."""


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    """A recorded interaction that differs from the sent request only in message text."""

    position: int
    similarity: float
    diffs: list[Difference]

    def warning(self, path: Path, request: Request) -> str:
        lines = [
            f"promptvcr: fuzzy match in {path}: {request.method} {request.url} was not recorded; replaying "
            f"interactions[{self.position}], whose message text is {self.similarity:.0%} similar.",
            "  differs at (recorded -> sent):",
        ]
        lines.extend(f"    {describe(d)}" for d in self.diffs)
        lines.append("Record the cassette again (PROMPTVCR_RECORD_MODE=record) if the new text is intended.")
        return safe_text("\n".join(lines))


def _is_message_text(diff: Difference) -> bool:
    segments = diff.path.replace("[", ".[").split(".")
    return (
        isinstance(diff.recorded, str)
        and isinstance(diff.sent, str)
        and bool(segments)
        and segments[0] in _TEXT_CONTAINERS
    )


def _similarity(diffs: list[Difference]) -> float:
    recorded = "\n".join(str(d.recorded) for d in diffs)
    sent = "\n".join(str(d.sent) for d in diffs)
    matcher = difflib.SequenceMatcher(None, recorded, sent, autojunk=False)
    return matcher.ratio()


def fuzzy_match(
    sent: Request,
    interactions: Sequence[Interaction],
    rules: Sequence[Rule],
    threshold: float,
    *,
    skip: Any = (),
) -> FuzzyMatch | None:
    """The nearest interaction (not in ``skip``) that differs from ``sent`` only in message
    text, with the changed text at least ``threshold`` similar (0..1); ``None`` otherwise."""
    for candidate in candidates(sent, interactions, rules):
        if candidate.position in skip:
            continue
        if not candidate.diffs or not all(_is_message_text(d) for d in candidate.diffs):
            return None  # the nearest differs in more than text: nothing is close enough
        similarity = _similarity(candidate.diffs)
        if similarity < threshold:
            return None
        return FuzzyMatch(candidate.position, similarity, candidate.diffs)
    return None


# Explaining every interaction's key ------------------------------------------------------------


_LONG_STRING = 200


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _LONG_STRING:
        return f"{value[:_LONG_STRING]}... ({len(value)} characters)"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shorten(v) for v in value]
    return value


def _input(parts: KeyParts, *, full: bool) -> str:
    data = {
        "method": parts.method,
        "path": parts.path,
        "query": [list(q) for q in parts.query],
        "body": parts.body,
    }
    return json.dumps(
        data if full else _shorten(data), indent=2, sort_keys=True, ensure_ascii=False, default=repr
    )


def explain_interactions(
    interactions: Sequence[Interaction], rules: Sequence[Rule] = DEFAULT_RULES, *, full: bool = False
) -> str:
    """One block per interaction; ``full`` keeps long strings whole."""
    keys = [request_key(i.request, rules) for i in interactions]
    blocks = []
    for position, interaction in enumerate(interactions):
        request = interaction.request
        url = urlsplit(request.url)
        parts = key_parts(request)
        changed = []
        for rule in rules_for(rules, url.netloc, url.path):
            after = rule(parts)
            if after != parts:
                changed.append(rule_name(rule))
            parts = after
        family = family_of(url.netloc, url.path) or "generic"
        lines = [f"interactions[{position}] {request.method} {request.url}"]
        lines.append(f"  key {keys[position]} (provider family: {family})")
        lines.append(f"  rules that changed it: {', '.join(changed) if changed else 'none'}")
        twins = [
            f"interactions[{i}]" for i, key in enumerate(keys) if key == keys[position] and i != position
        ]
        if twins:
            lines.append(f"  same key as {', '.join(twins)}: they replay in recorded order")
        lines.extend("  " + line for line in _input(parts, full=full).splitlines())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)

"""Two requests compared as a reviewer would: field by field, by JSON path, after the rules.

``messages[2].content``, ``tools[0].function.parameters.properties.q``: each difference
names the field, and long texts are shown as a word diff around the change. Used only
when a request misses, so it may take its time.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..cassettes.models import Interaction, Request
from ..credentials.printing import safe_value
from .key import apply_rules
from .parts import KeyParts, Rule

__all__ = ["MISSING", "Candidate", "Difference", "candidates", "describe", "differences", "show", "word_diff"]

MISSING: Any = type("Absent", (), {"__repr__": lambda self: "(absent)"})()
_LONG = 70
_WORDS = re.compile(r"\S+|\s+")
_CONTEXT_WORDS = 6


@dataclass(frozen=True, slots=True)
class Difference:
    """One field whose value differs: ``MISSING`` on the side that lacks it."""

    path: str
    recorded: Any
    sent: Any


def _walk(path: str, recorded: Any, sent: Any) -> Iterator[Difference]:
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted({*recorded, *sent}, key=str):
            child = f"{path}.{key}" if path else str(key)
            yield from _walk(child, recorded.get(key, MISSING), sent.get(key, MISSING))
    elif isinstance(recorded, (list, tuple)) and isinstance(sent, (list, tuple)):
        for i in range(max(len(recorded), len(sent))):
            left = recorded[i] if i < len(recorded) else MISSING
            right = sent[i] if i < len(sent) else MISSING
            yield from _walk(f"{path}[{i}]", left, right)
    elif recorded != sent or type(recorded) is not type(sent):
        yield Difference(path or "body", recorded, sent)


def _parts_differences(left: KeyParts, right: KeyParts) -> list[Difference]:
    found = []
    if left.method != right.method:
        found.append(Difference("method", left.method, right.method))
    if left.path != right.path:
        found.append(Difference("path", left.path, right.path))
    if left.query != right.query:
        found.append(Difference("query", dict(left.query), dict(right.query)))
    found.extend(_walk("", left.body, right.body))
    return found


def differences(recorded: Request, sent: Request, rules: Sequence[Rule]) -> list[Difference]:
    """The fields, by JSON path, in which two requests' keys differ."""
    return _parts_differences(apply_rules(recorded, rules), apply_rules(sent, rules))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A recorded interaction compared with the request that missed."""

    position: int
    interaction: Interaction
    diffs: list[Difference]

    @property
    def same_endpoint(self) -> bool:
        return not any(d.path in ("method", "path") for d in self.diffs)


def candidates(sent: Request, interactions: Sequence[Interaction], rules: Sequence[Rule]) -> list[Candidate]:
    """Every recorded interaction, nearest first: same endpoint (method and path) first,
    then the fewest differing fields, then recorded order."""
    sent_parts = apply_rules(sent, rules)
    found = [
        Candidate(position, i, _parts_differences(apply_rules(i.request, rules), sent_parts))
        for position, i in enumerate(interactions)
    ]
    return sorted(found, key=lambda c: (not c.same_endpoint, len(c.diffs), c.position))


def show(value: Any, limit: int = _LONG) -> str:
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def word_diff(recorded: str, sent: str, context: int = _CONTEXT_WORDS) -> str:
    """The change between two texts as ``[-removed-]{+added+}`` with a few words around it."""
    old, new = _WORDS.findall(recorded), _WORDS.findall(sent)
    out: list[str] = []
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            words = old[i1:i2]
            keep = context * 2  # words and the spaces between them
            head = words[:keep] if index > 0 else []
            tail = words[-keep:] if index < len(opcodes) - 1 else []
            if len(words) > len(head) + len(tail):
                out.append("".join(head) + "..." + "".join(tail))
            else:
                out.append("".join(words))
            continue
        if i2 > i1:
            out.append("[-" + "".join(old[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + "".join(new[j1:j2]) + "+}")
    return "".join(out)


#: The names in a field's path (``providers[0].api_key``: ``providers``, ``api_key``).
_LEAF = re.compile(r"[^.\[\]]+(?=\.|$)")


def describe(diff: Difference) -> str:
    """One line of a review: ``path: recorded -> sent``, or a word diff for long texts."""
    leaf = _LEAF.findall(diff.path)
    left, right = diff.recorded, diff.sent
    if leaf:  # a credential's value, sent or recorded, is shown as its placeholder
        left, right = safe_value(leaf[-1], left), safe_value(leaf[-1], right)
    if isinstance(left, str) and isinstance(right, str) and max(len(left), len(right)) > _LONG:
        return f"{diff.path}: {word_diff(left, right)}"
    return f"{diff.path}: {show(left)} -> {show(right)}"

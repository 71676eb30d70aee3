"""Volatile fields found by comparing two recordings of the same requests: what ``promptvcr learn`` proposes.

Run a test twice and each request it sends is sent twice: whatever differs between the two
is no part of the question (an id, a timestamp, a nonce, a seed), and a third run will send
a third value and miss. Each difference becomes a :class:`Proposal` with its evidence (the
two values) for a person to review: a whole value that changed is left out of the key, a
uuid or timestamp inside a longer string is masked, and a difference no rule explains (text
that changed, a list that grew) is reported and never proposed, since leaving it out could
make two different questions one.

Pure: interactions in, proposals out. Requests are compared after the rules the cassette
uses, so a field those rules already leave out is not proposed again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..cassettes.models import Interaction
from .key import apply_rules
from .parts import Rule
from .rules.learned import PATTERNS

__all__ = ["Learned", "Proposal", "propose"]

_COMPILED = {kind: re.compile(pattern) for kind, pattern in PATTERNS.items()}
_SHOWN = 120


@dataclass(frozen=True)
class Proposal:
    """One rule to review: ``rule`` on ``field``, and why (``first``/``second``, ``where``)."""

    rule: str
    field: str
    looks_like: str
    first: str
    second: str
    where: str
    kinds: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["kinds"] = list(self.kinds)
        if not self.kinds:
            del data["kinds"]
        return data


@dataclass
class Learned:
    proposals: list[Proposal] = field(default_factory=list)
    #: Differences no rule explains: ``where: field: first -> second``, never proposed.
    unexplained: list[str] = field(default_factory=list)
    #: Requests compared, and those whose two recordings already had the same key.
    compared: int = 0
    same: int = 0


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _whole_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "epoch time" if _COMPILED["epoch time"].fullmatch(str(value)) else "number (a seed?)"
    if isinstance(value, str):
        for kind, pattern in _COMPILED.items():
            if pattern.fullmatch(value):
                return kind
        return "nonce" if value and not any(c.isspace() for c in value) else ""
    return ""


def _masked(text: str, kinds: Iterable[str]) -> str:
    for kind in kinds:
        text = _COMPILED[kind].sub(f"<{kind}>", text)
    return text


class _Walk:
    def __init__(self, learned: Learned, where: str) -> None:
        self.learned, self.where = learned, where

    def propose(
        self, rule: str, at: str, looks_like: str, a: Any, b: Any, kinds: tuple[str, ...] = ()
    ) -> None:
        self.learned.proposals.append(Proposal(rule, at, looks_like, _shown(a), _shown(b), self.where, kinds))

    def unexplained(self, at: str, a: Any, b: Any) -> None:
        self.learned.unexplained.append(f"{self.where}: {at or 'the body'}: {_shown(a)} -> {_shown(b)}")

    def compare(self, a: Any, b: Any, at: str) -> None:
        if a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in a.keys() & b.keys():
                self.compare(a[key], b[key], f"{at}.{key}" if at else str(key))
            for key in a.keys() ^ b.keys():
                self.unexplained(
                    f"{at}.{key}" if at else str(key), a.get(key, "(absent)"), b.get(key, "(absent)")
                )
            return
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for left, right in zip(a, b, strict=True):
                self.compare(left, right, f"{at}[]")
            return
        self.scalar(a, b, at)

    def scalar(self, a: Any, b: Any, at: str) -> None:
        whole = _whole_kind(a)
        if at and whole and whole == _whole_kind(b):
            self.propose("drop_body_field", at, whole, a, b)
            return
        if at and isinstance(a, str) and isinstance(b, str):
            kinds = tuple(
                kind for kind, pattern in _COMPILED.items() if pattern.search(a) and pattern.search(b)
            )
            if kinds and _masked(a, kinds) == _masked(b, kinds):
                needed = tuple(k for k in kinds if _masked(a, [k]) != a or _masked(b, [k]) != b)
                self.propose("mask_in_field", at, " and ".join(needed), a, b, needed)
                return
        self.unexplained(at, a, b)


def _query(walk: _Walk, a: tuple[tuple[str, str], ...], b: tuple[tuple[str, str], ...]) -> None:
    left, right = dict(a), dict(b)
    for name in left.keys() & right.keys():
        if left[name] != right[name]:
            looks_like = _whole_kind(left[name]) or "a value that changes"
            walk.propose("drop_query_param", name, looks_like, left[name], right[name])
    for name in left.keys() ^ right.keys():
        walk.unexplained(f"query {name}", left.get(name, "(absent)"), right.get(name, "(absent)"))


def propose(pairs: Iterable[tuple[str, Interaction, Interaction]], rules: Sequence[Rule]) -> Learned:
    """What differs between each pair of recordings of one request (``where`` names it),
    as proposals, each ``(rule, field)`` once with its first evidence."""
    learned = Learned()
    for where, first, second in pairs:
        learned.compared += 1
        a, b = apply_rules(first.request, rules), apply_rules(second.request, rules)
        if a.canonical() == b.canonical():
            learned.same += 1
            continue
        walk = _Walk(learned, where)
        _query(walk, a.query, b.query)
        walk.compare(a.body, b.body, "")
    seen: set[tuple[str, str]] = set()
    unique = []
    for proposal in learned.proposals:
        if (proposal.rule, proposal.field) not in seen:
            seen.add((proposal.rule, proposal.field))
            unique.append(proposal)
    learned.proposals = unique
    learned.unexplained = list(dict.fromkeys(learned.unexplained))
    return learned

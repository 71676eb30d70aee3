"""Volatile fields found by comparing two recordings of the same requests: what ``promptvcr learn`` proposes.

Run a test twice and each request it sends is sent twice: whatever differs between the two
is no part of the question (an id, a timestamp, a nonce, a seed), and a third run will send
a third value and miss. Each difference becomes a :class:`Proposal` with its evidence (the
two values) for a person to review: a whole value that changed is left out of the key, a
uuid or timestamp inside a longer string is masked, and a difference no rule explains (text
that changed, a list that grew) is reported and never proposed, since leaving it out could
make two different questions one.

A rule names the exact field that changed: ``messages[1].content``, never ``messages[].content``,
which would also leave out the system prompt and every other message. Each proposal says its
effect, the recorded requests it makes equal (with the other proposals applied), and a rule
that would make equal two recorded requests whose prompts differ (text, not an id, a time or
a nonce, at the field it leaves out) is refused and reported, never proposed.

Pure: interactions in, proposals out. Requests are compared after the rules the cassette
uses, so a field those rules already leave out is not proposed again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..cassettes.models import Interaction, Request
from .key import apply_rules
from .parts import KeyParts, Rule
from .rules.learned import PATTERNS, rules_of, values_at

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
    #: Its effect: each group of recorded requests it makes equal, as ``A = B``.
    makes_equal: tuple[str, ...] = ()

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["kinds"] = list(self.kinds)
        data["makes_equal"] = list(self.makes_equal)
        if not self.kinds:
            del data["kinds"]
        return data


@dataclass
class Learned:
    proposals: list[Proposal] = field(default_factory=list)
    #: Differences no rule explains: ``where: field: first -> second``, never proposed.
    unexplained: list[str] = field(default_factory=list)
    #: Rules not proposed because they would make different prompts equal: why, one line each.
    refused: list[str] = field(default_factory=list)
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
            for index, (left, right) in enumerate(zip(a, b, strict=True)):
                self.compare(left, right, f"{at}[{index}]")  # that element: the others still count
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


def propose(
    pairs: Iterable[tuple[str, Interaction, Interaction]],
    rules: Sequence[Rule],
    recorded: Sequence[tuple[str, Request]] = (),
) -> Learned:
    """What differs between each pair of recordings of one request (``where`` names it),
    as proposals, each ``(rule, field)`` once with its first evidence, and each with its effect
    on the ``recorded`` requests (every request of both recordings, each with where it is);
    those that would make different prompts equal are refused (see the module)."""
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
    _weigh(learned, rules, recorded)
    return learned


def _prompt_like(value: Any) -> bool:
    """Whether a value carries meaning (text, structure), as opposed to an id, a time, a
    nonce, a number or a flag that changes from run to run."""
    return isinstance(value, (str, dict, list)) and not _whole_kind(value)


def _at(parts: KeyParts, proposal: Proposal) -> list[Any]:
    if proposal.rule == "drop_query_param":
        return [value for name, value in parts.query if name == proposal.field]
    return values_at(parts.body, proposal.field)


def _effect(
    proposal: Proposal, base: Sequence[Rule], recorded: Sequence[tuple[str, Request]]
) -> tuple[list[str], list[str]]:
    """The groups of ``recorded`` requests that ``proposal`` makes equal (after ``base``), as
    ``A = B`` lines, and those among them whose prompts differ at its field."""
    own = rules_of([proposal.to_data()])
    groups: dict[str, list[tuple[str, str, KeyParts]]] = {}
    for where, request in recorded:
        before = apply_rules(request, base)
        after = apply_rules(request, [*base, *own])
        groups.setdefault(after.canonical(), []).append((where, before.canonical(), before))
    equal, different = [], []
    for members in groups.values():
        if len({before for _, before, _ in members}) < 2:
            continue  # already equal without it
        line = " = ".join(where for where, _, _ in members)
        equal.append(line)
        values = [
            tuple(json.dumps(v, sort_keys=True) for v in _at(parts, proposal)) for _, _, parts in members
        ]
        prompts = any(_prompt_like(v) for _, _, parts in members for v in _at(parts, proposal))
        # a mask replaces ids and times inside the text, and the rest of it still counts
        if proposal.rule != "mask_in_field" and prompts and len(set(values)) > 1:
            different.append(line)
    return equal, different


def _weigh(learned: Learned, rules: Sequence[Rule], recorded: Sequence[tuple[str, Request]]) -> None:
    """Each proposal's effect with the others applied; a proposal that makes different prompts
    equal moves to :attr:`Learned.refused` (and the others are weighed again without it)."""
    if not recorded:
        return
    while True:
        kept: list[Proposal] = []
        refused = False
        for proposal in learned.proposals:
            others = [q.to_data() for q in learned.proposals if q is not proposal]
            equal, different = _effect(proposal, [*rules, *rules_of(others)], recorded)
            if different:
                refused = True
                learned.refused.append(
                    f"{proposal.rule} {proposal.field}: it would make recorded requests with different "
                    f"prompts equal: {'; '.join(different[:3])}"
                )
                continue
            kept.append(replace(proposal, makes_equal=tuple(equal)))
        learned.proposals = kept
        if not refused:
            return

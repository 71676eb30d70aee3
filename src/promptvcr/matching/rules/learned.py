"""Rules learned from two recordings of the same requests (``promptvcr learn``), kept in a file.

The file is JSON a reviewer reads: one entry per volatile field, with the rule and its
evidence (the field's value in each recording). Nothing in it applies until the suite loads
it, with :func:`load_rules` in ``conftest.py``, so a learned rule is never applied silently:
it reaches the keys through a file the user reviewed and committed.

Each entry becomes one of three rules: a top-level body field or a query parameter left out
of the key (:func:`.fields.drop_body_fields`, :func:`.fields.drop_query_params`, the rules a
user writes by hand), a nested field left out (:func:`drop_body_paths`), or, for a value
carried inside a longer string (a uuid in a prompt), the volatile part masked
(:func:`mask_in_field`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..parts import KeyParts, Rule
from .fields import drop_body_fields, drop_query_params

__all__ = [
    "LEARNED_VERSION",
    "PATTERNS",
    "drop_body_paths",
    "load_rules",
    "mask_in_field",
    "rules_of",
    "values_at",
]

LEARNED_VERSION = 1

#: Values that change on every run, by kind, as they appear inside strings.
PATTERNS: dict[str, str] = {
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "timestamp": r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
    "hex id": r"\b[0-9a-fA-F]{16,}\b",
    "epoch time": r"\b1\d{9}(?:\d{3})?\b",
}


_STEP = re.compile(r"\[(\d*)\]|([^.\[\]]+)")


def _steps(path: str) -> list[str]:
    """``context.items[].id`` -> ``["context", "items", "[]", "id"]``; ``messages[1].content``
    -> ``["messages", "[1]", "content"]`` (``[]``: every element, ``[1]``: that one only)."""
    return [match.group(0) if match.group(2) is None else match.group(2) for match in _STEP.finditer(path)]


def _edit(value: Any, steps: list[str], change: Any) -> Any:
    """``value`` with ``change(parent, key)`` applied at ``steps``; the same object when absent."""
    if not steps:
        return value
    head, rest = steps[0], steps[1:]
    if head.startswith("["):
        if not isinstance(value, list):
            return value
        if head == "[]":
            items = [_edit(item, rest, change) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        index = int(head[1:-1])
        if index >= len(value) or not rest:
            return value
        inner = _edit(value[index], rest, change)
        return value if inner is value[index] else [*value[:index], inner, *value[index + 1 :]]
    if not isinstance(value, dict) or head not in value:
        return value
    if not rest:
        return change(value, head)
    inner = _edit(value[head], rest, change)
    return value if inner is value[head] else {**value, head: inner}


def values_at(value: Any, path: str) -> list[Any]:
    """The values at ``path`` in ``value`` (several for a ``[]`` step; none when absent)."""
    found = [value]
    for step in _steps(path):
        if step == "[]":
            found = [item for value in found if isinstance(value, list) for item in value]
        elif step.startswith("["):
            index = int(step[1:-1])
            found = [value[index] for value in found if isinstance(value, list) and index < len(value)]
        else:
            found = [value[step] for value in found if isinstance(value, dict) and step in value]
    return found


def drop_body_paths(paths: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that leaves nested JSON body fields out of the key: ``context.sent_at``,
    ``messages[1].metadata.id`` (``[1]``: that element of a list; ``[]``: every element)."""
    wanted = [(path, _steps(path)) for path in paths]

    def without(parent: dict[str, Any], key: str) -> dict[str, Any]:
        return {k: v for k, v in parent.items() if k != key}

    def rule(parts: KeyParts) -> KeyParts:
        body = parts.body
        for _, steps in wanted:
            body = _edit(body, steps, without)
        return parts if body is parts.body else replace(parts, body=body)

    rule.__name__ = name or f"drop_body_paths({', '.join(path for path, _ in wanted)})"
    return rule


def mask_in_field(path: str, kinds: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that replaces the volatile values of ``kinds`` (:data:`PATTERNS`) inside the
    string at ``path`` by ``<kind>``: the rest of the string (a prompt) still counts."""
    chosen = sorted(kinds)
    unknown = [kind for kind in chosen if kind not in PATTERNS]
    if unknown:
        raise ValueError(f"Unknown kind(s) {', '.join(unknown)}; the kinds are: {', '.join(PATTERNS)}.")
    patterns = [(re.compile(PATTERNS[kind]), f"<{kind}>") for kind in chosen]
    steps = _steps(path)

    def masked(parent: dict[str, Any], key: str) -> dict[str, Any]:
        text = parent[key]
        if not isinstance(text, str):
            return parent
        new = text
        for pattern, placeholder in patterns:
            new = pattern.sub(placeholder, new)
        return parent if new == text else {**parent, key: new}

    def rule(parts: KeyParts) -> KeyParts:
        body = _edit(parts.body, steps, masked)
        return parts if body is parts.body else replace(parts, body=body)

    rule.__name__ = name or f"mask_in_field({path}: {', '.join(chosen)})"
    return rule


def rules_of(entries: Iterable[dict[str, Any]]) -> list[Rule]:
    """The rules of a learned file's entries, in order; ``ValueError`` naming a bad entry."""
    top: list[str] = []
    query: list[str] = []
    rules: list[Rule] = []
    for number, entry in enumerate(entries):
        kind, field = entry.get("rule"), entry.get("field")
        if not isinstance(field, str) or not field:
            raise ValueError(f"entry {number} has no 'field'")
        if kind == "drop_body_field":
            if "." in field or "[" in field:
                rules.append(drop_body_paths([field], name=f"learned:drop_body_paths({field})"))
            else:
                top.append(field)
        elif kind == "drop_query_param":
            query.append(field)
        elif kind == "mask_in_field":
            kinds = entry.get("kinds")
            if not isinstance(kinds, list) or not kinds:
                raise ValueError(f"entry {number} ({field}) has no 'kinds' to mask")
            rules.append(mask_in_field(field, kinds, name=f"learned:mask_in_field({field})"))
        else:
            raise ValueError(
                f"entry {number} ({field}) has rule {kind!r}; "
                "expected drop_body_field, drop_query_param or mask_in_field"
            )
    if top:
        rules.insert(0, drop_body_fields(top, name=f"learned:drop_body_fields({', '.join(top)})"))
    if query:
        rules.insert(0, drop_query_params(query, name=f"learned:drop_query_params({', '.join(query)})"))
    return rules


def load_rules(path: str | Path, base: Iterable[Rule] | None = None) -> tuple[Rule, ...]:
    """``base`` (the current default rules when omitted) then the rules of the learned file
    at ``path``, for ``use_cassette(rules=...)`` or ``promptvcr_config``'s ``rules``."""
    from . import default_rules

    file = Path(path)
    how = "Write it with: promptvcr learn FIRST SECOND --output " + str(file)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"There is no learned rules file at {file}. {how}") from None
    except (OSError, ValueError) as error:
        raise ValueError(f"The learned rules file {file} cannot be read as JSON ({error}). {how}") from None
    if not isinstance(data, dict) or data.get("version") != LEARNED_VERSION:
        raise ValueError(
            f"{file} is not a learned rules file this promptvcr reads (version {LEARNED_VERSION})."
        )
    entries = data.get("learned")
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ValueError(f"{file}: 'learned' must be a list of entries. {how}")
    try:
        learned = rules_of(entries)
    except ValueError as error:
        raise ValueError(f"{file}: {error}. {how}") from None
    return (*(default_rules() if base is None else base), *learned)

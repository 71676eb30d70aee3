"""Rules made from names: leave query parameters or top-level body fields out of the key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..parts import KeyParts, Rule

__all__ = ["drop_body_fields", "drop_query_params"]


def drop_query_params(names: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that leaves the named query parameters out of the key (case-insensitive)."""
    dropped = frozenset(name.lower() for name in names)

    def rule(parts: KeyParts) -> KeyParts:
        if not parts.query or not any(k.lower() in dropped for k, _ in parts.query):
            return parts
        return replace(parts, query=tuple((k, v) for k, v in parts.query if k.lower() not in dropped))

    rule.__name__ = name or f"drop_query_params({', '.join(sorted(dropped))})"
    return rule


def drop_body_fields(names: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that leaves top-level fields of a JSON object (or form) body out of the key."""
    dropped = frozenset(names)

    def rule(parts: KeyParts) -> KeyParts:
        body = parts.body
        if isinstance(body, dict) and not dropped.isdisjoint(body):
            return replace(parts, body={k: v for k, v in body.items() if k not in dropped})
        if isinstance(body, list) and body and isinstance(body[0], tuple):
            return replace(parts, body=[(k, v) for k, v in body if k not in dropped])
        return parts

    rule.__name__ = name or f"drop_body_fields({', '.join(sorted(dropped))})"
    return rule

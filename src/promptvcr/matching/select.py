"""Which rules apply to a request, and the public ways to change the rules.

A rule applies to every request unless it is marked for some provider families with
:func:`for_families`; the family comes from the host (or, behind a proxy or a loopback
test server, from the path). The choice is cached per (rules, host, path), so the hot
path pays one dictionary look-up for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TypeVar

from ..cassettes.providers import provider_of_url
from .parts import Rule

__all__ = [
    "family_of",
    "for_families",
    "rule_name",
    "rules_for",
]

R = TypeVar("R", bound=Callable[..., object])


def for_families(*families: str) -> Callable[[R], R]:
    """Mark a rule as applying only to requests of these provider families."""

    def mark(rule: R) -> R:
        rule.families = frozenset(families)  # type: ignore[attr-defined]
        return rule

    return mark


#: The provider family rules are chosen by (see :mod:`promptvcr.cassettes.providers`).
family_of = provider_of_url


@lru_cache(maxsize=4096)
def _select(rules: tuple[Rule, ...], family: str) -> tuple[Rule, ...]:
    return tuple(r for r in rules if family in getattr(r, "families", (family,)))


#: (id of the rules, host, path) -> (the rules, the rules chosen): one look-up per request.
_chosen: dict[tuple[int, str, str], tuple[tuple[Rule, ...], tuple[Rule, ...]]] = {}


def rules_for(rules: Sequence[Rule], host: str, path: str) -> tuple[Rule, ...]:
    """The rules of ``rules`` that apply to a request to ``host`` and ``path``."""
    if type(rules) is tuple:
        found = _chosen.get((id(rules), host, path))
        if found is not None and found[0] is rules:
            return found[1]
    chosen = rules if isinstance(rules, tuple) else tuple(rules)
    try:
        selected = _select(chosen, family_of(host, path))
        if type(rules) is tuple:
            if len(_chosen) >= 4096:
                _chosen.clear()
            _chosen[(id(rules), host, path)] = (rules, selected)
        return selected
    except TypeError:  # an unhashable rule object: choose without the cache
        family = family_of(host, path)
        return tuple(r for r in chosen if family in getattr(r, "families", (family,)))


def rule_name(rule: Rule) -> str:
    return str(getattr(rule, "__name__", type(rule).__name__))

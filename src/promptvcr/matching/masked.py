"""A credential masked inside a string: the recording replays whatever key the test sends.

A key the run sent is masked wherever it shows up, inside a text too: a prompt that quotes
the key is stored as ``"check <redacted:sent-credential> for me"``. A whole value that is a
placeholder takes no part in a key (:mod:`.rules.redacted`), but a placeholder inside a
string cannot be left out of a hash: the live prompt holds the real key there. So a request
that missed every key is compared here with each unplayed recording whose request holds a
placeholder inside a string: equal parts, and each such string matched with its placeholders
standing for any text. This runs only where a request would otherwise miss, and only for
recordings that hold a placeholder: no cost for the requests that match by key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence
from typing import Any

from ..cassettes.models import Interaction, Request
from ..credentials.placeholder import PREFIX
from .key import apply_rules
from .parts import Rule

__all__ = ["masked_match"]

#: A placeholder inside a text (``<redacted>`` or ``<redacted:what:ever>``).
_PLACEHOLDER = re.compile(re.escape(PREFIX) + r"(?::[^<>\s]*)?>")
_MARK = PREFIX.encode()


@functools.lru_cache(maxsize=256)
def _pattern(recorded: str) -> re.Pattern[str] | None:
    """``recorded`` as a pattern where each placeholder stands for any text; ``None`` when it
    holds none."""
    pieces = _PLACEHOLDER.split(recorded)
    if len(pieces) == 1:
        return None
    return re.compile(".+?".join(re.escape(piece) for piece in pieces), re.DOTALL)


def _same(recorded: Any, live: Any) -> bool:
    if isinstance(recorded, str):
        if not isinstance(live, str):
            return False
        pattern = _pattern(recorded) if PREFIX in recorded else None
        return recorded == live if pattern is None else pattern.fullmatch(live) is not None
    if isinstance(recorded, dict):
        return (
            isinstance(live, dict)
            and recorded.keys() == live.keys()
            and all(_same(item, live[key]) for key, item in recorded.items())
        )
    if isinstance(recorded, (list, tuple)):
        return (
            isinstance(live, (list, tuple))
            and len(recorded) == len(live)
            and all(_same(a, b) for a, b in zip(recorded, live, strict=True))
        )
    return bool(recorded == live)


def masked_match(
    request: Request, interactions: Sequence[Interaction], rules: Sequence[Rule], skip: Collection[int]
) -> int | None:
    """The position of the first unplayed interaction (not in ``skip``) that ``request``
    matches when each placeholder inside a recorded string stands for any text; ``None``."""
    live = None
    for position, interaction in enumerate(interactions):
        recorded = interaction.request
        if position in skip or (_MARK not in recorded.content and PREFIX not in recorded.url):
            continue
        if recorded.method != request.method:
            continue
        if live is None:
            live = apply_rules(request, rules)
        stored = apply_rules(recorded, rules)
        if (stored.method, stored.path) == (live.method, live.path) and _same(
            (stored.query, stored.body), (live.query, live.body)
        ):
            return position
    return None

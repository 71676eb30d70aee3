"""One cassette's interactions in memory: indexed by key, played in recorded order.

The same request may legitimately be sent twice and get two answers (an agent loop, a
retry after a 429), so each key keeps the list of its interactions and a pointer to the
next one to play.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cassettes.models import Interaction
from ..cassettes.persister import collection_paused
from .key import loaded_keys
from .parts import Rule
from .rules import DEFAULT_RULES

__all__ = ["Tape"]


@dataclass
class Tape:
    """The interactions of one cassette and what has been played of them."""

    interactions: list[Interaction] = field(default_factory=list)
    rules: Sequence[Rule] = DEFAULT_RULES
    _index: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)
    _next: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _played: list[bool] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        with collection_paused():  # thousands of keys kept: a collection would only walk the heap
            for position, key in enumerate(loaded_keys(self.interactions, self.rules)):
                self._index.setdefault(key, []).append(position)
        self._played = [False] * len(self.interactions)

    def play(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """The next unplayed interaction recorded under ``key``, or ``None`` on a miss.

        With ``allow_repeats`` the last one is played again once all have been played.
        """
        return self._take(key, allow_repeats=allow_repeats, use_up=True)

    def peek(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """What :meth:`play` would return, without using it up.

        A request that an injected fault breaks (a cut stream, a malformed event) borrows
        the recorded answer: it counts as played, but the retry that follows gets it whole.
        """
        return self._take(key, allow_repeats=allow_repeats, use_up=False)

    def _take(self, key: str, *, allow_repeats: bool, use_up: bool) -> Interaction | None:
        positions = self._index.get(key)
        if not positions:
            return None
        turn = self._next.get(key, 0)
        if turn >= len(positions):
            return self.interactions[positions[-1]] if allow_repeats else None
        if use_up:
            self._next[key] = turn + 1
        self._played[positions[turn]] = True
        return self.interactions[positions[turn]]

    def play_position(self, position: int) -> Interaction:
        """Play one interaction chosen by position (a fuzzy match): it counts as played, and
        when it was next in line for its key, that key moves on to the following one."""
        self._played[position] = True
        for key, positions in self._index.items():
            if position in positions:
                turn = self._next.get(key, 0)
                if turn < len(positions) and positions[turn] == position:
                    self._next[key] = turn + 1
                break
        return self.interactions[position]

    @property
    def played_positions(self) -> frozenset[int]:
        return frozenset(i for i, played in enumerate(self._played) if played)

    def times_recorded(self, key: str) -> int:
        return len(self._index.get(key, ()))

    def append(self, key: str, interaction: Interaction) -> None:
        """Add a newly recorded interaction, already played by the request that caused it."""
        positions = self._index.setdefault(key, [])
        positions.append(len(self.interactions))
        self.interactions.append(interaction)
        self._played.append(True)
        self._next[key] = len(positions)

    @property
    def unplayed(self) -> list[Interaction]:
        return [i for i, played in zip(self.interactions, self._played, strict=True) if not played]

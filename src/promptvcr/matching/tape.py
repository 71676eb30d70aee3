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
    """The interactions of one cassette and what has been played of them.

    Each key's entry is one list, ``[turn, position, position, ...]``: the positions of its
    interactions in recorded order, after the turn of the next one to play. A replayed
    request looks up one entry (issue 22: in a large cassette every lookup is a cold one).
    """

    interactions: list[Interaction] = field(default_factory=list)
    rules: Sequence[Rule] = DEFAULT_RULES
    _index: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)
    _played: list[bool] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        with collection_paused():  # thousands of keys kept: a collection would only walk the heap
            index = self._index
            for position, key in enumerate(loaded_keys(self.interactions, self.rules)):
                entry = index.get(key)
                if entry is None:
                    index[key] = [0, position]
                else:
                    entry.append(position)
        self._played = [False] * len(self.interactions)

    def play(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """The next unplayed interaction recorded under ``key``, or ``None`` on a miss.

        With ``allow_repeats`` the last one is played again once all have been played.
        """
        entry = self._index.get(key)
        if entry is None:
            return None
        turn = entry[0] + 1
        if turn < len(entry):
            entry[0] = turn
            position = entry[turn]
            self._played[position] = True
            return self.interactions[position]
        return self.interactions[entry[-1]] if allow_repeats else None

    def peek(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """What :meth:`play` would return, without using it up.

        A request that an injected fault breaks (a cut stream, a malformed event) borrows
        the recorded answer: it counts as played, but the retry that follows gets it whole.
        """
        entry = self._index.get(key)
        used = 0 if entry is None else entry[0]
        interaction = self.play(key, allow_repeats=allow_repeats)
        if entry is not None:
            entry[0] = used  # borrowed, not used up
        return interaction

    def play_position(self, position: int) -> Interaction:
        """Play one interaction chosen by position (a fuzzy match): it counts as played, and
        when it was next in line for its key, that key moves on to the following one."""
        self._played[position] = True
        for entry in self._index.values():
            if position in entry[1:]:
                turn = entry[0] + 1
                if turn < len(entry) and entry[turn] == position:
                    entry[0] = turn
                break
        return self.interactions[position]

    @property
    def played_positions(self) -> frozenset[int]:
        return frozenset(i for i, played in enumerate(self._played) if played)

    def times_recorded(self, key: str) -> int:
        entry = self._index.get(key)
        return 0 if entry is None else len(entry) - 1

    def append(self, key: str, interaction: Interaction) -> None:
        """Add a newly recorded interaction, already played by the request that caused it."""
        entry = self._index.setdefault(key, [0])
        entry.append(len(self.interactions))
        entry[0] = len(entry) - 1
        self.interactions.append(interaction)
        self._played.append(True)

    @property
    def unplayed(self) -> list[Interaction]:
        return [i for i, played in zip(self.interactions, self._played, strict=True) if not played]

"""One cassette's interactions in memory: indexed by key, played in recorded order.

The same request may legitimately be sent twice and get two answers (an agent loop, a
retry after a 429), so each key keeps the list of its interactions and a pointer to the
next one to play.

Keys are computed in recorded order, only as far as the requests need: a test that replays
the first interactions of a 10,000-interaction cassette computes a few keys, not 10,000
(issue 22: entering such a cassette took 50 ms of key computing). A request whose key has no
unplayed interaction among those indexed indexes on until it finds one; only a miss, a
repeat of a key used up, or what needs every key (``times_recorded``, ``append``) indexes
them all.

A request is usually sent with the very bytes it was recorded with, so each indexed
interaction is also found by its body bytes (:meth:`Tape.play_sent`): a key depends on
nothing but the method, the URL, the content-type and the body (see :mod:`.key`), so a
request that sends all four as a recorded one did has that one's key, and finding its entry
is one look-up of the bytes, as a bare transport serving them would make (issue 22: the
key's memory and the index by key touched four more objects, cold in a large cassette).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..cassettes.models import Interaction, Request
from ..files.persister import collection_paused
from .key import known_keys, offer_keys, request_key, sent_content_type
from .parts import Rule
from .rules import DEFAULT_RULES

__all__ = ["DEFAULT_FUZZY_THRESHOLD", "Tape", "fuzzy_threshold"]

#: ``fuzzy=True`` replays a recorded request whose changed message text is this similar.
DEFAULT_FUZZY_THRESHOLD = 0.8


def fuzzy_threshold(fuzzy: bool | float) -> float:
    """``0.0`` (off) for ``False``, the default threshold for ``True``, else the given one:
    what :meth:`Tape.play_similar` takes."""
    if fuzzy is True:
        return DEFAULT_FUZZY_THRESHOLD
    if fuzzy is False:
        return 0.0
    threshold = float(fuzzy)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"fuzzy={fuzzy!r}: give True, False or a similarity threshold in (0, 1], e.g. 0.9.")
    return threshold


@dataclass
class Tape:
    """The interactions of one cassette and what has been played of them.

    Each key's entry is one list, ``[turn, position, position, ...]``: the positions of its
    interactions in recorded order, after the turn of the next one to play. A replayed
    request looks up one entry (issue 22: in a large cassette every lookup is a cold one).
    The entries hold the first ``len(_keys)`` interactions: the others are not indexed yet.
    """

    interactions: list[Interaction] = field(default_factory=list)
    rules: Sequence[Rule] = DEFAULT_RULES
    _index: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)
    _played: list[bool] = field(default_factory=list, init=False, repr=False)
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    #: Each indexed body's bytes -> the method, URL and content-type it was first recorded
    #: with, and that request's key's entry (see :meth:`play_sent`).
    _sent: dict[bytes, tuple[str, str, str, list[int]]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._played = [False] * len(self.interactions)
        if (keys := known_keys(self.interactions, self.rules)) is not None:
            self._add_keys(keys)

    def _add_keys(self, keys: Sequence[str]) -> None:
        index, start = self._index, len(self._keys)
        entries, position = [], start
        for key in keys:
            entry = index.get(key)
            if entry is None:
                entry = index[key] = [0, position]
            else:
                entry.append(position)
            entries.append(entry)
            position += 1
        self._learn(self.interactions[start:position], entries)
        self._keys.extend(keys)

    def _learn(self, interactions: Sequence[Interaction], entries: list[list[int]]) -> None:
        """Find each key's entry by its interaction's body bytes from now on (see
        :meth:`play_sent`). Bytes learnt already keep the method, URL and content-type they
        were first recorded with: a request that sends them another way goes by its key."""
        sent = self._sent
        for interaction, entry in zip(interactions, entries, strict=True):
            request = interaction.request
            if request.content not in sent:
                sent[request.content] = (request.method, request.url, sent_content_type(request), entry)

    def _index_on(self, until: str | None = None, stop: int | None = None) -> None:
        """Index the interactions not indexed yet, in order: all of them, or up to and with the
        first whose key is ``until``, or up to position ``stop``."""
        start, end = len(self._keys), len(self.interactions) if stop is None else stop
        if start >= end:
            return
        rules, computed = self.rules, []
        with collection_paused():  # thousands of keys kept: a collection would only walk the heap
            for interaction in self.interactions[start:end]:
                computed.append(key := request_key(interaction.request, rules))
                if key == until:
                    break
        self._add_keys(computed)
        if len(self._keys) == len(self.interactions):  # all computed: the next read brings them
            offer_keys(self.interactions, self.rules, self._keys)

    def index(self) -> dict[str, list[int]]:
        """Every key's entry, all interactions indexed."""
        self._index_on()
        return self._index

    def play(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """The next unplayed interaction recorded under ``key``, or ``None`` on a miss.

        With ``allow_repeats`` the last one is played again once all have been played.
        """
        entry = self._index.get(key)
        while True:
            if entry is not None and (found := self._next(entry, allow_repeats)) is not None:
                return found
            if len(self._keys) == len(self.interactions):  # a miss, or a key used up
                return None
            self._index_on(until=key)  # none left among those indexed: look further on
            entry = self._index.get(key)

    def play_sent(self, request: Request, *, allow_repeats: bool = False) -> Interaction | None:
        """What :meth:`play` returns for ``request``'s key, found without computing it: when
        the request has the body bytes, method, URL and content-type of an indexed interaction,
        and its key has one left among those indexed (or is a repeat with ``allow_repeats``).
        ``None`` otherwise: :meth:`play` then decides, with the key."""
        sent = self._sent.get(request.content)
        if (
            sent is None
            or sent[1] != request.url
            or sent[0] != request.method
            or sent[2] != sent_content_type(request)
        ):
            return None
        return self._next(sent[3], allow_repeats)

    def _next(self, entry: list[int], allow_repeats: bool) -> Interaction | None:
        """Play the next interaction of a key's entry; once all are indexed and played, its last
        again with ``allow_repeats``. ``None`` when none is left among those indexed."""
        turn = entry[0] + 1
        if turn < len(entry):
            entry[0] = turn
            position = entry[turn]
            self._played[position] = True
            return self.interactions[position]
        if allow_repeats and len(self._keys) == len(self.interactions):
            return self.interactions[entry[-1]]
        return None

    def peek(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """What :meth:`play` would return, without using it up.

        A request that an injected fault breaks (a cut stream, a malformed event) borrows
        the recorded answer: it counts as played, but the retry that follows gets it whole.
        """
        before = self._index.get(key)
        used = 0 if before is None else before[0]
        interaction = self.play(key, allow_repeats=allow_repeats)
        if (entry := self._index.get(key)) is not None:
            entry[0] = used  # borrowed, not used up
        return interaction

    def play_position(self, position: int) -> Interaction:
        """Play one interaction chosen by position (a fuzzy match): it counts as played, and
        when it was next in line for its key, that key moves on to the following one."""
        self._index_on(stop=position + 1)
        self._played[position] = True
        entry = self._index[self._keys[position]]
        turn = entry[0] + 1
        if turn < len(entry) and entry[turn] == position:
            entry[0] = turn
        return self.interactions[position]

    def play_similar(self, request: Request, threshold: float, path: Path) -> Interaction | None:
        """Play the unplayed interaction whose message text is close enough to ``request``'s
        (a fuzzy match), after a warning that lists the diff; ``None`` when none is. The
        diagnostics (and difflib) are imported here, off the path of a request that matches."""
        from .diagnose import FuzzyMatchWarning, fuzzy_match

        match = fuzzy_match(request, self.interactions, self.rules, threshold, skip=self.played_positions)
        if match is None:
            return None
        warnings.warn(FuzzyMatchWarning(match.warning(path, request)), stacklevel=2)
        return self.play_position(match.position)

    def play_masked(self, request: Request) -> Interaction | None:
        """Play the unplayed interaction ``request`` matches when each placeholder inside a
        recorded string stands for any text (a key quoted in a prompt, see :mod:`.masked`)."""
        from .masked import masked_match

        position = masked_match(request, self.interactions, self.rules, self.played_positions)
        return None if position is None else self.play_position(position)

    def position_of(self, interaction: Interaction) -> int | None:
        return next((i for i, known in enumerate(self.interactions) if known is interaction), None)

    @property
    def played_positions(self) -> frozenset[int]:
        return frozenset(i for i, played in enumerate(self._played) if played)

    def times_recorded(self, key: str) -> int:
        entry = self.index().get(key)
        return 0 if entry is None else len(entry) - 1

    def append(self, key: str, interaction: Interaction) -> None:
        """Add a newly recorded interaction, already played by the request that caused it."""
        entry = self.index().setdefault(key, [0])
        entry.append(len(self.interactions))
        entry[0] = len(entry) - 1
        self._learn([interaction], [entry])
        self.interactions.append(interaction)
        self._keys.append(key)
        self._played.append(True)

    @property
    def unplayed(self) -> list[Interaction]:
        return [i for i, played in zip(self.interactions, self._played, strict=True) if not played]

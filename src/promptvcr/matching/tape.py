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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..cassettes.jobs import job_state, poll_endpoint
from ..cassettes.models import Interaction, Request
from ..files.loaded import LoadedInteractions
from ..files.persister import collection_paused
from .jsonrpc import reads_again
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

    Each key's entry in ``_index`` is the position of its one interaction, or the list of
    the positions of its interactions in recorded order; ``_turns`` counts those played. A
    replayed request looks up one entry (issue 22: in a large cassette every lookup is a cold
    one). Positions are ints and most keys have one: the index holds nothing the garbage
    collector tracks per interaction (issue 48), beside the interactions themselves, which a
    loaded cassette keeps in compact form (:mod:`..files.loaded`). The entries hold the first
    ``len(_keys)`` interactions: the others are not indexed yet.
    """

    interactions: Sequence[Interaction] = field(default_factory=list)
    rules: Sequence[Rule] = DEFAULT_RULES
    _index: dict[str, int | list[int]] = field(default_factory=dict, init=False, repr=False)
    _turns: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _played: bytearray = field(default_factory=bytearray, init=False, repr=False)
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    #: Each indexed body's bytes -> the method, URL and content-type it was first recorded
    #: with, and that request's key (see :meth:`play_sent`).
    _sent: dict[bytes, tuple[str, str, str, str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self._played = bytearray(len(self.interactions))
        if (keys := known_keys(self.interactions, self.rules)) is not None:
            self._add_keys(keys)

    def _add_keys(self, keys: Sequence[str]) -> None:
        start = position = len(self._keys)
        for key in keys:
            self._place(key, position)
            position += 1
        self._learn(_requests(self.interactions, start, position), keys)
        self._keys.extend(keys)

    def _learn(self, requests: Iterable[Request], keys: Iterable[str]) -> None:
        """Find each key's entry by its request's body bytes from now on (see
        :meth:`play_sent`). Bytes learnt already keep the method, URL and content-type they
        were first recorded with: a request that sends them another way goes by its key."""
        sent = self._sent
        for request, key in zip(requests, keys, strict=True):
            if request.content not in sent:
                sent[request.content] = (request.method, request.url, sent_content_type(request), key)

    def _index_on(self, until: str | None = None, stop: int | None = None) -> None:
        """Index the interactions not indexed yet, in order: all of them, or up to and with the
        first whose key is ``until``, or up to position ``stop``."""
        start, end = len(self._keys), len(self.interactions) if stop is None else stop
        if start >= end:
            return
        rules, computed = self.rules, []
        with collection_paused():  # thousands of keys kept: a collection would only walk the heap
            for request in _requests(self.interactions, start, end):
                computed.append(key := request_key(request, rules))
                if key == until:
                    break
        self._add_keys(computed)
        if len(self._keys) == len(self.interactions):  # all computed: the next read brings them
            offer_keys(self.interactions, self.rules, self._keys)

    def _positions(self, key: str) -> list[int]:
        entry = self._index.get(key)
        if entry is None:
            return []
        return [entry] if isinstance(entry, int) else entry

    def index(self) -> dict[str, list[int]]:
        """Every key's positions, in recorded order, all interactions indexed."""
        self._index_on()
        return {key: self._positions(key) for key in self._index}

    def play(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """The next unplayed interaction recorded under ``key``, or ``None`` on a miss.

        With ``allow_repeats`` the last one is played again once all have been played, and
        so is a JSON-RPC read's (:data:`.jsonrpc.READS`) without it: a live server answers
        the same read again the same way.
        """
        while True:
            if key in self._index and (found := self._next(key, allow_repeats)) is not None:
                return found
            if len(self._keys) == len(self.interactions):  # a miss, or a key used up
                return None
            self._index_on(until=key)  # none left among those indexed: look further on

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

    def _next(self, key: str, allow_repeats: bool) -> Interaction | None:
        """Play the next interaction of an indexed key; once all are indexed and played, its
        last again with ``allow_repeats``, or when it only reads (an MCP ``tools/list``:
        :func:`.jsonrpc.reads_again`). ``None`` when none is left among those indexed."""
        entry = self._index[key]
        turn = self._turns.get(key, 0)
        if type(entry) is int:
            position, count = entry, 1
        else:
            count = len(entry)  # type: ignore[arg-type]
            position = entry[turn if turn < count else -1]  # type: ignore[index]
        if turn < count:
            self._turns[key] = turn + 1
            self._played[position] = 1
            interaction = self.interactions[position]
            if turn == 0 and _polls(interaction):
                self._poll_begun(key)
            return interaction
        if len(self._keys) == len(self.interactions) and (
            allow_repeats
            or reads_again(self.interactions[position].request.content)
            or _job_ended(self.interactions[position])
        ):
            return self.interactions[position]
        return None

    def _poll_begun(self, key: str) -> None:
        """A job's first poll replayed: all its recorded polls count as played, so that code that
        stops polling sooner than the recording did (its job ended sooner, it gave up) leaves
        none of them unused: the job's answers are one sequence, used as far as the code read it."""
        self._index_on()
        for position in self._positions(key):
            self._played[position] = 1

    def find(
        self, request: Request, key: str, *, allow_repeats: bool, fuzzy: float, path: Path
    ) -> Interaction | None:
        """Play the recording that answers ``request``: the next under its ``key``, else one whose
        placeholders a key quoted in a text fills (:meth:`play_masked`), else with ``fuzzy`` the
        most similar (:meth:`play_similar`); ``None``: nothing on the tape answers it."""
        found = self.play(key, allow_repeats=allow_repeats) or self.play_masked(request)
        return found if found is not None or not fuzzy else self.play_similar(request, fuzzy, path)

    def peek(self, key: str, *, allow_repeats: bool = False) -> Interaction | None:
        """What :meth:`play` would return, without using it up.

        A request that an injected fault breaks (a cut stream, a malformed event) borrows
        the recorded answer: it counts as played, but the retry that follows gets it whole.
        """
        used = self._turns.get(key, 0)
        interaction = self.play(key, allow_repeats=allow_repeats)
        if key in self._index:
            self._turns[key] = used  # borrowed, not used up
        return interaction

    def play_position(self, position: int) -> Interaction:
        """Play one interaction chosen by position (a fuzzy match): it counts as played, and
        when it was next in line for its key, that key moves on to the following one."""
        self._index_on(stop=position + 1)
        self._played[position] = 1
        key = self._keys[position]
        positions, turn = self._positions(key), self._turns.get(key, 0)
        if turn < len(positions) and positions[turn] == position:
            self._turns[key] = turn + 1
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

    def play_drifted(self, request: Request) -> tuple[Interaction, tuple[str, ...]] | None:
        """Play the unplayed interaction ``request`` differs from only in what its tools returned
        (``on_tool_drift="replay"``), with one line per changed result; ``None`` when none does.
        The diagnostics are imported here, off the path of a request that matches."""
        from .whymissed import drifted_tools

        found = drifted_tools(request, self.interactions, self.rules, skip=self.played_positions)
        if found is None:
            return None
        position, why = found
        return self.play_position(position), tuple(change.line() for change in why.changes)

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
        self._index_on()
        return len(self._positions(key))

    def append(self, key: str, interaction: Interaction) -> None:
        """Add a newly recorded interaction, already played by the request that caused it."""
        self._index_on()
        self._place(key, len(self.interactions))
        self._turns[key] = len(self._positions(key))
        self._learn([interaction.request], [key])
        self.interactions.append(interaction)  # type: ignore[attr-defined]
        self._keys.append(key)
        self._played.append(1)

    def _place(self, key: str, position: int) -> None:
        """Put ``position`` last among ``key``'s: an int alone, a list when there are more."""
        entry = self._index.get(key)
        if entry is None:
            self._index[key] = position
        elif type(entry) is int:
            self._index[key] = [entry, position]
        else:
            entry.append(position)  # type: ignore[union-attr]

    @property
    def unplayed(self) -> list[Interaction]:
        return [i for i, played in zip(self.interactions, self._played, strict=True) if not played]


def _polls(interaction: Interaction) -> bool:
    """Whether ``interaction`` polls a known long job (:mod:`..cassettes.jobs`)."""
    return poll_endpoint(interaction.request.method, interaction.request.url) is not None


def _job_ended(interaction: Interaction) -> bool:
    """Whether ``interaction`` polled a known job and its answer says the job ended: a job that
    ended answers every later poll the same, as the provider would."""
    request, response = interaction.request, interaction.response
    if poll_endpoint(request.method, request.url) is None:
        return False
    state = job_state(request.method, request.url, response.content_type, response.chunks)
    return state is not None and state.ended


def _requests(interactions: Sequence[Interaction], start: int, end: int) -> Iterable[Request]:
    """The requests at ``start`` to ``end``, without building a loaded interaction for each."""
    if type(interactions) is LoadedInteractions:
        return interactions.requests(start, end)
    return (interaction.request for interaction in interactions[start:end])

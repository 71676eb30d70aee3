"""The tape plays each key's interactions in recorded order, whatever mix of calls reaches it.

``Tape`` keeps one compact entry per key (issue 22); these properties hold it to a plain
model of the rules: ``play`` takes the next unplayed interaction of the key (the last one
again with ``allow_repeats``), ``peek`` borrows it without using it up, ``play_position``
plays a chosen one (moving its key on when it was next in line), ``append`` adds one that is
already played.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.matching.key import request_key
from promptvcr.matching.tape import Tape

BODIES = [b'{"q": "a"}', b'{"q": "b"}', b'{"q": "c"}']


def interaction(body: int, n: int) -> Interaction:
    request = Request(
        "POST",
        "https://api.openai.com/v1/chat/completions",
        {"content-type": "application/json"},
        BODIES[body],
    )
    return Interaction(request, Response(200, {"x-n": str(n)}, [b"{}"]))


class Model:
    """The rules, written the plain way: a list of positions and a turn per key."""

    def __init__(self, interactions: list[Interaction]) -> None:
        self.interactions = list(interactions)
        self.keys = [request_key(i.request) for i in interactions]
        self.turns: dict[str, int] = {}
        self.played = [False] * len(interactions)

    def positions(self, key: str) -> list[int]:
        return [p for p, k in enumerate(self.keys) if k == key]

    def take(self, key: str, repeats: bool, use_up: bool) -> Interaction | None:
        positions, turn = self.positions(key), self.turns.get(key, 0)
        if not positions:
            return None
        if turn >= len(positions):
            return self.interactions[positions[-1]] if repeats else None
        if use_up:
            self.turns[key] = turn + 1
        self.played[positions[turn]] = True
        return self.interactions[positions[turn]]

    def play_position(self, position: int) -> Interaction:
        self.played[position] = True
        key = self.keys[position]
        positions, turn = self.positions(key), self.turns.get(key, 0)
        if turn < len(positions) and positions[turn] == position:
            self.turns[key] = turn + 1
        return self.interactions[position]

    def append(self, key: str, added: Interaction) -> None:
        self.interactions.append(added)
        self.keys.append(key)
        self.played.append(True)
        self.turns[key] = len(self.positions(key))


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["play", "peek", "position", "append"]), st.integers(0, 2), st.booleans()),
    max_size=30,
)


@property_settings(300)
@given(recorded=st.lists(st.integers(0, 2), max_size=8), operations=OPERATIONS, counts=st.booleans())
def test_the_tape_plays_as_the_plain_model_does(
    recorded: list[int], operations: list[tuple[str, int, bool]], counts: bool
) -> None:
    """``counts``: ask ``times_recorded`` after every step, which indexes every key at once;
    else the tape indexes only as far as each step needs (keys are computed lazily)."""
    interactions = [interaction(body, n) for n, body in enumerate(recorded)]
    tape, model = Tape(list(interactions)), Model(interactions)
    keys = [request_key(interaction(body, 0).request) for body in range(3)]
    for n, (operation, which, repeats) in enumerate(operations):
        key = keys[which]
        if operation == "play":
            assert tape.play(key, allow_repeats=repeats) is model.take(key, repeats, use_up=True)
        elif operation == "peek":
            assert tape.peek(key, allow_repeats=repeats) is model.take(key, repeats, use_up=False)
        elif operation == "position" and model.interactions:
            position = which % len(model.interactions)
            assert tape.play_position(position) is model.play_position(position)
        elif operation == "append":
            added = interaction(which, 100 + n)
            tape.append(key, added)
            model.append(key, added)
        assert tape.played_positions == {p for p, played in enumerate(model.played) if played}
        assert tape.unplayed == [
            i for i, played in zip(model.interactions, model.played, strict=True) if not played
        ]
        if counts:
            assert [tape.times_recorded(k) for k in keys] == [len(model.positions(k)) for k in keys]
    assert [tape.times_recorded(k) for k in keys] == [len(model.positions(k)) for k in keys]

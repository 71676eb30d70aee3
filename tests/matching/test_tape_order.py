"""The tape plays each key's interactions in recorded order, whatever mix of calls reaches it.

``Tape`` keeps one compact entry per key (issue 22); these properties hold it to a plain
model of the rules: ``play`` takes the next unplayed interaction of the key (the last one
again with ``allow_repeats``), ``peek`` borrows it without using it up, ``play_position``
plays a chosen one (moving its key on when it was next in line), ``append`` adds one that is
already played. A request sent is found by its bytes (``play_sent``) when it sends a
recorded one's bytes, method, URL and content-type, else by its key: either way as the model
takes its key, whether its bytes were recorded under one URL or two, or sent another way.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.matching.key import request_key
from promptvcr.matching.tape import Tape

BODIES = [b'{"q": "a"}', b'{"q": "b"}', b"q=c&r=d"]
TYPES = ["application/json", "application/json", "application/x-www-form-urlencoded"]


URLS = ["https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/responses"]


def interaction(body: int, n: int, url: int = 0) -> Interaction:
    request = Request("POST", URLS[url], {"content-type": TYPES[body]}, BODIES[body])
    return Interaction(request, Response(200, {"x-n": str(n)}, [b"{}"]))


def sent(body: int, way: int) -> Request:
    """A request as the code under test sends it, to either URL (``way % 2``): as recorded;
    the same JSON or form laid out another way (the same key, other bytes); the recorded
    bytes as plain text (the same key for JSON, which is read whatever the content-type
    says; another for the form); or the recorded bytes with another method."""
    request = interaction(body, 0, way % 2).request
    if way // 2 == 1:
        request.content = request.content.replace(b": ", b":").replace(b"q=c&r=d", b"r=d&q=c")
    elif way // 2 == 2:
        request.headers = {"content-type": "text/plain"}
    elif way // 2 == 3:
        request.method = "PUT"
    return request


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
    st.tuples(
        st.sampled_from(["play", "peek", "position", "append", "send"]),
        st.integers(0, 2),
        st.booleans(),
        st.integers(0, 7),
    ),
    max_size=30,
)


@property_settings(300)
@given(recorded=st.lists(st.integers(0, 5), max_size=8), operations=OPERATIONS, counts=st.booleans())
def test_the_tape_plays_as_the_plain_model_does(
    recorded: list[int], operations: list[tuple[str, int, bool, int]], counts: bool
) -> None:
    """``counts``: ask ``times_recorded`` after every step, which indexes every key at once;
    else the tape indexes only as far as each step needs (keys are computed lazily).
    ``recorded`` holds each body to either URL (``n // 3``)."""
    interactions = [interaction(r % 3, n, r // 3) for n, r in enumerate(recorded)]
    tape, model = Tape(list(interactions)), Model(interactions)
    keys = [request_key(interaction(body, 0).request) for body in range(3)]
    for n, (operation, which, repeats, way) in enumerate(operations):
        key = keys[which]
        if operation == "send":  # as a cassette does: by the bytes, else by the key
            request = sent(which, way)
            found = tape.play_sent(request, allow_repeats=repeats)
            if found is None:
                found = tape.play(request_key(request), allow_repeats=repeats)
            assert found is model.take(request_key(request), repeats, use_up=True)
        elif operation == "play":
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


def test_bytes_sent_another_way_are_not_found_by_them() -> None:
    """The bytes alone do not pick an interaction: a request whose content-type, method or
    URL differs from the recording of those bytes may have another key, so ``play_sent``
    leaves it to the key (here the plain-text form and the ``PUT`` have keys never recorded;
    the bytes sent to the second URL were recorded there too)."""
    first, second = interaction(2, 0), interaction(2, 1, url=1)
    tape = Tape([first, second])
    tape.index()
    for way in (4, 6, 1):  # plain text, PUT, the second URL
        assert tape.play_sent(sent(2, way)) is None
    assert [tape.play(request_key(sent(2, way))) for way in (4, 6)] == [None, None]
    assert tape.play(request_key(sent(2, 1))) is second
    assert tape.play_sent(sent(2, 0)) is first
    assert tape.unplayed == []

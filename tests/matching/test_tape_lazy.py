"""The tape computes keys in recorded order, only as far as the requests need (issue 22).

A test replaying the first interactions of a large cassette computes a few keys; a request
further on indexes up to it; a miss, or what needs every key, indexes them all. The order
of play is the plain model's whatever the mix (see ``test_tape_order``).
"""

from __future__ import annotations

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.matching.key import request_key
from promptvcr.matching.tape import Tape


def interaction(n: int, body: bytes | None = None) -> Interaction:
    request = Request(
        "POST",
        "https://api.openai.com/v1/chat/completions",
        {"content-type": "application/json"},
        body if body is not None else b'{"q": %d}' % n,
    )
    return Interaction(request, Response(200, {"x-n": str(n)}, [b"{}"]))


def test_keys_are_computed_as_far_as_the_requests_need() -> None:
    recorded = [interaction(n) for n in range(50)]
    tape = Tape(list(recorded))
    assert tape._keys == []  # entering computes none
    assert tape.play(request_key(recorded[0].request)) is recorded[0]
    assert len(tape._keys) == 1
    assert tape.play(request_key(recorded[9].request)) is recorded[9]
    assert len(tape._keys) == 10
    assert tape.play(request_key(recorded[3].request)) is recorded[3]  # indexed already
    assert len(tape._keys) == 10
    assert tape.play_position(20) is recorded[20]
    assert len(tape._keys) == 21
    assert tape.play(request_key(interaction(99).request)) is None  # a miss looks at every one
    assert len(tape._keys) == 50
    assert tape.unplayed == [i for n, i in enumerate(recorded) if n not in (0, 3, 9, 20)]


def test_a_key_used_up_among_those_indexed_looks_further_on() -> None:
    same = b'{"q": "again"}'
    recorded = [interaction(0, same), interaction(1), interaction(2, same), interaction(3)]
    tape = Tape(list(recorded))
    key = request_key(recorded[0].request)
    assert tape.play(key) is recorded[0]
    assert len(tape._keys) == 1
    assert tape.play(key) is recorded[2]
    assert len(tape._keys) == 3
    assert tape.play(key) is None
    assert tape.play(key, allow_repeats=True) is recorded[2]
    assert tape.times_recorded(key) == 2


def test_a_peek_before_the_key_is_indexed_uses_nothing_up() -> None:
    recorded = [interaction(n) for n in range(5)]
    tape = Tape(list(recorded))
    key = request_key(recorded[4].request)
    assert tape.peek(key) is recorded[4]
    assert tape.play(key) is recorded[4]
    assert tape.play(key) is None


def test_a_request_sent_as_recorded_is_found_by_its_bytes_once_indexed() -> None:
    """``play_sent`` finds only what is indexed (it computes no key): a request further on
    goes by its key, which indexes on, and from then on the ones before it are found too."""
    recorded = [interaction(n) for n in range(20)]
    tape = Tape(list(recorded))
    assert tape.play_sent(recorded[5].request) is None  # not indexed: the key decides
    assert tape._keys == []
    assert tape.play(request_key(recorded[5].request)) is recorded[5]
    assert tape.play_sent(recorded[2].request) is recorded[2]
    assert tape.play_sent(recorded[2].request) is None  # used up: the key decides (a miss)
    assert tape.play_sent(recorded[2].request, allow_repeats=True) is None  # not all indexed yet
    assert tape.play(request_key(recorded[2].request), allow_repeats=True) is recorded[2]
    assert len(tape._keys) == 20  # the repeat looked at every one
    assert tape.play_sent(recorded[2].request, allow_repeats=True) is recorded[2]
    assert tape.unplayed == [i for n, i in enumerate(recorded) if n not in (2, 5)]

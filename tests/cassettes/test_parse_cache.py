"""The parse cache: a large cassette read once is found again by its text, exactly as parsed."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

import promptvcr
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.cassettes.wsframes import Frame, WebSocketSession
from promptvcr.files import fileformat, parsecache, persister, smallcache
from promptvcr.files.compactform import Compact
from promptvcr.files.loaded import LoadedInteractions
from promptvcr.matching import key as keys
from promptvcr.matching.rules import DEFAULT_RULES
from promptvcr.matching.tape import Tape

URL = "http://127.0.0.1:9/v1/chat/completions"


def _chat(i: int) -> Interaction:
    sent = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": f"question {i}"}]})
    answer = json.dumps({"id": f"c-{i}", "choices": [{"message": {"content": f"answer {i}"}}]}, indent=2)
    return Interaction(
        Request("POST", URL, {"content-type": "application/json"}, sent.encode()),
        Response(200, {"content-type": "application/json"}, [answer.encode()], timing=Timing(0.25, (0.5,))),
        recorded=datetime(2026, 11, 24, 6, 0, i % 60, tzinfo=timezone.utc),
    )


def _varied() -> list[Interaction]:
    stream = Response(
        200,
        {"content-type": "text/event-stream"},
        [b'data: {"a": 1}\n\n', b"data: [DONE]\n\n"],
        timing=Timing(0.1, (0.2, 0.3)),
    )
    closed = Response(200, {"content-type": "text/event-stream"}, [b'data: {"b":2}\n\n'], end="closed")
    cut = Response(200, {"content-type": "text/plain"}, [b"half an ans"], end="disconnect")
    binary = Response(200, {"content-type": "image/png"}, [bytes(range(256))])
    return [
        *(_chat(i) for i in range(5)),
        Interaction(Request("POST", URL, {"content-type": "application/json"}, b'{"stream":true}'), stream),
        Interaction(Request("POST", URL, {}, b"x=1&y=2"), closed),
        Interaction(Request("GET", URL + "?page=2"), cut),
        Interaction(Request("GET", "http://127.0.0.1:9/img"), binary),
        Interaction(Request("GET", "http://127.0.0.1:9/empty"), Response(204)),
    ]


def _write(path: Path, interactions: list[Interaction]) -> None:
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in interactions], path))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own, used for every file however small."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(folder))
    monkeypatch.setattr(parsecache, "MIN_SIZE", 0)
    return folder


def _parsed(path: Path) -> list[Interaction]:
    return fileformat.loads(path.read_text(), path)


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, path: Path) -> tuple[list[Interaction], list[Compact] | None]:
        raise AssertionError("parsed instead of read from the cache")

    monkeypatch.setattr(fileformat, "read", refuse)  # what a load parses a file with


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_cassette_read_from_the_cache_equals_the_parsed_one(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = tmp_path / f"c.{suffix}"
    _write(path, _varied())
    expected = _parsed(path)
    first = persister.load(path)
    assert first.interactions == expected
    assert len(_entries(cache)) == 1
    _no_parsing(monkeypatch)
    second = persister.load(path)
    assert second.interactions == expected  # every field: timing, end, playback, recorded
    assert [i.response.playback for i in second.interactions] == [i.response.playback for i in expected]
    assert [i.recorded for i in second.interactions] == [i.recorded for i in expected]
    assert second.signature == first.signature
    # Each load has objects of its own.
    assert second.interactions[0].request.headers is not first.interactions[0].request.headers


def test_editing_the_file_even_keeping_its_size_reads_it_again(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    text = path.read_text()
    edited = text.replace("answer 3", "answer 7")
    assert len(edited) == len(text) and edited != text
    path.write_text(edited)
    loaded = persister.load(path)
    assert loaded.interactions == _parsed(path)
    assert b"answer 7" in loaded.interactions[3].response.content
    assert len(_entries(cache)) == 2


@pytest.mark.parametrize("damage", ["truncated", "garbage", "flipped", "empty"])
def test_a_damaged_entry_is_ignored_and_replaced(cache: Path, tmp_path: Path, damage: str) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    broken = {
        "truncated": data[: len(data) // 2],
        "garbage": b"not a cache entry at all",
        "flipped": data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:],
        "empty": b"",
    }[damage]
    entry.write_bytes(broken)
    assert persister.load(path).interactions == _parsed(path)
    assert entry.read_bytes() == data  # written again


def test_an_unwritable_cache_does_not_fail_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(parsecache, "MIN_SIZE", 0)
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    for _ in range(2):
        assert persister.load(path).interactions == _parsed(path)


@pytest.mark.parametrize("setting", ["off", "", "OFF"])
def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", setting)
    monkeypatch.setattr(parsecache, "MIN_SIZE", 0)
    monkeypatch.chdir(tmp_path)
    assert parsecache.cache_dir() is None
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    assert persister.load(path).interactions == _parsed(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_where_the_cache_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROMPTVCR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert parsecache.cache_dir() == tmp_path / "xdg" / "promptvcr"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert parsecache.cache_dir() == tmp_path / "home" / ".cache" / "promptvcr"


def test_small_files_get_no_entry_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """They share the memo of small files (see test_small_cache.py)."""
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(smallcache, "_memo", None)
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    assert persister.load(path).interactions == _parsed(path)
    smallcache.flush()
    assert [entry.name[:6] for entry in _entries(tmp_path / "cache")] == ["small-", "small-"]  # and its lock


def test_a_websocket_session_leaves_its_file_uncached(cache: Path, tmp_path: Path) -> None:
    session = WebSocketSession(
        [Frame("client", "text", b'{"type":"hello"}'), Frame("server", "text", b"{}", 0.5)]
    )
    handshake = Response(101, {"upgrade": "websocket"}, websocket=session)
    path = tmp_path / "c.yaml"
    _write(path, [*_varied(), Interaction(Request("GET", "ws://127.0.0.1:9/realtime"), handshake)])
    for _ in range(2):
        assert persister.load(path).interactions == _parsed(path)
    assert _entries(cache) == []


def test_the_cache_keeps_few_entries(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsecache, "MAX_ENTRIES", 2)
    for n in range(4):
        path = tmp_path / f"c{n}.yaml"
        _write(path, [_chat(i) for i in range(n + 1)])
        persister.load(path)
    assert len(_entries(cache)) == 2


def test_keys_come_with_the_cache_and_match_computed_ones(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    expected = [keys.computed_key(i.request) for i in _parsed(path)]
    first = persister.load(path).interactions
    assert Tape(first).index() == Tape(_parsed(path)).index()  # the whole index offers its keys
    second = persister.load(path).interactions
    assert isinstance(second, LoadedInteractions)
    assert second.keys(keys._token()) == expected
    keys._memory.clear()

    def computed(*args: object) -> str:
        raise AssertionError("computed a key the cache brought")

    monkeypatch.setattr(keys, "computed_key", computed)
    tape = Tape(second, rules=DEFAULT_RULES)
    for interaction, key in zip(second, expected, strict=True):
        assert tape.times_recorded(key) >= 1
        # A live request with the recorded bytes finds its key by a look-up.
        sent = Request(
            interaction.request.method,
            interaction.request.url,
            dict(interaction.request.headers),
            interaction.request.content,
        )
        assert keys.request_key(sent) == key


def test_other_rules_compute_their_own_keys(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    cached = persister.load(path).interactions
    rules = (*DEFAULT_RULES, lambda parts: parts)
    assert Tape(cached, rules=rules).index().keys() == {
        keys.computed_key(i.request, rules) for i in _parsed(path)
    }


def test_a_cassette_replays_the_same_from_the_cache(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    _write(path, [_chat(i) for i in range(3)])
    with promptvcr.use_cassette(path) as first:
        parsed = first.interactions
    assert _entries(cache)
    with promptvcr.use_cassette(path) as second:
        assert second.interactions == parsed
    assert os.path.exists(path)


def test_a_copy_of_cached_interactions_is_a_plain_list(cache: Path, tmp_path: Path) -> None:
    import copy
    import pickle

    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    cached = persister.load(path).interactions
    assert isinstance(cached, LoadedInteractions)
    for copied in (copy.copy(cached), copy.deepcopy(cached), pickle.loads(pickle.dumps(cached))):
        assert type(copied) is list and copied == cached


def test_keys_offered_after_a_first_read_go_into_the_entry_in_place(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    _write(path, _varied())
    first = persister.load(path).interactions
    (entry,) = _entries(cache)
    without_keys = entry.read_bytes()
    Tape(first).index()  # computes the keys and offers them
    with_keys = entry.read_bytes()
    # The interactions' part is the same bytes: only the digest and the keys' part changed.
    size = int.from_bytes(
        without_keys[parsecache._HEADER - parsecache._LENGTH : parsecache._HEADER], "little"
    )
    assert (
        with_keys[parsecache._HEADER : parsecache._HEADER + size]
        == without_keys[parsecache._HEADER : parsecache._HEADER + size]
    )
    assert len(with_keys) > len(without_keys)
    second = persister.load(path).interactions
    assert isinstance(second, LoadedInteractions)
    assert second.keys(keys._token()) == [keys.computed_key(i.request) for i in _parsed(path)]


def test_an_entry_whose_key_update_was_torn_is_read_again(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    first = persister.load(path).interactions
    (entry,) = _entries(cache)
    Tape(first)
    data = entry.read_bytes()
    entry.write_bytes(data[:-3])  # the keys written, the digest not (or a crash half-way)
    assert parsecache.lookup(entry.name, path) is None
    assert persister.load(path).interactions == _parsed(path)
    assert parsecache.lookup(entry.name, path) is not None  # replaced by a whole entry


@pytest.mark.parametrize(
    "text",
    ["", "interactions: []\nversion: 1\n", "\ufeff{}", "caf\u00e9 \u2028 \U0001f600 \x00\r\n", "x" * 99_999],
)
def test_an_entry_named_by_the_bytes_read_is_the_one_named_by_their_text(text: str) -> None:
    data = text.encode("utf-8")
    for fmt in ("yaml", "json"):
        assert parsecache.entry_name(data, fmt) == parsecache.entry_name(text, fmt)


def test_a_load_names_its_entry_by_the_file_s_text(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    _write(path, [*_varied(), _chat(99)])
    text = path.read_text(encoding="utf-8").replace("question 99", "question \u00e9\u2028\U0001f600")
    path.write_text(text, encoding="utf-8")
    persister.load(path)
    (entry,) = _entries(cache)
    assert entry.name == parsecache.entry_name(path.read_text(encoding="utf-8"), "json")


def test_any_byte_changed_in_an_entry_is_found(cache: Path, tmp_path: Path) -> None:
    """Entries are checked by CRC-32, which finds every change of one byte (and any burst of
    up to 32 bits): in the header, the interactions' part and the keys' part alike."""
    path = tmp_path / "c.json"
    _write(path, _varied())
    Tape(persister.load(path).interactions)  # with its keys
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    assert parsecache.lookup(entry.name, path) is not None
    for position in [*range(0, len(data), max(1, len(data) // 200)), len(data) - 1]:
        for flip in (0x01, 0x80, 0xFF):
            entry.write_bytes(data[:position] + bytes([data[position] ^ flip]) + data[position + 1 :])
            assert parsecache.lookup(entry.name, path) is None, (position, flip)

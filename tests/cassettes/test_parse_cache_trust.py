"""The parse cache trusts nothing it did not write (issue 54, scenario 9).

Anyone who can write into the cache folder could put an entry there: one with a valid CRC and
other answers under a cassette's name, another cassette's entry copied under this one's name,
or fields of the wrong type. Each is a cache miss: the cassette file's own answers replay, the
load never fails, and the entry is written anew. Entries are signed with a key of the cache's
own (``0600``, this user's); a key file anyone else could read or write is not used.
"""

from __future__ import annotations

import json
import marshal
import os
import zlib
from pathlib import Path

import pytest
from test_parse_cache import _chat, _entries, _parsed, _varied, _write

from promptvcr.files import cachekey, compactform, parsecache, persister, smallcache

_MAGIC, _LENGTH = b"PVCRPC06", 8


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """test_parse_cache's: a cache of this test's own, used for every file however small."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(folder))
    monkeypatch.setattr(parsecache, "MIN_SIZE", 0)
    return folder


def _entry(name: str, items: object, key: bytes, keys: object = None) -> bytes:
    """An entry as the cache lays it out, signed with ``key``."""
    part, tail = marshal.dumps(items), marshal.dumps(keys)
    length = len(part).to_bytes(_LENGTH, "little")
    signed = cachekey.signer(key, name)
    signed.update(length + part + tail)
    return _MAGIC + signed.digest() + length + part + tail


def _items_of(path: Path) -> list[tuple[object, ...]]:
    from promptvcr.files import fileformat

    return fileformat.read(path.read_text(), path)[1] or []


def _forged(path: Path) -> list[tuple[object, ...]]:
    """The items of ``path`` with every answer replaced: what an attacker would serve."""
    return [(*item[:6], (b'{"forged": true}',), *item[7:]) for item in _items_of(path)]


def test_the_key_is_made_private_and_entries_are_signed_with_it(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    key_file = cache / cachekey.KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert persister.load(path).interactions == _parsed(path)  # read back through the signature


@pytest.mark.parametrize("forger", ["crc", "other key", "no key"])
def test_an_entry_not_signed_by_the_cache_is_a_miss(cache: Path, tmp_path: Path, forger: str) -> None:
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    persister.load(path)
    (entry,) = _entries(cache)
    name = entry.name
    forged = _forged(path)
    if forger == "crc":  # the layout before: a CRC-32 is all a forger needs to get right
        part, tail = marshal.dumps(forged), marshal.dumps(None)
        crc = zlib.crc32(tail, zlib.crc32(part)).to_bytes(32, "little")
        entry.write_bytes(_MAGIC + crc + len(part).to_bytes(_LENGTH, "little") + part + tail)
    elif forger == "other key":
        entry.write_bytes(_entry(name, forged, os.urandom(32)))
    else:
        entry.write_bytes(_entry(name, forged, b""))
    loaded = persister.load(path).interactions
    assert loaded == _parsed(path) and all(b"forged" not in i.response.content for i in loaded)


def test_another_cassette_s_entry_is_never_served(cache: Path, tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine.yaml", tmp_path / "theirs.yaml"
    _write(mine, [_chat(1)])
    _write(theirs, [_chat(2)])
    persister.load(mine)
    mine_entry = {p.name for p in _entries(cache)}
    persister.load(theirs)
    (theirs_entry,) = {p.name for p in _entries(cache)} - mine_entry
    (mine_name,) = mine_entry
    (cache / mine_name).write_bytes((cache / theirs_entry).read_bytes())  # signed, but for another name
    assert persister.load(mine).interactions == _parsed(mine)


WRONG = {
    "method int": lambda i: (1, *i[1:]),
    "url bytes": lambda i: (i[0], b"http://x", *i[2:]),
    "odd headers": lambda i: (*i[:2], ("content-type",), *i[3:]),
    "header int": lambda i: (*i[:2], ("a", 1), *i[3:]),
    "body str": lambda i: (*i[:3], "text", *i[4:]),
    "status str": lambda i: (*i[:4], "200", *i[5:]),
    "status 99": lambda i: (*i[:4], 99, *i[5:]),
    "chunks list": lambda i: (*i[:6], [b"x"], *i[7:]),
    "chunk str": lambda i: (*i[:6], ("x",), *i[7:]),
    "timing str": lambda i: (*i[:7], "fast", *i[8:]),
    "end unknown": lambda i: (*i[:8], "exploded", i[9]),
    "date month 13": lambda i: (*i[:9], (2026, 13, 1, 0, 0, 0, 0)),
    "short item": lambda i: i[:5],
    "keys of ints": None,
}


@pytest.mark.parametrize("wrong", list(WRONG))
def test_an_entry_with_a_field_of_the_wrong_type_is_a_miss(cache: Path, tmp_path: Path, wrong: str) -> None:
    path = tmp_path / "c.json"
    _write(path, _varied())
    persister.load(path)
    (entry,) = _entries(cache)
    key = cachekey.key_for(cache)
    assert key is not None
    items = _items_of(path)
    change = WRONG[wrong]
    if change is None:
        entry.write_bytes(_entry(entry.name, items, key, (b"token", [1, 2])))
    else:
        entry.write_bytes(_entry(entry.name, [change(items[0]), *items[1:]], key))
    assert not compactform.is_item(change(items[0])) if change else True
    loaded = persister.load(path).interactions
    assert loaded == _parsed(path)  # the file's own answers, every one readable
    assert [i.response.content for i in loaded] == [i.response.content for i in _parsed(path)]


@pytest.mark.parametrize("problem", ["readable by others", "another owner"])
def test_a_key_file_others_could_read_or_write_is_not_used(cache: Path, tmp_path: Path, problem: str) -> None:
    if problem == "another owner" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    cache.mkdir()
    key_file = cache / cachekey.KEY_FILE
    key = os.urandom(32)
    key_file.write_bytes(key)
    if problem == "readable by others":
        key_file.chmod(0o644)
    else:
        key_file.chmod(0o600)
        os.chown(key_file, 4242, 4242)
    path = tmp_path / "c.yaml"
    _write(path, _varied())
    name = parsecache.file_entry_name(path.read_bytes(), path)
    (cache / name).write_bytes(_entry(name, _forged(path), key))  # whoever knows that key forged it
    cachekey._read.cache_clear()
    loaded = persister.load(path).interactions
    assert loaded == _parsed(path) and all(b"forged" not in i.response.content for i in loaded)


def test_the_memo_of_small_files_is_signed_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(folder))
    path = tmp_path / "small.yaml"
    _write(path, [_chat(3)])
    persister.load(path)
    smallcache.flush()
    (memo,) = [p for p in folder.glob("small-*") if not p.name.endswith(".lock")]
    data = memo.read_bytes()
    head = len(b"PVCRSM04") + cachekey.MAC_SIZE
    entries = marshal.loads(data[head:])
    name = next(iter(entries))
    forged = [(*item[:6], (b'{"forged": true}',), *item[7:]) for item in _items_of(path)]
    entries[name] = (marshal.dumps(forged), entries[name][1], None)
    body = marshal.dumps(entries)
    memo.write_bytes(data[:8] + zlib.crc32(body).to_bytes(4, "little").ljust(cachekey.MAC_SIZE, b"\0") + body)
    monkeypatch.setattr(smallcache, "_memo", None)  # a new process reads the memo file again
    loaded = persister.load(path).interactions
    assert loaded == _parsed(path) and b"forged" not in loaded[0].response.content
    assert json.loads(loaded[0].response.content)["choices"]

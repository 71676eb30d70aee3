"""Small cassettes read before: their parsed form kept together in one file, read once per process.

A suite usually has a cassette per test, each a few KiB. Parsing one takes little, but it is
paid in every test's setup: 0.13 ms of the 0.6 ms promptvcr added to each test of a 200-test
suite (a 720-byte YAML cassette, measured in that suite: issue 22). Large files have an entry
each in the parse cache (:mod:`.parsecache`); an entry per small file would cost every test a
file opened, and on a first read one more written. So small files share one memo file: the
first small cassette a process loads reads it whole, and the process writes it back with
what it added when it exits (:mod:`atexit`: pytest-xdist's workers too).

Entries are the parse cache's: the compact form of a file's interactions, named by a hash of
its text, its format and promptvcr's code (:func:`.parsecache.entry_name`), so an edited file,
even one that keeps its size, is parsed again. Each also keeps the tokens its answers report,
which the pytest plugin's summary counts for every test (``Response.usage``), and its requests'
keys once the matching layer offers them (see :class:`.parsecache.CachedInteractions`):
computing the key of a test's one request was 17 us of every test's setup (issue 22).

The same rules hold as for the parse cache: the memo is never a reason for a load to fail
(a damaged memo, or one not signed by the cache's key, is ignored and replaced, an unwritable
one skipped; see :mod:`.cachekey`), every field of an entry is checked before it is used; it
holds exactly what the cassette files hold; it lives in the parse cache's folder, and
``PROMPTVCR_CACHE_DIR=off`` turns it off too. It keeps at most :data:`MAX_BYTES`: the entries
this process used, in the order it used them, then the others as they were, until it is
full. Processes that end together (pytest-xdist's workers) merge what they add under a file
lock.
"""

from __future__ import annotations

import atexit
import contextlib
import hmac
import marshal
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..cassettes.models import Interaction
from . import cachekey, cacheowner, compactform, fileformat, parsecache
from .loaded import LoadedInteractions

__all__ = ["MAX_BYTES", "flush", "loads"]

#: At most this many bytes of entries, on disk and held by a process. 8 MiB holds a few
#: thousand cassettes of a few KiB, and is read in a few milliseconds by a process's first load.
MAX_BYTES = 8 << 20
#: Memo files of other versions of promptvcr's code kept beside the current one.
_KEPT_VERSIONS = 3
_MAGIC = b"PVCRSM04"
_CHECK = cachekey.MAC_SIZE


#: An entry: the interactions' compact form, the tokens each response reports (the pytest
#: plugin's summary counts them for every test: 0.05 ms a test, when its answer is parsed again),
#: and the requests' keys with the token of the code that computed them, once known.
_Keys = tuple[bytes, Sequence[str]]
_Entry = tuple[bytes, tuple[tuple[int, int], ...], _Keys | None]


@dataclass
class _Memo:
    folder: Path
    file: Path
    #: What the file held when this process read it: entry name -> entry.
    found: dict[str, _Entry]
    #: The entries this process used or added, in that order.
    used: dict[str, _Entry] = field(default_factory=dict)
    used_bytes: int = 0
    added: bool = False


_lock = threading.Lock()
_memo: _Memo | None = None
_flush_registered = False


def loads(data: bytes, text: str, path: Path) -> Sequence[Interaction]:
    """:func:`.fileformat.loads` for a small file read as ``data`` (its ``text``), through the
    memo; held in compact form (:class:`.loaded.LoadedInteractions`)."""
    memo = _current()
    where = f" in {path}"
    if memo is None:
        interactions, items = fileformat.read(text, path)
        return LoadedInteractions(interactions if items is None else items, where, cassette=path)
    name = parsecache.file_entry_name(data, path)
    entry = memo.used.get(name) or memo.found.get(name)
    if entry is not None:
        with contextlib.suppress(ValueError, TypeError, EOFError, IndexError):  # damaged: parse it
            part, usages, keys = entry
            held = compactform.items_from(part)
            if len(usages) != len(held) or not all(_is_usage(usage) for usage in usages):
                raise ValueError("usages")
            _use(memo, name, entry, added=False)
            return LoadedInteractions(held, where, keys, _keeper(memo, name), usages, path)
    interactions, items = fileformat.read(text, path)
    compact = None if items is None else compactform.dumps(items)
    if compact is None or items is None:
        return interactions
    from ..cassettes.tokens import tokens_of  # here, on a miss: a process reading the memo never needs it

    # counted once: the plugin's summary asks next
    usages = tuple((t.input, t.output) for t in map(tokens_of, (i.response for i in interactions)))
    _use(memo, name, (compact, usages, None), added=True)
    return LoadedInteractions(items, where, None, _keeper(memo, name), usages, path)


def _keeper(memo: _Memo, name: str) -> Callable[[bytes, list[str]], None]:
    """What keeps the keys offered for the entry ``name`` (written with the memo at exit)."""

    def remember(token: bytes, keys: list[str]) -> None:
        with _lock:
            entry = memo.used.get(name)
            kept = (token, tuple(keys))  # a tuple of strings: not tracked by the garbage collector
            if entry is None or entry[2] == kept:  # not kept (the memo was full), or known
                return
            memo.used[name] = (entry[0], entry[1], kept)
            _added(memo)

    return remember


def _use(memo: _Memo, name: str, entry: _Entry, *, added: bool) -> None:
    size = len(entry[0])
    with _lock:
        if name in memo.used or memo.used_bytes + size > MAX_BYTES:
            return
        memo.used[name] = entry
        memo.used_bytes += size
        if added:
            _added(memo)


def _added(memo: _Memo) -> None:
    """``memo`` holds what its file does not: written at exit. Called under ``_lock``."""
    global _flush_registered
    memo.added = True
    if not _flush_registered:
        _flush_registered = True
        atexit.register(flush)


def _current() -> _Memo | None:
    """The memo of the cache folder in use (read on first use), or ``None`` when the cache is off."""
    global _memo
    folder = parsecache.cache_dir()
    if folder is None:
        return None
    memo = _memo
    if memo is not None and memo.folder is folder:  # the same folder: cache_dir() gives the same object
        return memo
    flush()  # the folder changed (a test pointed $PROMPTVCR_CACHE_DIR elsewhere): keep what was added
    file = folder / f"small-{parsecache.code_fingerprint().hex()}"
    with _lock:
        if _memo is None or _memo.file != file:
            _memo = _Memo(folder, file, _read(file))
        _memo.folder = folder
        return _memo


def _is_usage(value: object) -> bool:
    return type(value) is tuple and len(value) == 2 and all(type(n) is int for n in value)


def _signature(file: Path, body: bytes | memoryview) -> bytes | None:
    """The MAC of a memo's ``body`` under the cache's key (``None``: no key to be trusted)."""
    key = cachekey.key_for(file.parent, create=False)
    if key is None:
        return None
    signed = cachekey.signer(key, file.name)
    signed.update(body)
    return signed.digest()


def _read(file: Path) -> dict[str, _Entry]:
    """A memo file's entries; none for a missing or damaged file, or one the cache did not sign."""
    try:
        data = file.read_bytes()
    except OSError:
        return {}
    head = len(_MAGIC) + _CHECK
    check = _signature(file, memoryview(data)[head:])
    if (
        data[: len(_MAGIC)] != _MAGIC
        or check is None
        or not hmac.compare_digest(check, data[len(_MAGIC) : head])
    ):
        return {}
    try:
        entries = marshal.loads(data[head:])
    except (ValueError, TypeError, EOFError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {  # keys as tuples, which the garbage collector stops tracking (issue 48)
        name: entry if entry[2] is None else (entry[0], entry[1], (entry[2][0], tuple(entry[2][1])))
        for name, entry in entries.items()
        if isinstance(name, str)
        and isinstance(entry, tuple)
        and len(entry) == 3
        and isinstance(entry[0], bytes)
        and isinstance(entry[1], tuple)
        and (entry[2] is None or _is_keys(entry[2]))
    }


def _is_keys(value: object) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], bytes)
        and isinstance(value[1], (list, tuple))
        and all(isinstance(key, str) for key in value[1])
    )


def flush() -> None:
    """Write what this process added to the memo, merged with what the file holds now."""
    with _lock:
        memo = _memo
        if memo is None or not memo.added:
            return
        memo.added = False
    from filelock import FileLock, Timeout

    with contextlib.suppress(OSError, Timeout):
        cacheowner.claim(memo.file.parent)
        with FileLock(f"{memo.file}.lock", timeout=10):
            merged, total = dict(memo.used), memo.used_bytes
            for name, entry in (*_read(memo.file).items(), *memo.found.items()):
                if name not in merged and total + len(entry[0]) <= MAX_BYTES:
                    merged[name] = entry
                    total += len(entry[0])
            _write(memo.file, merged)
        _drop_other_versions(memo.file)


def _write(file: Path, entries: dict[str, _Entry]) -> None:
    body = marshal.dumps(entries)
    cachekey.key_for(file.parent)  # made on the first write
    signature = _signature(file, body)
    if signature is None:
        return  # no key this user may trust: no memo
    fd, temp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-small-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + signature + body)
        os.replace(temp, file)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _drop_other_versions(file: Path) -> None:
    """Keep the memo files of the :data:`_KEPT_VERSIONS` versions of the code used last (only
    memo files, only in a folder the cache owns: see :mod:`.cacheowner`)."""
    if not cacheowner.owns(file.parent):
        return
    others = []
    for other in file.parent.glob("small-*"):
        if other != file and cacheowner.is_own(other):
            with contextlib.suppress(OSError):
                others.append((other.stat().st_mtime_ns, other))
    for _, other in sorted(others, reverse=True)[_KEPT_VERSIONS:]:
        with contextlib.suppress(OSError):
            other.unlink()
            Path(f"{other}.lock").unlink(missing_ok=True)

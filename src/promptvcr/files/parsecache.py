"""A large cassette read once: its parsed interactions kept on disk, found again by its text.

Reading a 10,000-interaction YAML cassette walks about a million parser events and writes
every structured body back to its exact bytes: a second or more, paid again by every test
process. Files of :data:`MIN_SIZE` characters or more are therefore kept here after they
are read, in the compact form they were read into (:mod:`.compactform`: plain data, written
with :mod:`marshal`, which constructs no other objects, unlike ``pickle``). An entry
is named by a hash of the file's text, its format (YAML or JSON), Python's marshal format
and the source of the code that reads cassettes: any edit to the file, even one that keeps
its size, or to promptvcr, finds another name, and the file is read as before.

The cache is an optimisation and never a reason for a load to fail: an entry that cannot
be written (a read-only home, a full disk) is skipped, and one that is truncated, damaged or
not the cache's own is ignored and replaced. It trusts nothing it did not write: each entry
holds an HMAC of its name (the hash of the cassette's text) and content under the cache's own
key (:mod:`.cachekey`), so a forged entry, or another cassette's copied under this one's name,
is a cache miss; and every field of every interaction is checked for its type before any is
used (:func:`.compactform.is_item`), so the file's own answers replay. Interactions this form
cannot hold (a websocket session) leave their file uncached rather than lose data.

Secrets: an entry holds exactly what the cassette file holds, already redacted when it was
written, and nothing more (no request that was not recorded, no environment).

Where: ``$PROMPTVCR_CACHE_DIR``, else ``$XDG_CACHE_HOME/promptvcr``, else
``~/.cache/promptvcr``; ``PROMPTVCR_CACHE_DIR=off`` (or empty) turns it off. It keeps at most
:data:`MAX_ENTRIES` entries and :data:`MAX_BYTES` bytes, dropping the least recently used, and
deletes nothing but its own files in a folder it owns: a folder holding someone else's files
gets a subfolder for the cache instead (:mod:`.cacheowner`).

A cassette read from the cache is held in that compact form (:class:`.loaded.LoadedInteractions`,
out of the garbage collector's way) and offers its requests' keys to the matching layer,
which computes them once and offers them back to be kept. They go into the entry in place
(its interactions are not written, nor hashed, again): on a first read the entry is written
once, then its keys' part replaced when the tape offers them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import importlib.util
import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..cassettes.models import Interaction
from . import cachekey, cacheowner, compactform
from .compactform import Compact
from .loaded import LoadedInteractions
from .reading import is_json_path

__all__ = [
    "MIN_SIZE",
    "cache_dir",
    "code_fingerprint",
    "entry_name",
    "file_entry_name",
    "lookup",
    "store",
]

#: Files shorter than this (in characters) get no entry of their own: they share the memo of
#: small files (:mod:`.smallcache`). An entry is read 15-30 times faster than the text is parsed
#: at any size, but below this the time saved (12 ms for a 128 KiB YAML cassette of 190
#: interactions, 1.5 ms for JSON) is not worth a file opened, and on a first read one written.
MIN_SIZE = 128 << 10
MAX_ENTRIES = 256
MAX_BYTES = 512 << 20
#: Bumped when the compact form (or how it is hashed) changes.
_LAYOUT = b"promptvcr-parse-cache-6"
_MAGIC = b"PVCRPC06"
#: Names are SHA-256, cut to this many bytes: every file read is hashed whole, and SHA-256
#: is the one of hashlib's hashes that CPUs compute in hardware (x86's SHA extensions,
#: ARMv8's): 6.0 ms to name a 10,000-interaction JSON cassette (11.7 MB) where BLAKE2b took
#: 8.6 ms, on the machine of issue 22. A name must never be shared by two texts.
_DIGEST = 16
#: An entry's name and content are signed by HMAC-SHA256 under the cache's key (see
#: :mod:`.cachekey`): a CRC would find an entry torn on disk, not one written by someone else.
#: 2.3 ms for the 5 MB entry of that cassette, paid when it is written and by every read.
_CHECK = cachekey.MAC_SIZE
#: An entry: magic, the MAC of its name and of all that follows the header, the length of the
#: interactions' part, that part, then the keys' part (``None`` until keys are offered,
#: which then replace it in place: see :func:`_append_keys`).
_LENGTH = 8
_HEADER = len(_MAGIC) + _CHECK + _LENGTH


def cache_dir() -> Path | None:
    """Where entries live, or ``None`` when the cache is turned off. Asked on every load: the
    folder is worked out once per value of the variables it depends on (6 us each time, else)."""
    environ = os.environ
    return _cache_dir(environ.get("PROMPTVCR_CACHE_DIR"), environ.get("XDG_CACHE_HOME"), environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _cache_dir(configured: str | None, xdg: str | None, home: str | None) -> Path | None:
    if configured is not None:
        if not configured.strip() or configured.strip().lower() == "off":
            return None
        return cacheowner.folder_for(Path(configured))
    base = Path(xdg) if xdg else Path.home() / ".cache"  # Path.home() reads $HOME: ``home``
    return cacheowner.folder_for(base / "promptvcr")


@functools.cache
def code_fingerprint() -> bytes:
    """The running promptvcr's cassette-reading code: every source file's name, size and
    modification time (an installed release and a working copy being edited alike), and
    PyYAML's, found without importing it: a process replaying from the cache never imports it."""
    parts = [_LAYOUT, str(marshal.version).encode(), sys.version.encode()]
    with contextlib.suppress(ImportError, ValueError, OSError):
        spec = importlib.util.find_spec("yaml")
        if spec is not None and spec.origin is not None:
            stat = os.stat(spec.origin)
            parts.append(f"yaml:{stat.st_size}:{stat.st_mtime_ns}".encode())
    here = Path(__file__).resolve().parent
    for folder in (here, here / "rules"):
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    parts.append(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return hashlib.sha256(b"\0".join(parts)).digest()[:_DIGEST]


def entry_name(text: str | bytes, fmt: str) -> str:
    """The name of the entry for a file's ``text`` read as ``fmt`` (``"yaml"`` or ``"json"``).

    ``text`` may be the file's bytes instead (those of a file read as UTF-8 text are what
    encoding its text gives): the same name without encoding a large text back."""
    digest = hashlib.sha256(code_fingerprint() + fmt.encode())
    digest.update(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[: 2 * _DIGEST]


def file_entry_name(data: bytes, path: Path) -> str:
    """The name of the entry for the file at ``path``, read as ``data``: its format is its name's."""
    return entry_name(data, "json" if is_json_path(path) else "yaml")


def _entry_path(name: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / name


def _key() -> bytes | None:
    folder = cache_dir()
    return None if folder is None else cachekey.key_for(folder, create=False)


def lookup(name: str, path: Path) -> LoadedInteractions | None:
    """The interactions kept under ``name`` (``path`` is the cassette, for messages), or
    ``None``: no entry, the cache turned off, or an entry that is damaged, not signed by the
    cache's key for this name, or holding a field of the wrong type."""
    entry = _entry_path(name)
    key = _key()
    if entry is None or key is None:
        return None
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    if data[: len(_MAGIC)] != _MAGIC or len(data) < _HEADER:
        return None
    size = int.from_bytes(data[_HEADER - _LENGTH : _HEADER], "little")
    view = memoryview(data)
    signed = cachekey.signer(key, name)
    signed.update(view[_HEADER - _LENGTH : _HEADER + size])
    whole = signed.copy()
    whole.update(view[_HEADER + size :])
    if not hmac.compare_digest(whole.digest(), data[len(_MAGIC) : len(_MAGIC) + _CHECK]):
        return None
    try:
        keys = marshal.loads(view[_HEADER + size :])
        if keys is not None and not _is_keys(keys):
            raise ValueError("keys")
        items = compactform.items_from(view[_HEADER : _HEADER + size])
        loaded = LoadedInteractions(items, f" in {path}", keys, _keeper(name, signed), cassette=path)
    except (ValueError, TypeError, EOFError, IndexError):
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used: pruned last
    return loaded


def _is_keys(value: object) -> bool:
    return (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is bytes
        and type(value[1]) in (list, tuple)
        and all(type(key) is str for key in value[1])
    )


def _keeper(name: str, signed: hmac.HMAC) -> Callable[[bytes, list[str]], None]:
    """What keeps keys offered for the entry ``name``, whose MAC up to the end of its
    interactions' part is ``signed`` (so that the part is not signed again)."""

    def remember(token: bytes, keys: list[str]) -> None:
        _append_keys(name, signed, (token, keys))

    return remember


def store(
    name: str, interactions: list[Interaction], compact: list[Compact] | None, path: Path
) -> LoadedInteractions:
    """Keep ``interactions`` under ``name`` as ``compact``, their compact form (``None``: they do
    not fit it), when the cache can be written; what to hand on either way, held in compact
    form (offering keys keeps them too). See :func:`.reading.read`, which gives both."""
    part = None if compact is None else compactform.dumps(compact)
    if part is None or compact is None:
        return LoadedInteractions(interactions, f" in {path}", cassette=path)
    signed = _write(name, part)
    remember = None if signed is None else _keeper(name, signed)
    return LoadedInteractions(compact, f" in {path}", None, remember, cassette=path)


def _write(name: str, part: bytes) -> hmac.HMAC | None:
    """Write one entry atomically, without keys; its MAC up to the end of the interactions'
    part, or ``None`` (silently) when it cannot be written."""
    entry = _entry_path(name)
    if entry is None:
        return None
    tail = marshal.dumps(None)
    temp = None
    try:
        cacheowner.claim(entry.parent)
        key = cachekey.key_for(entry.parent)
        if key is None:
            return None
        length = len(part).to_bytes(_LENGTH, "little")
        signed = cachekey.signer(key, name)
        signed.update(length)
        signed.update(part)
        whole = signed.copy()
        whole.update(tail)
        fd, temp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + whole.digest() + length)
            out.write(part)
            out.write(tail)
        os.replace(temp, entry)
        temp = None
        _prune(entry.parent)
    except OSError:
        return None
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    return signed


def _append_keys(name: str, signed: hmac.HMAC, keys: tuple[bytes, list[str]]) -> None:
    """Put ``keys`` in the entry ``name`` in place of the ones it holds, without writing its
    interactions again. Not atomic: a reader meanwhile (or a crash) sees a digest that does
    not match, takes the entry for damaged and replaces it, as for any damaged entry."""
    entry = _entry_path(name)
    if entry is None:
        return
    try:
        tail = marshal.dumps(keys)
    except ValueError:
        return
    whole = signed.copy()
    whole.update(tail)
    with contextlib.suppress(OSError), open(entry, "r+b") as out:
        size = int.from_bytes(out.read(_HEADER)[_HEADER - _LENGTH :], "little")
        out.seek(_HEADER + size)
        out.write(tail)
        out.truncate()
        out.seek(len(_MAGIC))
        out.write(whole.digest())


def _prune(folder: Path) -> None:
    """Drop the least recently used entries beyond :data:`MAX_ENTRIES` or :data:`MAX_BYTES`:
    only in a folder the cache owns, only files it wrote (see :mod:`.cacheowner`)."""
    if not cacheowner.owns(folder):
        return
    entries = []
    with os.scandir(folder) as scan:
        for item in scan:
            if len(item.name) == 2 * _DIGEST and item.is_file() and cacheowner.is_own(Path(item.path)):
                with contextlib.suppress(OSError):
                    stat = item.stat()
                    entries.append((stat.st_mtime_ns, stat.st_size, item.path))
    entries.sort(reverse=True)
    total = 0
    for count, (_, size, name) in enumerate(entries):
        total += size
        if count >= MAX_ENTRIES or total > MAX_BYTES:
            with contextlib.suppress(OSError):
                os.unlink(name)

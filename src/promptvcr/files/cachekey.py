"""The parse cache's own secret: what proves an entry is one the cache wrote, for this file.

A CRC finds a torn entry, not a forged one: anyone who can write into the cache folder (a
shared ``$PROMPTVCR_CACHE_DIR``, a CI cache restored from another job) could put there an entry
with a valid CRC under the name of a cassette's text, and have other answers replayed. So each
entry (and the memo of small files) carries an HMAC-SHA256 of its content, keyed by 32 random
bytes kept in the cache folder (:data:`KEY_FILE`, mode ``0600``) and bound to the entry's name,
which is the hash of the cassette's text: an entry copied under another cassette's name, or
written by anyone without the key, does not verify and is a cache miss (the file is parsed).

The key file is trusted only when it is a regular file of this user, readable by no one else;
otherwise the cache is not used at all (a load never fails for it).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

__all__ = ["KEY_FILE", "MAC_SIZE", "key_for", "signer"]

KEY_FILE = ".promptvcr-cache-key"
MAC_SIZE = 32
_KEY_SIZE = 32


def signer(key: bytes, name: str) -> hmac.HMAC:
    """The MAC of an entry named ``name``, to be updated with its content (``copy()`` it to sign
    a prefix once and several tails)."""
    return hmac.new(key, name.encode("ascii", "replace") + b"\0", hashlib.sha256)


def key_for(folder: Path, *, create: bool = True) -> bytes | None:
    """The cache's key in ``folder`` (created, ``0600``, when ``create`` and there is none);
    ``None`` when there is none or the one there cannot be trusted (see the module)."""
    key = _read(folder)
    if key is None and create:
        with contextlib.suppress(OSError):
            _create(folder)
        _read.cache_clear()
        key = _read(folder)
    return key


@functools.lru_cache(maxsize=16)
def _read(folder: Path) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(folder / KEY_FILE, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            return None
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None
        key = os.read(fd, _KEY_SIZE + 1)
    finally:
        os.close(fd)
    return key if len(key) == _KEY_SIZE else None


def _create(folder: Path) -> None:
    """Write a new key beside, then link it into place: two processes creating one at once
    agree on the first linked, and no reader sees a half-written key."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".tmp-key-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(_KEY_SIZE))
        with contextlib.suppress(FileExistsError):
            os.link(temp, folder / KEY_FILE)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()

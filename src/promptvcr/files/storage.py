"""Reading and writing cassette files safely: atomic replace, a lock between processes.

A cassette is committed evidence. A write goes to a temporary file in the same folder,
is flushed to disk, then renamed over the old file, so a crash leaves the old file or the
new one and never half of either. Writers in other processes (pytest-xdist workers)
serialize on a lock kept outside the project tree, so no ``.lock`` files end up in git.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import CassetteFormatError, CassetteWriteError

__all__ = ["MAX_CASSETTE_BYTES", "cassette_lock", "read_bytes", "read_file", "read_text", "write_atomic"]


#: Bytes a cassette file may hold: far beyond any recording (large bodies are spooled while
#: recording, then written as a body per interaction), far below what reading it would cost.
MAX_CASSETTE_BYTES = 2 << 30


class _NotRegular(OSError):
    """The path is a FIFO, a device or a socket: opened without blocking, never read."""


class _TooLarge(OSError):
    """The file holds more than :data:`MAX_CASSETTE_BYTES`."""


def _lock_dir() -> Path:
    """One folder per user, created ``0700``: a folder another user created first (CI runners,
    shared hosts) would refuse this user's lock files, or hold locks that stall or fail them."""
    user = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"promptvcr-locks-{user}"


def _own_lock_dir(folder: Path) -> None:
    """Create ``folder`` (``0700``), or check that the one there is this user's own and
    writable by no one else; ``PermissionError`` saying what to do otherwise."""
    with contextlib.suppress(FileExistsError):  # a file or a symlink by that name: refused below
        folder.mkdir(mode=0o700, exist_ok=True)
    if not hasattr(os, "getuid"):  # Windows: the temp folder is the user's own
        return
    info = os.lstat(folder)
    owner_ok = info.st_uid == os.getuid()
    if not stat.S_ISDIR(info.st_mode) or not owner_ok or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        what = (
            "is not a folder"
            if not stat.S_ISDIR(info.st_mode)
            else f"belongs to user id {info.st_uid}"
            if not owner_ok
            else f"is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
        )
        raise PermissionError(
            f"the lock folder {folder} {what}; another user may hold or stall promptvcr's locks there. "
            f"Remove it (promptvcr creates its own, mode 700), or set TMPDIR to a folder of your own"
        )


def read_text(path: Path, *, regular_only: bool = False) -> str | None:
    """The file's text, ``None`` when there is no file; a clear error for anything unreadable.
    ``regular_only``: a FIFO or a device is refused, never opened for reading (see
    :func:`_read_bytes`)."""
    read = read_file(path, regular_only=regular_only)
    return None if read is None else read[1]


def read_file(path: Path, *, regular_only: bool = False) -> tuple[bytes, str] | None:
    """:func:`read_text`, with the bytes it decoded: a large cassette's parse-cache entry is
    named by a hash of them (see :func:`.parsecache.entry_name`), which would otherwise
    encode the text back (11.7 MB for a 10,000-interaction JSON cassette)."""
    data = read_bytes(path, regular_only=regular_only)
    if data is None:
        return None
    if not data or data.isspace():  # not ``strip()``: that copies a large file to find out
        raise CassetteFormatError(
            f"Cassette {path} is empty. It was left untouched; delete it and record it again "
            f"(PROMPTVCR_RECORD_MODE=record).",
            path=path,
        )
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = data[error.start : error.start + 1]
        raise CassetteFormatError(
            f"Cassette {path} is not UTF-8 text (byte {error.start} is {bad!r}); "
            "it may be a binary file saved under a cassette name. It was left untouched.",
            path=path,
        ) from None


def read_bytes(path: Path, *, regular_only: bool = False) -> bytes | None:
    """The file's bytes, ``None`` when there is no file; a clear error for a folder, a file too
    large, one this user may not read, and with ``regular_only`` a FIFO or a device."""
    try:
        return _read_bytes(path, regular_only)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise CassetteFormatError(
            f"Cassette {path} is a directory, not a file. "
            f"Give use_cassette a file path such as {path / 'cassette.yaml'}.",
            path=path,
        ) from None
    except PermissionError as error:
        raise CassetteFormatError(f"Cassette {path} cannot be read: {error.strerror}.", path=path) from None
    except _NotRegular as error:
        raise CassetteFormatError(
            f"Cassette {path} is {error.strerror}, not a regular file; it was not read. "
            f"Name a cassette file (.yaml or .json).",
            path=path,
        ) from None
    except _TooLarge as error:
        raise CassetteFormatError(
            f"Cassette {path} holds {error.strerror}, more than the {MAX_CASSETTE_BYTES >> 30} GiB "
            f"a cassette may; no recording is that large. It was left untouched; check that the path "
            f"names a cassette.",
            path=path,
        ) from None


def _read_bytes(path: Path, regular_only: bool = False) -> bytes:
    """The file's bytes, in as few calls as the file system allows: a suite reads a small
    cassette per test, and ``Path.read_bytes`` costs twice as much (a buffered file object).

    A test may feed its cassette through a named pipe, read to its end. ``regular_only`` (a
    path that a command or a client of ``promptvcr serve`` named): opened without blocking and
    read only when it is a regular file, since opening a FIFO for reading waits for a writer,
    which would hang the command or the whole server."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) if regular_only else flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if regular_only and not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
            raise _NotRegular(0, kind, str(path))
        size = info.st_size
        if size > MAX_CASSETTE_BYTES:
            raise _TooLarge(0, f"{size:,} bytes", str(path))
        data = os.read(fd, size + 1)  # a regular file: all of it, and no more
        if len(data) == size or not data:
            return data
        chunks = [data]  # larger than its size said (a pipe, a growing file), or a read cut short
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextlib.contextmanager
def cassette_lock(path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Serialize writers of one cassette across threads and processes.

    filelock is imported here, by the first write: a process that only replays never pays
    its import (~10 ms, a sixth of what entering a first cassette costs)."""
    from filelock import FileLock, Timeout

    digest = hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:32]
    lock_dir = _lock_dir()
    lock = FileLock(str(lock_dir / f"{digest}.lock"), timeout=timeout)
    try:
        _own_lock_dir(lock_dir)
        lock.acquire()
    except (OSError, Timeout) as error:
        held = isinstance(error, Timeout)
        what = f"another process held its lock for {timeout:g} s" if held else str(error)
        raise CassetteWriteError(
            f"Cannot write cassette {path}: {what} (lock {lock.lock_file}). Nothing was written.", path=path
        ) from None
    try:
        _remove_torn_writes(path)
        yield
    finally:
        lock.release()


def _remove_torn_writes(path: Path) -> None:
    """Delete temporary files of writes killed half-way (SIGKILL, power loss): under the lock
    no other writer of this cassette is running, so each one left is garbage that would
    otherwise sit next to the cassettes and end up in a commit."""
    with contextlib.suppress(OSError):
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()


def write_atomic(path: Path, text: str | Iterable[str], *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` in one step; on any failure the old file stays as it was.

    ``text`` may come in pieces (see :func:`.fileformat.dump_pieces`), written as they come,
    so a large cassette is never held as one string; an error while producing them is a
    failure like any other and leaves the old file.

    ``durable=False`` skips the fsyncs: still atomic, but a power cut may lose the new file.
    For bulk conversions (``import-vcr``) that write a fresh folder and can simply be rerun.
    A symlinked cassette (one recording shared by two test folders) is written where the
    link points, and the link stays a link: replacing it with a file would fork the two.
    """
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise CassetteWriteError(
            f"Cannot write cassette {path}: {error.strerror} ({error.filename}). Nothing was written.",
            path=path,
        ) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.writelines((text,) if isinstance(text, str) else text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        try:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        except FileNotFoundError:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(error, OSError):
            raise CassetteWriteError(
                f"Cannot write cassette {path}: {error.strerror or error}. The file on disk is unchanged.",
                path=path,
            ) from error
        raise
    if not durable:
        return
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

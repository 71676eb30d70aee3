"""A body too large to hold while it is recorded: its chunks in a private temporary file.

A recording keeps every chunk it receives until the body is complete (see
:class:`~promptvcr.interceptors.recording.Recording`). Past :data:`~.largebody.LARGE_BODY_BYTES`
it moves them into a :class:`SpooledChunks` and writes each later chunk there as it comes,
so a 300 MB stream recorded through ``promptvcr serve`` holds a few megabytes, not the body
(issue 48: it held five times the body). The threshold is the large body's on purpose: a
body spooled is exactly one stored from its chunks (:mod:`.largebody`), which the cassette
writers, the credential searches and the budget read back a slice at a time, never whole.

The file is made by :func:`tempfile.TemporaryFile` in the system's temporary folder: mode
``0600`` and, on POSIX, without a name from the start, so nothing is ever left behind, not
by a failed or abandoned recording, not by a crash or a kill: its space goes back when the
last response holding it is dropped (closed then, by :func:`weakref.finalize`, without a
``ResourceWarning``). Reads use ``pread``, so threads may read the same body at once.
"""

from __future__ import annotations

import os
import tempfile
import threading
import weakref
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

__all__ = ["ChunksOnDisk", "SpooledChunks", "body_size", "byte_slices", "chunk_lengths", "pread_range"]

_pread = getattr(os, "pread", None)


class ChunksOnDisk(Sequence[bytes]):
    """A body whose bytes stay in a file: a spool being recorded (:class:`SpooledChunks`) or a
    body file a cassette refers to (:mod:`.bodyfiles`). What reads a body a slice at a time
    (:func:`byte_slices`, :func:`body_size`, :func:`chunk_lengths`) asks these, never joins."""

    __slots__ = ()

    @property
    def size(self) -> int:
        """The body's length in bytes."""
        raise NotImplementedError

    def read(self, start: int, stop: int) -> bytes:
        """Bytes ``start`` to ``stop`` of the body."""
        raise NotImplementedError

    def lengths(self) -> list[int]:
        """The length of each chunk, without reading any."""
        raise NotImplementedError

    def bounds(self, index: int) -> tuple[int, int]:
        """Where chunk ``index`` (``0 <= index < len(self)``) starts and stops in the body."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        index = range(len(self))[index]  # negative indices, and IndexError past the end
        return self.read(*self.bounds(index))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def pread_range(fd: int, start: int, stop: int) -> bytes:
    """Bytes ``start`` to ``stop`` of the open file ``fd`` (fewer at its end), by ``pread``:
    threads may read the same file at once."""
    parts = []
    while start < stop:
        part = _pread(fd, stop - start, start)  # type: ignore[misc]
        if not part:
            break
        parts.append(part)
        start += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class SpooledChunks(ChunksOnDisk):
    """The chunks of a body as received, kept in a temporary file: the process holds only
    where each chunk ends. Indexing and iterating read the chunks back; :func:`byte_slices`
    reads the body in slices of any size."""

    __slots__ = ("__weakref__", "_dirty", "_ends", "_file", "_lock")

    def __init__(self, chunks: Iterable[bytes] = ()) -> None:
        # Closed by the finalizer below: it lives as long as this object, not a block.
        self._file = tempfile.TemporaryFile(prefix="promptvcr-spool-")  # noqa: SIM115
        weakref.finalize(self, self._file.close)
        self._ends = array("q")
        self._lock = threading.Lock()
        self._dirty = False
        for chunk in chunks:
            self.append(chunk)

    def append(self, chunk: bytes) -> None:
        """Write ``chunk`` after the others (a recording's reader thread only)."""
        self._file.write(chunk)
        self._ends.append(self.size + len(chunk))
        self._dirty = True

    def lengths(self) -> list[int]:
        """The length of each chunk, without reading any."""
        ends = self._ends
        return [end - start for start, end in zip([0, *ends[:-1]], ends, strict=True)]

    @property
    def size(self) -> int:
        """The body's length in bytes."""
        return self._ends[-1] if self._ends else 0

    def read(self, start: int, stop: int) -> bytes:
        """Bytes ``start`` to ``stop`` of the body."""
        if self._dirty:
            with self._lock:
                self._file.flush()
                self._dirty = False
        if _pread is None:  # pragma: no cover - Windows: one reader at a time
            with self._lock:
                self._file.seek(start)
                return self._file.read(stop - start)
        return pread_range(self._file.fileno(), start, stop)

    def __len__(self) -> int:
        return len(self._ends)

    def bounds(self, index: int) -> tuple[int, int]:
        return (self._ends[index - 1] if index else 0), self._ends[index]

    def __iter__(self) -> Iterator[bytes]:
        start = 0
        for end in self._ends:
            yield self.read(start, end)
            start = end

    def __repr__(self) -> str:
        return f"SpooledChunks({len(self)} chunks, {self.size:,} bytes)"


def body_size(chunks: Sequence[bytes]) -> int:
    """The length of a body in chunks, without reading one on disk."""
    if type(chunks) is not list and isinstance(chunks, ChunksOnDisk):  # a list: the common case, at once
        return chunks.size
    return len(chunks[0]) if len(chunks) == 1 else sum(len(chunk) for chunk in chunks)


def chunk_lengths(chunks: Sequence[bytes]) -> Sequence[int]:
    """The length of each chunk, without reading a body on disk."""
    if isinstance(chunks, ChunksOnDisk):
        return chunks.lengths()
    return [len(chunk) for chunk in chunks]


def byte_slices(chunks: Sequence[bytes], size: int) -> Iterator[bytes | memoryview]:
    """The body in slices of at most ``size`` bytes, in order: one on disk read a slice at a
    time, one in memory cut into views of its chunks (nothing copied)."""
    if isinstance(chunks, ChunksOnDisk):
        total = chunks.size
        for start in range(0, total, size):
            yield chunks.read(start, min(start + size, total))
        return
    for chunk in chunks:
        view = memoryview(chunk)
        for start in range(0, len(view), size):
            yield view[start : start + size]

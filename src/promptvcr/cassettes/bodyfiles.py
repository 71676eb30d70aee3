"""Large bodies kept beside the cassette, one file per body, named by its SHA-256.

A body above :data:`~.largebody.LARGE_BODY_BYTES` that is not JSON (a download, audio, a
batch's output, a long event stream) is not written into the cassette: reading it back would
hold it whole, several times over (a 300 MB recording took 1.5 GB resident in ``serve``). It
is written, as the client received it (credentials masked), into the ``bodies/`` folder
beside the cassette as ``bodies/sha256-<hex>``, and the cassette holds a reference a reviewer
can read in a diff::

    response:
      status: 200
      file: {path: bodies/sha256-9f86d0..., size: 314572800, sha256: 9f86d0...}

One folder for all the cassettes of a folder, not one per cassette: a rewrite records into a
file beside the cassette (``chat.rerecorded.yaml``) whose interactions then move into it, a
cassette may be renamed or copied, and the same body recorded by two tests is one file. A
file is written once, from the body's slices, into a temporary file that is renamed to its
name (an existing one is left as it is: same name, same bytes), and before the cassette
refers to it.

Replay reads it as a :class:`BodyFile`: a sequence of 1 MiB slices read on demand with
``pread``, which the interceptors and ``serve`` hand out like any other chunks, so replaying
a 300 MB download holds a slice or two. Its size is checked when it is opened (a missing or
cut file is an error naming the cassette and the file, raised by the reader), and its SHA-256
as it is read in order: a file changed under the same size fails at its end, not silently.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .spool import ChunksOnDisk, body_size, byte_slices, pread_range

__all__ = [
    "BODY_FOLDER",
    "SLICE",
    "BodyFile",
    "BodyFileError",
    "Reference",
    "body_folder",
    "described",
    "is_reference",
    "reference_of",
    "slice_count",
    "slice_ends",
    "stored_reference",
    "write_body_file",
]

#: The folder beside the cassettes that holds their large bodies.
BODY_FOLDER = "bodies"
#: A body file replays in slices of this many bytes: its chunks, and the unit of its timing.
SLICE = 1024 * 1024
#: What a reference's path may be: a file of the folder beside the cassette, by its hash. Nothing
#: else is read (a cassette from elsewhere must not make replay serve ``/etc/passwd``).
_PATH = re.compile(r"bodies/sha256-([0-9a-f]{64})")
_HEX = re.compile(r"[0-9a-f]{64}")


class BodyFileError(ValueError):
    """A body file a cassette refers to is missing, cut short, or not the bytes recorded; or the
    reference itself is malformed. The message says which; the reader names the cassette."""


class Reference(tuple[str, int]):
    """A body file's reference as the compact form holds it: ``(path, size)``, the path relative
    to the cassette's folder (its SHA-256 is in its name)."""

    __slots__ = ()

    @property
    def path(self) -> str:
        return self[0]

    @property
    def size(self) -> int:
        return self[1]

    @property
    def sha256(self) -> str:
        found = _PATH.fullmatch(self[0])
        assert found is not None
        return found.group(1)


def slice_count(size: int) -> int:
    """How many chunks a body file of ``size`` bytes replays as."""
    return -(-size // SLICE)


def slice_ends(size: int) -> list[int]:
    """Where each of those chunks ends in the body (for its timing: :mod:`.timing`)."""
    return [min(end, size) for end in range(SLICE, size + SLICE, SLICE)] if size else []


def stored_reference(reference: Reference) -> dict[str, Any]:
    """The reference as a cassette stores it, under the body key ``file``."""
    return {"path": reference.path, "size": reference.size, "sha256": reference.sha256}


def reference_of(value: Any) -> Reference:
    """The reference a cassette's ``file`` body holds; :class:`BodyFileError` says what is wrong."""
    if not isinstance(value, dict):
        raise BodyFileError(f"it is a {type(value).__name__}, expected {{path, size, sha256}}")
    path, size, sha256 = value.get("path"), value.get("size"), value.get("sha256")
    found = _PATH.fullmatch(path) if isinstance(path, str) else None
    if found is None:
        raise BodyFileError(f"path is {path!r}, expected {BODY_FOLDER}/sha256-<64 hex digits>")
    if type(size) is not int or size < 0:
        raise BodyFileError(f"size is {size!r}, expected the body's length in bytes")
    if sha256 is not None and (not isinstance(sha256, str) or sha256 != found.group(1)):
        raise BodyFileError(f"sha256 is {sha256!r}, which is not the hash the path names")
    return Reference((found.group(0), size))


def is_reference(value: Any) -> bool:
    """Whether ``value`` is a :class:`Reference` as the compact form (marshal) gives it back."""
    return (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is str
        and type(value[1]) is int
        and value[1] >= 0
        and _PATH.fullmatch(value[0]) is not None
    )


class BodyFile(ChunksOnDisk):
    """A body file's bytes as the chunks to replay: :data:`SLICE` bytes each, read on demand.

    Opening checks the file is there with the recorded size (:class:`BodyFileError` else);
    each read opens it (a cassette may refer to many files; none is held open between reads).
    Iterating reads it in order and checks its SHA-256 at the end."""

    __slots__ = ("__weakref__", "_checked", "path", "reference")

    def __init__(self, folder: Path, reference: Reference) -> None:
        self.reference = Reference(reference)
        self.path = folder / reference.path
        self._checked = False
        try:
            found = os.stat(self.path).st_size
        except FileNotFoundError:
            expected = f"{reference.size:,} bytes expected"
            raise BodyFileError(f"its body file {self.path} is missing ({expected})") from None
        except OSError as error:
            raise BodyFileError(f"its body file {self.path} cannot be read ({error.strerror})") from None
        if found != reference.size:
            raise BodyFileError(
                f"its body file {self.path} holds {found:,} bytes, {reference.size:,} were recorded"
            )

    @property
    def size(self) -> int:
        return self.reference.size

    def read(self, start: int, stop: int) -> bytes:
        with open(self.path, "rb") as file:
            if hasattr(os, "pread"):
                data = pread_range(file.fileno(), start, min(stop, self.size))
            else:  # pragma: no cover - Windows
                file.seek(start)
                data = file.read(min(stop, self.size) - start)
        if len(data) != min(stop, self.size) - start:
            raise BodyFileError(f"its body file {self.path} was cut short while it was read")
        return data

    def lengths(self) -> list[int]:
        ends = slice_ends(self.size)
        return [end - start for start, end in zip([0, *ends[:-1]], ends, strict=True)]

    def __len__(self) -> int:
        return slice_count(self.size)

    def bounds(self, index: int) -> tuple[int, int]:
        return index * SLICE, min((index + 1) * SLICE, self.size)

    def __iter__(self) -> Iterator[bytes]:
        digest = hashlib.sha256() if not self._checked else None
        with open(self.path, "rb") as file:
            for start in range(0, self.size, SLICE):
                data = file.read(min(SLICE, self.size - start))
                if len(data) != min(SLICE, self.size - start):
                    raise BodyFileError(f"its body file {self.path} was cut short while it was read")
                if digest is not None:
                    digest.update(data)
                yield data
        if digest is not None:
            if digest.hexdigest() != self.reference.sha256:
                raise BodyFileError(
                    f"its body file {self.path} is not the body recorded: its SHA-256 differs from its name"
                )
            self._checked = True

    def __repr__(self) -> str:
        return f"BodyFile({self.reference.path}, {self.size:,} bytes)"


def described(chunks: Sequence[bytes]) -> str | None:
    """What a person is shown of a body file, without reading it (``show``, the HTML report):
    ``N bytes, sha256 H, file bodies/sha256-H``; ``None`` for any other body."""
    if not isinstance(chunks, BodyFile):
        return None
    reference = chunks.reference
    return f"{reference.size:,} bytes, sha256 {reference.sha256}, file {reference.path}"


_lock = threading.Lock()


def body_folder(cassette: Path) -> Path:
    """The folder a cassette's body references are relative to: the folder of the file itself
    (a symlinked cassette is written where its link points: see ``files.storage``)."""
    return Path(os.path.realpath(cassette)).parent


def write_body_file(folder: Path, chunks: Sequence[bytes]) -> Reference:
    """Write ``chunks`` as the body file of the cassettes in ``folder`` (into its ``bodies/``),
    a slice at a time; its reference. The bytes go to a temporary file in the same folder that
    is renamed to its hash's name; when a file of that name is there already with the same size
    it is kept (same name, same bytes: never rewritten)."""
    if isinstance(chunks, BodyFile) and chunks.path.parent == folder / BODY_FOLDER:
        return chunks.reference  # read from this very folder: written already
    target_folder = folder / BODY_FOLDER
    target_folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, temp = tempfile.mkstemp(dir=target_folder, prefix=".tmp-body-")
    try:
        with os.fdopen(fd, "wb") as out:
            for view in byte_slices(chunks, SLICE):
                digest.update(view)
                out.write(view)
            out.flush()
            os.fsync(out.fileno())
        size = body_size(chunks)
        reference = Reference((f"{BODY_FOLDER}/sha256-{digest.hexdigest()}", size))
        target = folder / reference.path
        with _lock:  # threads of one process: one rename; processes: the rename is atomic
            try:
                kept = os.stat(target).st_size == size
            except FileNotFoundError:
                kept = False
            if kept:  # touched: a sweep keeps a body file this young (see usage.removal)
                os.utime(target)
            else:
                os.chmod(temp, 0o644)  # as a new cassette is written (mkstemp makes it 0600)
                os.replace(temp, target)
                temp = ""
    finally:
        if temp:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    return reference

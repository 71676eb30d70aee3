"""A cassette file for one use: read it on entry, write back what was recorded on exit.

The cassette object decides *whether* to read and write (its record mode); this module
knows *how*: a corrupt file stops the run before anything is replaced, a recording is
checked for secrets before it touches the disk, appends happen under the file's lock onto
what is on disk now (another process may have recorded meanwhile), and every write is
atomic. Record mode appends to a file unchanged since it was loaded without parsing it
again, so a reviewer's comments and the stored text stay byte for byte.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cassettes.models import Interaction, Request, Response
from ..credentials.headers import AllHeadersBut
from ..errors import CassetteSecretError
from ..identity import IdentityOptions
from . import fileformat, parsecache, smallcache, storage
from .loaded import LoadedInteractions

__all__ = [
    "Loaded",
    "Stored",
    "Writing",
    "append",
    "collection_paused",
    "header_names",
    "load",
    "prepare_to_write",
    "replace",
    "stored_form",
]


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a cassette file held when it was entered."""

    interactions: Sequence[Interaction]
    exists: bool
    #: Length and hash of the text read, to recognise an unchanged file when appending
    #: (``None`` when the file was loaded for reading only).
    signature: tuple[int, int] | None = None


def load(path: Path, *, appending: bool = True) -> Loaded:
    """The file's interactions; an empty cassette when there is no file yet.

    ``appending``: what is recorded will be added to the file (record mode), so the text's
    signature is kept for :func:`append`. A cassette that only replays leaves it out: hashing
    the text of a 10,000-interaction JSON file was about 7 ms of the 57 ms its load from the
    parse cache took (issue 22).

    Raises :class:`~promptvcr.CassetteFormatError` for a file that cannot be read.
    """
    read = storage.read_file(path)
    if read is None:
        return Loaded([], exists=False)
    data, text = read
    del read
    signature = (len(text), hash(text)) if appending else None
    with collection_paused():
        if len(text) < parsecache.MIN_SIZE:  # a small file: through the memo of small files
            return Loaded(smallcache.loads(data, text, path), exists=True, signature=signature)
        if parsecache.cache_dir() is None:
            interactions, compact = fileformat.read(text, path)
            items = interactions if compact is None else compact
            held = LoadedInteractions(items, f" in {path}", cassette=path)
            return Loaded(held, exists=True, signature=signature)
        # A large file: read once, then found again by its text (see .parsecache).
        name = parsecache.file_entry_name(data, path)
        del data  # not held while the text is parsed
        found = parsecache.lookup(name, path)
        held = parsecache.store(name, *fileformat.read(text, path), path) if found is None else found
        return Loaded(held, exists=True, signature=signature)


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No garbage collection while a cassette is read (and its keys indexed: see ``matching.tape``)
    or what was recorded is put in stored form.

    Reading builds many containers that all stay alive, so every collection it triggers
    walks the process's whole heap and frees nothing: in a test process holding a million
    objects, 10,000 interactions took 1.2 s to read with collections and 0.7 s without
    (YAML; JSON 0.58 s and 0.24 s). Writing 1,000 recorded chat completions, the same: 9 us
    per interaction of the 100 us it took in an SDK's process (issue 22). A process that turned
    collection off keeps it off.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def header_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` lower-cased: the headers a cassette writes. Every cassette of a suite is made
    with the same ones (the defaults, or a ``promptvcr_config``'s), so each set is made once."""
    if isinstance(names, AllHeadersBut):  # the default: all but some (see credentials.headers)
        return names
    if isinstance(names, (frozenset, tuple)):
        with contextlib.suppress(TypeError):  # a tuple holding something unhashable
            return _lowered(names)
    return frozenset(name.lower() for name in names)


@functools.lru_cache(maxsize=64)
def _lowered(names: frozenset[str] | tuple[str, ...]) -> frozenset[str]:
    return frozenset(name.lower() for name in names)


class Stored(list[dict[str, Any]]):
    """Recorded interactions in stored form, safe to write; ``refusal`` says which were left out."""

    refusal: str | None = None


def prepare_to_write(path: Path) -> None:
    """Import now, at the entry of a cassette that may write ``path``, every module its save
    loads lazily (a process that only replays never loads them): secret redaction, the
    file lock and, for YAML, PyYAML's writer and reader (an append re-reads what is on disk).
    By the time the block ends, the code under test may have changed what this process can
    import: dropped privileges in a checkout under a 0700 folder, or had the package
    upgraded under it. A recording must not be lost then. tests/cassettes/test_save_imports.py
    checks that a save imports nothing this did not."""
    import filelock  # noqa: F401  (storage.cassette_lock)

    from . import redaction  # noqa: F401  (stored_form; with masking, key shapes, multipart)

    if not fileformat.is_json_path(path):
        import yaml  # noqa: F401

        from . import yamlreader, yamlwriter  # noqa: F401  (reading, fileformat)


def stored_form(
    path: Path,
    interactions: Sequence[Interaction],
    *,
    request_headers: frozenset[str],
    response_headers: frozenset[str],
    allowed_secrets: Iterable[str] = (),
) -> Stored:
    """The stored form of recorded interactions (see :mod:`promptvcr.files.redaction`):
    secrets found in a response are masked (with a warning); an interaction whose request
    holds one is left out, and :func:`append`/:func:`replace` raise after writing the others. Redaction is
    imported here, at the first save: a process that only replays never loads it."""
    from . import redaction

    redacted = redaction.redact(
        interactions,
        request_headers=request_headers,
        response_headers=response_headers,
        allowed=allowed_secrets,
        environ=os.environ,
    )
    if redacted.masked:
        warnings.warn(redaction.masked_message(path, redacted), redaction.SecretMaskedWarning, stacklevel=4)
    stored = Stored(redacted.data)
    if redacted.refused:
        stored.refusal = redaction.refused_message(path, redacted)
    return stored


@dataclass(frozen=True)
class Writing:
    """What a cassette writes of what it recorded: the headers kept, the values shaped like a
    secret that may stay, and the record hooks.

    ``before_record_request`` / ``before_record_response`` (vcrpy's names) each get a recorded
    :class:`Request` or :class:`Response` and return it, changed or not, or ``None`` to leave the
    interaction out of the file. They run when the file is written, before redaction and the
    secret scan, so a hook cannot let a secret through, and what a hook trims (a 338-model
    ``/models`` answer cut to 5) is what is written; the code under test got the whole answer.
    """

    request_headers: frozenset[str]
    response_headers: frozenset[str]
    allowed_secrets: frozenset[str] = frozenset()
    before_record_request: Callable[[Request], Request | None] | None = None
    before_record_response: Callable[[Response], Response | None] | None = None
    #: The recording machine's values written as placeholders (``None``: kept as they are).
    identity: IdentityOptions | None = None

    def append(self, path: Path, recorded: Sequence[Interaction], loaded: Loaded) -> None:
        """Add ``recorded`` to the file (:func:`append`) in its stored form."""
        # The stored form's containers all stay alive until written: one pause for making and
        # writing them, so that they are freed before a collection could walk them (2 ms per
        # 1,000 interactions when the pause ended in between, issue 22).
        with collection_paused():
            append(path, self.stored_form(path, recorded), loaded)  # its signature: not needed here

    def replace(self, path: Path, recorded: Sequence[Interaction]) -> None:
        """Write the file anew with ``recorded`` (:func:`replace`) in its stored form."""
        with collection_paused():
            replace(path, self.stored_form(path, recorded))

    def stored_form(self, path: Path, recorded: Sequence[Interaction]) -> Stored:
        """The stored form of ``recorded``, hooks applied (under the pause of :meth:`append`)."""
        return stored_form(
            path,
            self._hooked(recorded),
            request_headers=self.request_headers,
            response_headers=self.response_headers,
            allowed_secrets=self.allowed_secrets,
        )

    def _hooked(self, recorded: Sequence[Interaction]) -> Sequence[Interaction]:
        kept, failures = self.hooked_each(recorded)
        if failures:
            raise failures[0][1]
        return kept

    def hooked_each(
        self, recorded: Sequence[Interaction]
    ) -> tuple[Sequence[Interaction], list[tuple[Interaction, BaseException]]]:
        """``recorded`` through the hooks, one interaction at a time: a hook that raises on one
        leaves that one out (it is returned with the error), never the others (issue 42)."""
        on_request, on_response = self.before_record_request, self.before_record_response
        if on_request is None and on_response is None:
            return recorded, []
        kept = []
        failures: list[tuple[Interaction, BaseException]] = []
        for interaction in recorded:
            try:
                request = on_request(interaction.request) if on_request else interaction.request
                response = on_response(interaction.response) if on_response else interaction.response
                _returned("before_record_request", request, Request)
                _returned("before_record_response", response, Response)
            except Exception as error:  # the user's hook: any error it raises is reported, not lost
                failures.append((interaction, error))
                continue
            if request is not None and response is not None:
                kept.append(dataclasses.replace(interaction, request=request, response=response))
        return kept, failures


def _returned(hook: str, value: object, expected: type) -> None:
    """``TypeError`` when a hook returned something else than ``expected`` or ``None``: a dict
    (vcrpy's hooks get and return dicts) would fail later, far from the hook, and lose the file."""
    if value is not None and not isinstance(value, expected):
        name = expected.__name__
        raise TypeError(
            f"{hook} returned a {type(value).__name__}; it must return the {name} it was given "
            f"(changed with dataclasses.replace, or as it is) or None to leave the interaction out"
        )


def _refuse(path: Path, recorded: list[dict[str, Any]]) -> None:
    refusal = getattr(recorded, "refusal", None)
    if refusal is not None:
        raise CassetteSecretError(refusal, path=path)


def append(path: Path, recorded: list[dict[str, Any]], loaded: Loaded) -> tuple[int, int] | None:
    """Add ``recorded`` (in stored form) to the cassette as it is on disk now; the signature of
    the text written (``None`` when nothing was, or more than ``_SIGNED_CHARS``), for the next
    append to the same file to take the fast path (see :mod:`.saving`, which appends each
    recording as it completes)."""
    if not recorded:
        _refuse(path, recorded)
        return None
    # No collection while the file's items are read and all of them written (see collection_paused).
    with storage.cassette_lock(path), collection_paused():
        text = storage.read_text(path)
        pieces = None
        if text is not None and (len(text), hash(text)) == loaded.signature:
            # Unchanged since it was loaded, so valid: append without parsing it again.
            pieces = fileformat.appended_pieces(text, recorded, path)
        if pieces is None:
            stored = fileformat.load_document(text, path) if text is not None else []
            stored.extend(recorded)
            pieces = fileformat.dump_pieces(stored, path)
        kept: list[str] | None = []
        length = 0

        def counted(pieces: Iterable[str]) -> Iterator[str]:
            # Written piece by piece, never joined: a large body (a 100 MB stream, written slice
            # by slice by .largebody) is not held again as one string and again encoded.
            nonlocal kept, length
            for piece in pieces:
                length += len(piece)
                if kept is not None:
                    kept.append(piece)
                    if length > _SIGNED_CHARS:
                        kept = None  # too large to sign: the next append parses the file
                yield piece

        storage.write_atomic(path, counted(pieces))
    _refuse(path, recorded)
    if kept is None:
        return None
    written = "".join(kept)
    return len(written), hash(written)


#: An appended text up to this many characters gets a signature (see :func:`append`).
_SIGNED_CHARS = 8 * 1024 * 1024


def replace(path: Path, data: list[dict[str, Any]]) -> None:
    """Write the cassette anew with exactly ``data`` (in stored form). When interactions
    were refused and none is left, an existing file is kept rather than emptied."""
    if data or getattr(data, "refusal", None) is None:
        with storage.cassette_lock(path), collection_paused():
            storage.write_atomic(path, fileformat.dump_pieces(data, path))
    _refuse(path, data)

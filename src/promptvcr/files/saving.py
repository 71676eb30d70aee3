"""What one use of a cassette writes: each recording as soon as it completes, nothing lost.

A cassette used to write what it recorded when it exited: a test killed by a CI timeout or
the OOM killer lost every answer it had paid for, and one ``before_record_*`` hook raising on
one interaction lost them all (issue 42). A :class:`Saver` is made per use of a recording
cassette (record or rewrite mode) and is given each recorded interaction as it completes
(:meth:`Saver.recorded`):

* record mode appends it to the cassette at once, through :func:`.persister.append` (under the
  file's lock, onto what is on disk now, atomically, keeping the text it does not change): a
  kill loses at most the request in flight. Completions that arrive while a write is under
  way are written together by the thread already writing, so concurrent requests do not queue
  behind one write each;
* rewrite mode appends it to a file of its own beside the cassette
  (:func:`.rerecord.reserve_aside`), and :meth:`Saver.finish` puts that into the cassette
  only when the use passed (:func:`.rerecord.merge_aside`: it replaces the interactions it
  re-recorded, no others); a use that failed leaves the cassette as it was and its recordings
  aside, in :attr:`Saved.aside`.

What cannot be written is never dropped silently: a hook that raises leaves out that
interaction only and its error is raised when the use ends (:class:`HookError`); a secret in a
request leaves out that one (:class:`~promptvcr.CassetteSecretError` at the end); a write that
fails (disk full, read-only) is tried again at the end, and then raised as before.

This is the in-process append API ``promptvcr serve`` shares: the server's cassettes are
:class:`~promptvcr.Cassette` objects, so each answer it records is written as it completes.
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cassettes.models import Interaction, Request
from ..errors import CassetteError, CassetteSecretError, CassetteWriteError
from ..identity import MachineIdentityWarning, replaced_message
from . import persister, rerecord
from .rerecord import KeyOf

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["HookError", "Saved", "Saver"]


class HookError(CassetteWriteError):
    """A ``before_record_request``/``before_record_response`` hook raised: the interactions it
    raised on were not written (the others were); the hook's first error is the cause."""


@dataclass(frozen=True)
class Saved:
    """What a use wrote: ``written`` interactions into the cassette, and, for a rewrite whose use
    failed, ``aside_count`` recordings kept in the file ``aside`` instead."""

    written: int = 0
    aside: Path | None = None
    aside_count: int = 0


class Saver:
    """The writer of one use of a cassette in record or rewrite mode (see the module's text)."""

    def __init__(
        self,
        path: Path,
        writing: persister.Writing,
        loaded: persister.Loaded,
        *,
        rewrite: bool,
        key: KeyOf,
    ) -> None:
        self._path = path
        self._writing = writing
        self._signature = loaded.signature if not rewrite else None
        self._rewrite = rewrite
        self._key = key
        self._aside: Path | None = None
        self._lock = threading.Lock()
        # Each recording with its position among all this use recorded: a refusal or a mask names
        # ``recorded[N]`` and counts over the whole use, not over the batch it was written in.
        self._count = 0
        self._pending: list[tuple[int, Interaction]] = []
        self._unwritten: list[tuple[int, Interaction]] = []  # a write failed: tried again at the end
        self._busy = False
        self._written = 0
        self._hook_errors: list[tuple[Interaction, BaseException]] = []
        self._refused: list[tuple[str, str, list[Any]]] = []
        self._write_error: CassetteError | None = None
        self._lost: list[str] = []  # recordings lost as they arrived (see :meth:`lost`)
        # The recording machine's values, read once per use (see promptvcr.identity).
        self._identity = None if writing.identity is None else writing.identity.identity()
        self.saved = Saved()

    def recorded(self, interaction: Interaction) -> None:
        """Write ``interaction`` now (or with the batch of the thread writing already)."""
        with self._lock:
            self._pending.append((self._count, interaction))
            self._count += 1
            if self._busy:
                return
            self._busy = True
        try:
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                    if not batch:
                        return
                self._write(batch)
        finally:
            with self._lock:
                self._busy = False

    def _target(self) -> Path:
        if not self._rewrite:
            return self._path
        if self._aside is None:
            self._aside = rerecord.reserve_aside(self._path)
        return self._aside

    def _write(self, batch: Sequence[tuple[int, Interaction]], *, hooked: bool = False) -> None:
        """Write ``batch`` (each recording with its index in the use); what fails is kept for the
        end, never raised into the code under test (this runs in the HTTP client's call, as the
        response completes). Redaction runs here, per recording, so a secret never reaches the
        disk; its refusals and masks name ``recorded[N]`` over the whole use."""
        kept = list(batch)
        if not hooked:
            kept = []
            for index, interaction in batch:
                each, failures = self._writing.hooked_each([interaction])
                self._hook_errors.extend(failures)
                kept.extend((index, hooked_one) for hooked_one in each)
        try:
            from . import redaction  # loaded at the entry (persister.prepare_to_write)

            target, writing = self._target(), self._writing
            loaded = persister.Loaded([], exists=True, signature=self._signature)
            with persister.collection_paused():  # see Writing.append
                redacted = redaction.redact(
                    [interaction for _, interaction in kept],
                    request_headers=writing.request_headers,
                    response_headers=writing.response_headers,
                    allowed=writing.allowed_secrets,
                    environ=os.environ,
                    indices=[index for index, _ in kept],
                    identity=self._identity,
                )
                if redacted.masked:
                    message = redaction.masked_message(self._path, redacted)
                    warnings.warn(message, redaction.SecretMaskedWarning, stacklevel=2)
                if redacted.identity and self._identity is not None:
                    values = self._identity.values if writing.identity and writing.identity.report else None
                    message = replaced_message(self._path, redacted.identity, values)
                    warnings.warn(message, MachineIdentityWarning, stacklevel=2)
                refused = {label for label, _, _ in redacted.refused}
                with self._lock:
                    self._refused.extend(redacted.refused)
                # Only the stored forms that passed: a refused one is never handed to the writer.
                stored = list(redacted.data)
                kept = [(index, item) for index, item in kept if f"recorded[{index}]" not in refused]
                signature = persister.append(target, stored, loaded) if stored else None
        except (CassetteError, OSError) as error:  # a full disk, a file made unreadable meanwhile
            self._write_error = (
                error
                if isinstance(error, CassetteError)
                else CassetteWriteError(f"Cannot write {self._path}: {error}", path=self._path)
            )
            with self._lock:
                self._unwritten.extend(kept)
            self._signature = None
            return
        if stored:  # None for a text too large to sign: the next append parses the file
            self._signature = signature
        self._written += len(stored)

    def lost(self, request: Request, error: OSError) -> None:
        """The answer to ``request`` could not be kept as it arrived: its body's spool could not
        be written (the temporary folder full, a file size limit). The code got the whole answer;
        the use fails at :meth:`finish` with this, never with the answer written as a cut."""
        where = error.filename or tempfile.gettempdir()
        with self._lock:
            self._lost.append(
                f"the answer to {request.method} {request.url} could not be recorded: writing its body "
                f"to the temporary folder failed: {error.strerror or error} ({where}). The code got the "
                f"whole answer; the cassette holds none of it. Free space there (or point TMPDIR at a "
                f"larger folder) and record again."
            )

    def finish(self, failed: bool) -> Saved:
        """The use ended (``failed``: its block raised or missed). Writes what is still unwritten,
        merges a rewrite that passed, and raises what could not be written (see the module)."""
        failed = failed or bool(self._lost)  # a rewrite missing one: kept aside, not merged
        with self._lock:
            retry, self._unwritten = self._unwritten, []
        if retry:
            self._write_error = None
            self._write(retry, hooked=True)
        saved = Saved(self._written)
        if self._rewrite and self._aside is None and not failed and not self._path.exists():
            persister.replace(self._path, [])  # a rewrite that sent nothing: an empty cassette, as ever
        if self._rewrite and self._aside is not None:
            saved = Saved(0, self._aside, self._written)
            if not failed and self._write_error is None:
                try:
                    rerecord.merge_aside(self._path, self._aside, self._key)
                    saved = Saved(self._written)
                except CassetteWriteError as error:
                    self._write_error = error
        self.saved = saved
        if self._write_error is not None:
            raise self._write_error
        if self._lost:
            lost = "\n".join(self._lost)
            raise CassetteWriteError(
                f"Cassette {self._path}: {len(self._lost)} recording(s) lost: {lost}", path=self._path
            )
        if self._refused:
            from . import redaction

            refused = sorted(self._refused, key=lambda each: int(each[0].split("[", 1)[1].rstrip("]")))
            whole = redaction.Redacted(refused=refused, total=self._count)
            whole.data = [{}] * self._written  # "the other N were written": counted, not held
            raise CassetteSecretError(redaction.refused_message(self._path, whole), path=self._path)
        if self._hook_errors:
            interaction, hook_error = self._hook_errors[0]
            request = interaction.request
            raise HookError(
                f"A before_record hook raised {type(hook_error).__name__}: {hook_error} on {request.method} "
                f"{request.url} while writing {self._path}; that interaction was not written "
                f"({len(self._hook_errors)} left out so, {self._written} written). Fix the hook and "
                f"record again.",
                path=self._path,
            ) from hook_error
        return saved

"""Errors promptvcr raises, each written for the person who will read it in a failing test.

`CassetteMiss` derives from `BaseException`, not `Exception`, on purpose: it is raised
*inside* the HTTP transport, and the provider SDKs wrap every `Exception` that a
transport raises into their own connection errors and retry it (anthropic turns it into
`APIConnectionError` after its retries, openai likewise). Deriving from `BaseException`
lets a miss pass through their `except Exception` clauses and reach the test as itself,
immediately, the same way `KeyboardInterrupt` and pytest's own outcomes do.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "NOTE_START",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "CassetteSecretError",
    "CassetteWriteError",
    "RecordInCIError",
    "StaleCassetteError",
]


#: How the note a cassette adds to an error that hid a miss starts (see :meth:`CassetteMiss.note`).
NOTE_START = "promptvcr: "


class CassetteMiss(BaseException):
    """No recorded response matches a request, and the record mode does not allow the network."""

    def __init__(self, message: str, *, cassette: Path | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cassette = Path(cassette) if cassette is not None else None

    def __str__(self) -> str:
        return self.message

    @classmethod
    def swallowed(cls, first: CassetteMiss, count: int, cassette: Path | str) -> CassetteMiss:
        """The miss raised as a cassette exits, when the code under test caught ``first`` (and
        ``count`` misses in all) and returned normally: a swallowed miss never passes silently."""
        misses = f"{count} request(s) missed" if count != 1 else "1 request missed"
        return cls(
            f"{first.message}\n\nThe code under test caught this CassetteMiss and went on ({misses} "
            f"while {cassette} was active); promptvcr raises it as the cassette exits.",
            cassette=first.cassette or cassette,
        )

    @classmethod
    def unwrapped(cls, error: BaseException | None) -> CassetteMiss | None:
        """The first miss of an exception group that holds one (an anyio task group, as the
        ``mcp`` SDK runs each session in one, wraps whatever its tasks raised); ``None`` for
        any other error. The test then gets the miss itself, not a group: the group's other
        errors are what the miss brought down (a session's other calls, concurrent with the
        one that missed, see their connection closed)."""
        if error is None or not isinstance(getattr(error, "exceptions", None), tuple):  # not a group
            return None
        pending: list[BaseException] = [error]
        while pending:
            item = pending.pop(0)
            if isinstance(inner := getattr(item, "exceptions", None), tuple):
                pending[:0] = inner
            elif isinstance(item, cls):
                return item
        return None

    @classmethod
    def raise_at_exit(cls, error: BaseException | None, misses: list[CassetteMiss], cassette: Path) -> None:
        """What a cassette raises as it exits after ``misses``, the body having raised ``error``
        (``None``: it returned): the miss itself out of a task group that holds one; a note on a
        framework's own error that hid one (3.11+); a swallowed miss raised again. The body's
        own error is otherwise left to show, untouched."""
        if (miss := cls.unwrapped(error)) is not None:
            raise miss from None
        if not misses or isinstance(error, CassetteMiss):
            return
        if (add_note := getattr(error, "add_note", None)) is not None:
            add_note(misses[0].note(len(misses)))
        elif error is None:
            raise cls.swallowed(misses[0], len(misses), cassette)

    def note(self, count: int) -> str:
        """What a cassette adds to another error the body raised after it caught this miss
        (a framework that turned the miss into its own error)."""
        return (
            f"{NOTE_START}{count} request(s) missed a cassette before this error; the first:\n{self.message}"
        )


class CassetteError(Exception):
    """Base class of the ordinary errors about a cassette file (format, writing)."""

    def __init__(self, message: str, *, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = Path(path) if path is not None else None

    def __str__(self) -> str:
        return self.message


class CassetteFormatError(CassetteError):
    """A cassette file exists but cannot be read: corrupt, truncated, unknown version, not a file."""


class CassetteWriteError(CassetteError):
    """A cassette could not be written; the file on disk is left as it was."""


class CassetteSecretError(CassetteWriteError):
    """A recording holds something shaped like a credential; the cassette was not written."""


class RecordInCIError(CassetteError):
    """A cassette would record, rewrite or verify while ``$CI`` is set, and nothing allowed it."""


class StaleCassetteError(CassetteError):
    """A cassette holds interactions older than its ``max_age`` (with ``on_stale="fail"``)."""

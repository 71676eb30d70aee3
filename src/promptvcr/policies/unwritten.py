"""What a recording run receives but does not write: error answers, and answers never finished.

``on_record_error``: a rate limit, a server error or a timeout is not stored as the answer.

A recording run that hits a 429, a 5xx or a read timeout would freeze that moment of a
flaky provider into the cassette, and every replay would fail the same way: by default
(``on_record_error="skip"``) such a response still reaches the code under test, but the
cassette keeps nothing for it, with a :class:`RecordErrorWarning` that says so (the SDK's
retry, if it succeeds, is what gets recorded). A test of the error path asks for it with
``on_record_error="keep"``, or declares the failure with :mod:`promptvcr.faults`.

A response the code neither read to the end nor closed when the cassette exits (a stream
whose consumer raised, or that it abandoned) was paid for: it is recorded as far as it
arrived, with ``end: closed`` (:func:`record_abandoned`), as a stream closed early is. Only
one no recorder can end that way is left out, and :func:`unfinished_message` says which.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

from ..cassettes.models import Request, Response
from .modes import option_text, serving

__all__ = [
    "ON_RECORD_ERROR",
    "RecordErrorWarning",
    "check_on_record_error",
    "is_transient",
    "record_abandoned",
    "skipped",
    "skipped_message",
    "unfinished_message",
    "warn_unfinished",
]

ON_RECORD_ERROR = ("skip", "keep")


class RecordErrorWarning(UserWarning):
    """A 429, 5xx or timed-out response received while recording was not written to the cassette."""


def check_on_record_error(value: str) -> str:
    if value not in ON_RECORD_ERROR:
        raise ValueError(f"on_record_error is {value!r}; expected one of {', '.join(ON_RECORD_ERROR)}.")
    return value


def is_transient(response: Response) -> bool:
    """A rate limit (429), a server error (5xx) or a body cut by a read timeout."""
    return response.status == 429 or response.status >= 500 or response.end == "read_timeout"


def skipped(path: Path, request: Request, response: Response) -> bool:
    """Whether ``response`` is left out of the file (:func:`is_transient`), with a
    :class:`RecordErrorWarning` saying so when it is."""
    if not is_transient(response):
        return False
    warnings.warn(skipped_message(path, request, response), RecordErrorWarning, stacklevel=3)
    return True


def skipped_message(path: Path, request: Request, response: Response) -> str:
    what = "a read timeout" if response.end == "read_timeout" else f"status {response.status}"
    return (
        f"promptvcr: {request.method} {request.url} got {what} while recording {path}; the code received "
        f"it, but it was not written to the cassette (a flaky provider is not frozen into every replay). "
        f"To record this answer on purpose, pass {option_text('on_record_error', 'keep')}; to test an error "
        f"path without the network, use promptvcr.faults{' (serve: --fault)' if serving() else ''}."
    )


def record_abandoned(unfinished: dict[int, tuple[Request, Callable[[], None] | None]]) -> None:
    """Record each response still arriving as far as it arrived (its recorder's ``abandon``)."""
    for _, abandon in list(unfinished.values()):
        if abandon is not None:
            abandon()


def unfinished_message(path: Path, requests: Iterable[Request]) -> str:
    """Responses the code neither read to the end nor closed before the cassette exited.

    (A response closed early, cut by the server, or abandoned, is recorded as such and not listed.)"""
    listed = [f"  {r.method} {r.url}" for r in requests]
    return (
        f"promptvcr: {len(listed)} response(s) recorded into {path} were neither read "
        f"to the end nor closed when the cassette exited, and could not be recorded as far as they "
        f"arrived, so they were not written:\n" + "\n".join(listed) + "\n"
        "Read each response to the end or close it (use the SDK's stream as a context manager) "
        "inside the cassette; what was read is then recorded."
    )


def warn_unfinished(path: Path, requests: Iterable[Request]) -> None:
    """A ``RuntimeWarning`` listing the responses :func:`unfinished_message` names, if any."""
    if requests := list(requests):
        warnings.warn(unfinished_message(path, requests), RuntimeWarning, stacklevel=3)

"""The value handed from one pipeline step to the next.

Steps are plain functions ``Job -> Job``. Keeping everything a step may need in one immutable
record lets a user drop in, reorder or replace steps without any registry or base class: a
step reads the fields it cares about and returns ``job._replace(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

JSONValue = Any
"""A value ``json.loads`` can return. ``Any`` because recursive aliases buy nothing here."""

Schema = dict[str, Any]
TagPair = tuple[str, str]


class _Nothing:
    """Marks "no value yet"; ``None`` cannot, because ``null`` is a valid answer."""

    _instance: _Nothing | None = None

    def __new__(cls) -> _Nothing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOTHING"

    def __bool__(self) -> bool:
        return False


NOTHING = _Nothing()


class Candidate(NamedTuple):
    """A stretch of the input that may hold the answer.

    ``start``/``end`` are offsets into the original text, so the selection step can look at
    what the model wrote *between* two candidates (a correction, or just a newline).
    ``origin`` is ``"tag"``, ``"fence"``, ``"text"`` or ``"upstream"`` (json_repair read the
    whole text); the selection rules differ by origin.
    """

    text: str
    start: int
    end: int
    origin: str
    known_broken: bool = False  # already failed json.loads: the syntax step need not retry it


class Job(NamedTuple):
    """Everything known about one repair so far.

    Immutable: a step returns ``job._replace(field=...)`` (a named tuple, because pipelines
    run per model response and ``dataclasses.replace`` costs more than some repairs).
    """

    text: str
    schema: Schema | None = None
    tags: tuple[TagPair, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    parsed: tuple[tuple[Candidate, JSONValue], ...] = ()
    value: JSONValue = NOTHING
    stream_stable: bool = False  # the text is a prefix of output still arriving (see ``parse``)

    @property
    def done(self) -> bool:
        """True once some step has produced the value (the fast path, usually)."""
        return self.value is not NOTHING


Step = Callable[[Job], Job]

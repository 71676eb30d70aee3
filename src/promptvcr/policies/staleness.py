"""``max_age``: how old a cassette's recordings may be before a run says so, fails, or re-records.

A cassette replays what the provider answered on the day it was recorded; models are
deprecated and answers change shape while a replayed suite stays green. Each interaction
keeps the date it was recorded (``recorded`` in the file, see :mod:`~promptvcr.files.fileformat`), so a
cassette whose oldest interaction is older than ``max_age`` is stale, and ``on_stale``
says what happens: ``warn`` (a :class:`StaleCassetteWarning`, the default), ``fail``
(:class:`~promptvcr.errors.StaleCassetteError` as the cassette is entered) or ``rewrite``
(the cassette records anew, as in ``RecordMode.rewrite``; refused on CI like any recording).

An interaction without a date (recorded before promptvcr kept one) counts as stale, its age
unknown: the file's modification time would say nothing (a git checkout sets it to now).
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import StaleCassetteError
from .modes import (
    ENV_MAX_AGE,
    ENV_ON_STALE,
    ON_STALE,
    RecordMode,
    check_ci,
    option_name,
    option_text,
    rerecord_text,
)

if TYPE_CHECKING:
    from ..cassettes.models import Interaction
    from ..files.persister import Loaded

__all__ = [
    "ENV_MAX_AGE",
    "ENV_ON_STALE",
    "ON_STALE",
    "StaleCassetteWarning",
    "Staleness",
    "mode_after",
    "parse_max_age",
    "resolve_on_stale",
    "rewrite",
    "staleness",
]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", re.IGNORECASE)


class StaleCassetteWarning(UserWarning):
    """A cassette holds interactions older than its ``max_age`` (``on_stale="warn"``)."""


def parse_max_age(value: str | timedelta | float | None) -> timedelta | None:
    """``"30d"``, ``"12h"``, ``"90m"``, ``"45s"``, ``"2w"``, a number of seconds or a timedelta;
    ``None`` or ``""`` for no limit (the default: ``$PROMPTVCR_MAX_AGE`` when set)."""
    if value is None or isinstance(value, timedelta):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return timedelta(seconds=value)
    text = str(value).strip()
    if not text:
        return None
    if (match := _AGE.fullmatch(text)) is None:
        raise ValueError(
            f"{option_name('max_age')} {value!r} is not an age: write a number and a unit, s, m, h, d or w "
            f"(30d, 12h), or give a timedelta."
        )
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2).lower()])


def resolve_on_stale(value: str | None) -> str:
    """The ``on_stale`` given, else ``$PROMPTVCR_ON_STALE``, else ``warn``."""
    given = value if value is not None else os.environ.get(ENV_ON_STALE, "").strip() or "warn"
    if given not in ON_STALE:
        raise ValueError(f"on_stale is {given!r}; expected one of {', '.join(ON_STALE)}.")
    return given


def _age_text(age: timedelta) -> str:
    """``30 days``, ``12 hours``, ``1 day``: the largest unit that says it without fractions
    below two of it (``36 hours``, not ``1 day``)."""
    seconds = int(age.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size or (seconds >= size and seconds % size == 0):
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


@dataclass(frozen=True)
class Staleness:
    """The interactions of one cassette older than its ``max_age``."""

    path: Path
    max_age: timedelta
    total: int
    stale: int
    undated: int
    oldest: timedelta | None

    def message(self, action: str) -> str:
        ages = []
        if self.oldest is not None:
            ages.append(f"the oldest was recorded {_age_text(self.oldest)} ago")
        if self.undated:
            ages.append(f"{self.undated} have no recorded date, so their age is unknown")
        then = f" {action}" if action else ""
        limit = option_text("max_age", _age_text(self.max_age), quoted=False)
        return (
            f"promptvcr: cassette {self.path} is older than {limit}: "
            f"{self.stale} of its {self.total} interaction(s) are stale ({'; '.join(ages)}).{then}\n"
            f"Re-record it: {rerecord_text('rewrite')}."
        )


def staleness(
    path: Path, interactions: Sequence[Interaction], max_age: timedelta, now: datetime | None = None
) -> Staleness | None:
    """Which of ``interactions`` are older than ``max_age``; ``None`` when none is."""
    now = now or datetime.now(timezone.utc)
    ages = [None if i.recorded is None else now - i.recorded for i in interactions]
    stale = [age for age in ages if age is None or age > max_age]
    if not stale:
        return None
    dated = [age for age in stale if age is not None]
    return Staleness(path, max_age, len(ages), len(stale), len(stale) - len(dated), max(dated, default=None))


def rewrite(path: Path, loaded: Loaded, max_age: timedelta | None, on_stale: str | None) -> bool:
    """Act on a loaded cassette's stale recordings: warn, raise ``StaleCassetteError``, or say
    ``True`` (re-record it). ``max_age`` ``None`` is ``$PROMPTVCR_MAX_AGE``, when set."""
    max_age = max_age or parse_max_age(os.environ.get(ENV_MAX_AGE))
    if max_age is None or not loaded.interactions:
        return False
    if (stale := staleness(path, loaded.interactions, max_age)) is None:
        return False
    action = resolve_on_stale(on_stale)
    if action == "fail":
        raise StaleCassetteError(
            stale.message(f"{option_text('on_stale', 'fail', quoted=False)} stops here."), path=path
        )
    if action == "warn":
        warnings.warn(StaleCassetteWarning(stale.message("")), stacklevel=4)
    return action == "rewrite"


def mode_after(
    mode: RecordMode, path: Path, loaded: Loaded, max_age: timedelta | None, on_stale: str | None
) -> RecordMode:
    """The record mode of a cassette just loaded: ``mode``, or ``RecordMode.REWRITE`` when its
    stale recordings are to be recorded anew (:func:`rewrite`; refused on CI like any recording).
    The old file stays until the block succeeds."""
    if mode.reads_cassette and rewrite(path, loaded, max_age, on_stale):
        because = f", from {option_name('max_age')} with {option_text('on_stale', 'rewrite', quoted=False)}"
        check_ci(RecordMode.REWRITE, path, because=because)
        return RecordMode.REWRITE
    return mode

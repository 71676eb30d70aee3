"""Record modes: what a cassette may read, send and write."""

from __future__ import annotations

import os
from enum import Enum

__all__ = ["ENV_RECORD_MODE", "RecordMode", "resolve_record_mode"]

ENV_RECORD_MODE = "PROMPTVCR_RECORD_MODE"


class RecordMode(str, Enum):
    """How a cassette treats a request.

    ====================  ==============  =================  ===========================
    mode                  reads cassette  network            writes cassette
    ====================  ==============  =================  ===========================
    ``replay`` (default)  yes             never              never (a miss is an error)
    ``record``            yes             only for misses    appends new interactions
    ``rewrite``           no              always             replaces the cassette
    ``passthrough``       no              always             never
    ====================  ==============  =================  ===========================
    """

    REPLAY = "replay"
    RECORD = "record"
    REWRITE = "rewrite"
    PASSTHROUGH = "passthrough"

    def __str__(self) -> str:
        return self.value

    @property
    def reads_cassette(self) -> bool:
        return self in (RecordMode.REPLAY, RecordMode.RECORD)

    @property
    def writes_cassette(self) -> bool:
        return self in (RecordMode.RECORD, RecordMode.REWRITE)


def _parse(value: str | RecordMode, source: str) -> RecordMode:
    if isinstance(value, RecordMode):
        return value
    try:
        return RecordMode(str(value).strip().lower())
    except ValueError:
        valid = ", ".join(mode.value for mode in RecordMode)
        raise ValueError(f"Unknown record mode {value!r} (from {source}). Valid modes: {valid}.") from None


def resolve_record_mode(value: str | RecordMode | None = None) -> RecordMode:
    """The mode given, else ``$PROMPTVCR_RECORD_MODE``, else ``replay``, so CI never records by accident."""
    if value is not None:
        return _parse(value, "the record_mode argument")
    from_env = os.environ.get(ENV_RECORD_MODE, "").strip()
    if from_env:
        return _parse(from_env, f"the environment variable {ENV_RECORD_MODE}")
    return RecordMode.REPLAY

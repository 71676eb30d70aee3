"""Record modes: what a cassette may read, send and write; and which of them CI may run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import Enum
from pathlib import Path

from ..errors import RecordInCIError

__all__ = [
    "ENV_ALLOW_IN_CI",
    "ENV_MAX_AGE",
    "ENV_ON_STALE",
    "ENV_PYTEST_RECORD_FLAG",
    "ENV_RECORD_MODE",
    "ON_STALE",
    "VCR_MODES",
    "RecordMode",
    "check_ci",
    "on_ci",
    "option_name",
    "option_text",
    "record_flag",
    "rerecord_text",
    "resolve_record_mode",
    "serving",
    "vcr_mode_note",
]

ENV_RECORD_MODE = "PROMPTVCR_RECORD_MODE"
#: Set to 1 to let ``record``, ``rewrite`` and ``verify`` run where ``$CI`` is set.
ENV_ALLOW_IN_CI = "PROMPTVCR_ALLOW_RECORD_IN_CI"
#: ``max_age`` and ``on_stale`` for every cassette of a run (see :mod:`.staleness`): here,
#: with the other settings a run exports, so that the pytest plugin names them without loading
#: the cassette machinery.
ENV_MAX_AGE = "PROMPTVCR_MAX_AGE"
ENV_ON_STALE = "PROMPTVCR_ON_STALE"
#: The recording budget of a run (see :mod:`promptvcr.policies.budget`), and the folder of the
#: ledger its processes share (:mod:`promptvcr.policies.ledger`).
ENV_MAX_RECORD_TOKENS = "PROMPTVCR_MAX_RECORD_TOKENS"
ENV_MAX_RECORD_REQUESTS = "PROMPTVCR_MAX_RECORD_REQUESTS"
ENV_BUDGET_DIR = "PROMPTVCR_BUDGET_DIR"
ON_STALE = ("warn", "fail", "rewrite")
_FALSE = ("", "0", "false", "no", "off")
#: The pytest option that sets promptvcr's record mode in the running pytest, written there by
#: the plugin (``pytest_plugin.coexist``): ``--promptvcr-record-mode`` when pytest-recording owns
#: ``--record-mode``. Read from the environment so that messages built without pytest code (a
#: miss, a stale cassette, drift) and a ``promptvcr serve`` child of that pytest name the option
#: that works there.
ENV_PYTEST_RECORD_FLAG = "PROMPTVCR_PYTEST_RECORD_FLAG"


def record_flag() -> str:
    """The pytest option that sets promptvcr's record mode in this run."""
    return os.environ.get(ENV_PYTEST_RECORD_FLAG) or "--record-mode"


#: Set by ``promptvcr serve`` in its own process: its users set a cassette's options as the
#: command's flags (or the admin start's fields), not as Python keywords or pytest options,
#: so the messages raised there name those.
SERVE_WORDING = "PROMPTVCR_SERVE_WORDING"


def serving() -> bool:
    """Whether this process is ``promptvcr serve`` (see :data:`SERVE_WORDING`)."""
    return bool(os.environ.get(SERVE_WORDING))


def option_name(keyword: str) -> str:
    """The cassette option ``keyword`` as the reader of a message spells it (see :func:`option_text`)."""
    return "--" + keyword.replace("_", "-") if serving() else keyword


def option_text(keyword: str, value: object = True, *, quoted: bool = True) -> str:
    """How the reader of a message sets the cassette option ``keyword`` to ``value``:
    ``on_record_error="keep"`` in Python, ``--on-record-error keep`` in ``promptvcr serve``
    (``quoted=False``: a value shown as it reads, ``max_age=30 days``)."""
    if serving():
        flag = option_name(keyword)
        return flag if value is True else f"{flag} {value}"
    shown = f'"{value}"' if quoted and isinstance(value, str) else str(value)
    return f"{keyword}={shown}"


def rerecord_text(mode: str, tests: str = "<the tests that use it>") -> str:
    """How the reader of a message runs a cassette again in record ``mode``."""
    if serving():
        return (
            f'promptvcr serve --record-mode {mode} (or "record_mode": "{mode}" in the '
            f"POST /_promptvcr/start of the test that uses it)"
        )
    command = " ".join(part for part in ("python -m pytest", f"{record_flag()}={mode}", tests) if part)
    return f"{command}, or PROMPTVCR_RECORD_MODE={mode} outside pytest"


#: vcrpy's (and pytest-recording's) mode names and ours. ``once`` records a cassette that
#: does not exist yet and replays one that does; it is resolved per cassette path.
VCR_MODES = {"none": "replay", "once": "once", "new_episodes": "record", "all": "rewrite"}


class RecordMode(str, Enum):
    """How a cassette treats a request.

    ====================  ==============  =================  ===========================
    mode                  reads cassette  network            writes cassette
    ====================  ==============  =================  ===========================
    ``replay`` (default)  yes             never              never (a miss is an error)
    ``record``            yes             only for misses    appends new interactions
    ``rewrite``           no              always             replaces the cassette
    ``passthrough``       no              always             never
    ``verify``            yes             for every match    never (reports drift)
    ====================  ==============  =================  ===========================

    ``verify`` sends each request that matches a recorded interaction to the network (the
    live answer reaches the code) and compares the live answer's structure with the
    recording (see :mod:`promptvcr.policies.shapes`), listing the differences in
    ``Cassette.drift``; a request with no recording goes to the network too, reported as
    "not recorded". It finds the provider changes a replayed suite cannot see.
    """

    REPLAY = "replay"
    RECORD = "record"
    REWRITE = "rewrite"
    PASSTHROUGH = "passthrough"
    VERIFY = "verify"

    def __str__(self) -> str:
        return self.value

    @property
    def reads_cassette(self) -> bool:
        return self in (RecordMode.REPLAY, RecordMode.RECORD, RecordMode.VERIFY)

    @property
    def replays(self) -> bool:
        """A request the cassette holds is answered from it (``verify`` sends it to the network)."""
        return self in (RecordMode.REPLAY, RecordMode.RECORD)

    @property
    def writes_cassette(self) -> bool:
        return self in (RecordMode.RECORD, RecordMode.REWRITE)


def vcr_mode_note(value: object) -> str | None:
    """What a vcrpy mode name means here, or ``None`` for one of ours."""
    name = str(value).strip().lower()
    if name not in VCR_MODES or isinstance(value, RecordMode):
        return None
    if name == "once":
        return (
            "record mode 'once' is vcrpy's: promptvcr records a missing cassette and replays an existing one"
        )
    return f"record mode {name!r} is vcrpy's name for promptvcr's {VCR_MODES[name]!r}"


def _parse(value: str | RecordMode, source: str, path: Path | None = None) -> RecordMode:
    if isinstance(value, RecordMode):
        return value
    name = str(value).strip().lower()
    name = VCR_MODES.get(name, name)
    if name == "once":  # vcrpy's: record what does not exist yet, never add to what does
        return RecordMode.REPLAY if path is None or path.exists() else RecordMode.RECORD
    try:
        return RecordMode(name)
    except ValueError:
        valid = ", ".join(mode.value for mode in RecordMode)
        raise ValueError(f"Unknown record mode {value!r} (from {source}). Valid modes: {valid}.") from None


def resolve_record_mode(value: str | RecordMode | None = None, path: Path | None = None) -> RecordMode:
    """The mode given, else ``$PROMPTVCR_RECORD_MODE``, else ``replay``, so CI never records by accident.

    vcrpy's names are accepted: ``none`` is ``replay``, ``new_episodes`` is ``record``, ``all``
    is ``rewrite``, and ``once`` is ``record`` when the cassette at ``path`` does not exist yet,
    else ``replay``.
    """
    if value is not None:
        return _parse(value, "the record_mode argument", path)
    from_env = os.environ.get(ENV_RECORD_MODE, "").strip()
    if from_env:
        return _parse(from_env, f"the environment variable {ENV_RECORD_MODE}", path)
    return RecordMode.REPLAY


def on_ci(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$CI`` says this is a CI run (any value but empty, ``0``, ``false``, ``no``, ``off``)."""
    return (os.environ if environ is None else environ).get("CI", "").strip().lower() not in _FALSE


def check_ci(mode: RecordMode, path: Path, *, because: str = "") -> None:
    """Refuse ``record``, ``rewrite`` and ``verify`` on CI unless ``$PROMPTVCR_ALLOW_RECORD_IN_CI``
    is set: a CI run should never spend money on a provider or write cassettes by accident
    (an exported ``PROMPTVCR_RECORD_MODE``, a ``max_age`` set to re-record, vcrpy's ``once``)."""
    if mode not in (RecordMode.RECORD, RecordMode.REWRITE, RecordMode.VERIFY) or not on_ci():
        return
    if os.environ.get(ENV_ALLOW_IN_CI, "").strip().lower() not in _FALSE:
        return
    action = "send its requests to the provider" if mode is RecordMode.VERIFY else "record into it"
    raise RecordInCIError(
        f"promptvcr: cassette {path} would {action} (record mode {mode.value}{because}), but $CI is set, "
        f"and a CI run does not spend money on a provider or write cassettes unless told to.\n"
        f"Record locally and commit the cassette; or, to do this on CI on purpose, set "
        f"{ENV_ALLOW_IN_CI}=1{'' if serving() else ' (pytest: --allow-record-in-ci)'}.",
        path=path,
    )

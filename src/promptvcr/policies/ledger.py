"""The run's recording budget, shared: one small file, under a lock, that every process of the run updates.

A budget set for a run (``pytest --max-record-requests=3``) is what the user expects the run
to spend, however many processes send: pytest-xdist workers, the application a test starts,
``promptvcr serve``. Counting in each process let ``-n 4`` spend four budgets (issue 45). So
the process that sets the limit (pytest's main process, or else the first process that sends
live with a limit set) makes a folder holding a ledger, and names it in
``$PROMPTVCR_BUDGET_DIR`` (:data:`~.modes.ENV_BUDGET_DIR`), which workers and children
inherit, as ``$PROMPTVCR_USAGE_DIR`` names the usage record's folder (:mod:`promptvcr.usage`).

A request is counted before it is sent (:meth:`Ledger.reserve`: the check and the count are
one step under the lock, so two processes never both take the last request), its answer's
tokens when they arrive (:meth:`Ledger.add`). The file is read and written only for a request
about to go live with a budget set: never on replay.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cassettes.tokens import Tokens

__all__ = ["Ledger", "LedgerGone", "Spent"]

_VERSION = 1
_FILE = "ledger.json"
#: Seconds to wait for another process's update (each holds the lock for one small read and write).
_WAIT = 30.0


@dataclass
class Spent:
    """What the run spent recording, over all its processes."""

    requests: int = 0
    input: int = 0
    output: int = 0
    #: Requests refused once the budget was spent.
    refused: int = 0
    #: Processes that share the budget: those that sent (or were refused), or the run's
    #: pytest-xdist workers when more.
    processes: int = 1

    @property
    def tokens(self) -> Tokens:
        from ..cassettes.tokens import Tokens

        return Tokens(self.input, self.output)


class LedgerGone(OSError):
    """The run that made the ledger has ended (its folder is gone) or it cannot be read."""


class Ledger:
    """The ledger in ``folder``: ``ledger.json``, changed under ``ledger.json.lock``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file = folder / _FILE

    @classmethod
    def create(cls, workers: int = 0) -> Ledger:
        """A new, empty ledger in a folder of its own; ``workers``: the run's pytest-xdist workers."""
        ledger = cls(Path(tempfile.mkdtemp(prefix="promptvcr-budget-")))
        ledger._write({"version": _VERSION, "workers": workers, "pids": []})
        return ledger

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def reserve(self, check: Callable[[Spent], list[str]]) -> tuple[Spent, list[str]]:
        """Count one request about to be sent, unless ``check`` of what was spent before it
        says why not (the limits it is over): then count it refused. Both under the lock."""
        with _locked(self) as data:
            pids = data.setdefault("pids", [])
            if os.getpid() not in pids:
                pids.append(os.getpid())
            over = check(_spent(data))
            key = "refused" if over else "requests"
            data[key] = data.get(key, 0) + 1
            self._write(data)
            return _spent(data), over

    def add(self, tokens: Tokens) -> None:
        """Add the tokens an answer received live reported."""
        with _locked(self) as data:
            data["input"] = data.get("input", 0) + tokens.input
            data["output"] = data.get("output", 0) + tokens.output
            self._write(data)

    def read(self) -> Spent:
        with _locked(self) as data:
            return _spent(data)

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise LedgerGone(f"{self._file}: {error}") from error
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            raise LedgerGone(f"{self._file} is not a promptvcr budget ledger (version {_VERSION})")
        return data

    def _write(self, data: dict[str, Any]) -> None:
        temp = self._file.with_name(f".{_FILE}.{os.getpid()}.tmp")
        try:
            temp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temp, self._file)  # a process killed mid-write leaves the last whole ledger
        except OSError as error:
            raise LedgerGone(f"{self._file}: {error}") from error


@contextlib.contextmanager
def _locked(ledger: Ledger) -> Iterator[dict[str, Any]]:
    """``with _locked(ledger) as data``: the ledger's content, read under its file lock."""
    from filelock import FileLock, Timeout  # loaded by the first live request of a run with a budget

    if not ledger.folder.is_dir():  # the lock would be made in a folder made again
        raise LedgerGone(f"{ledger.folder} is gone")
    lock = FileLock(str(ledger.folder / f"{_FILE}.lock"), timeout=_WAIT)
    try:
        lock.acquire(poll_interval=0.002)
    except Timeout:
        raise LedgerGone(f"{ledger.folder}: locked by another process for {_WAIT:.0f} s") from None
    except OSError as error:
        raise LedgerGone(f"{ledger.folder}: {error}") from error
    try:
        yield ledger._read()
    finally:
        lock.release()


def _spent(data: dict[str, Any]) -> Spent:
    pids = data.get("pids", [])
    return Spent(
        requests=int(data.get("requests", 0)),
        input=int(data.get("input", 0)),
        output=int(data.get("output", 0)),
        refused=int(data.get("refused", 0)),
        processes=max(1, len(pids) if isinstance(pids, list) else 0, int(data.get("workers", 0))),
    )

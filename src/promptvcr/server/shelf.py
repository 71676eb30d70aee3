"""The cassettes a server serves: the one on its command line, a folder's, and those started per test.

Three ways a request finds its cassette, the most specific first:

1. the ``x-promptvcr-cassette`` header, naming a cassette file (opened on first use, with the
   server's options), for clients that can set a header but not call the admin endpoint;
2. with a folder on the command line (an existing directory, or a path ending in ``/``), the
   first segment of the path: ``/NAME/openai/v1/chat/completions`` plays ``FOLDER/NAME.yaml``
   (``NAME.json`` when that file exists), as a base URL is the one thing every SDK lets a user set;
3. the cassette started with ``POST /_promptvcr/start`` when exactly one is started, else the
   file given on the command line. Two started cassettes and no header: the request fails
   closed, as two active cassettes do in-process.

Every path a client names (the header, the admin start and stop, a folder's name) must lie in
the cassette folder once symlinks are resolved (:attr:`Shelf.roots`: the served folder; else
the server's working directory, and the folder of the file served) and be a regular file or
absent; anything else (``../``, an absolute path elsewhere, ``~``, a symlink out, a FIFO or a
device) is a :class:`BadPath`, answered ``400``, and nothing is opened or created. A client
is a program that may have been reached from a web page (DNS rebinding): it must not read or
write files beyond the folder.

A started cassette is a fresh :class:`.served.ServedCassette` each time (its answers are not
used up by an earlier test), and stopping it writes it and gives its report. Keys, modes,
redaction, secret refusal, faults and timing are the in-process ones.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import usage
from ..cassettes.models import Request
from ..credentials.byname import redact_query_values
from ..errors import CassetteError, CassetteMiss
from .served import ServedCassette

__all__ = [
    "CASSETTE_HEADER",
    "NAME_PATTERN",
    "BadPath",
    "Shelf",
    "is_folder",
    "report_entry",
    "shown_request",
]

#: A folder cassette's name: one path segment of letters, digits, ``-``, ``_`` and ``.``.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
#: The request header naming the cassette of a request.
CASSETTE_HEADER = "x-promptvcr-cassette"
_SUFFIXES = (".yaml", ".yml", ".json")
#: Longest a stop waits for the recordings under way in its cassette (the default ``--grace``).
SETTLE_SECONDS = 5.0


class BadPath(ValueError):
    """A cassette path a client named that the server will not open (see the module)."""


def is_folder(path: str | Path) -> bool:
    return Path(path).is_dir() or str(path).endswith(("/", "\\"))


def shown_request(request: Request) -> str:
    """``METHOD URL`` with the values of credential query parameters (``?key=``) replaced: the
    report is printed to logs (the server's stderr, a suite's end-of-run report)."""
    return f"{request.method} {redact_query_values(request.url)}"


def report_entry(cassette: ServedCassette) -> dict[str, Any]:
    """What one cassette served: requests per outcome, misses with their messages, the
    recordings no request played, drift (verify), tool drift (tool, call id), the errors writing
    it, and the tokens the answers reported per outcome (a suite in another language prints what
    replaying saved)."""
    from ..cassettes.tokens import Tokens, tokens_of

    outcomes: dict[str, int] = {}
    tokens: dict[str, Tokens] = {}
    for play in cassette.played:
        outcomes[play.outcome] = outcomes.get(play.outcome, 0) + 1
        spent = "replayed" if play.outcome == "tool-drift" else play.outcome  # served from the cassette
        if play.response is not None and spent in ("replayed", "recorded", "verified"):
            tokens[spent] = tokens.get(spent, Tokens()) + tokens_of(play.response)
    return {
        "path": str(cassette.path),
        "mode": cassette.record_mode.value,
        "outcomes": outcomes,
        "played": len(cassette.played),
        "missed": [shown_request(r) for r in cassette.missed],
        "misses": [{"request": shown_request(r), "message": m} for r, m in cassette.miss_messages],
        "unused": [shown_request(i.request) for i in cassette.unplayed],
        "drift": [drift.to_data() for drift in cassette.drift],
        "tool_drift": [
            {"request": shown_request(p.request), "changes": list(p.tool_drift)}
            for p in cassette.played
            if p.outcome == "tool-drift"
        ],
        "cut_short": [shown_request(r) for r in cassette.cut_short],
        "errors": list(cassette.errors),
        "tokens": {outcome: {"input": t.input, "output": t.output} for outcome, t in tokens.items()},
    }


class Shelf:
    """Opens each cassette on first use and closes them all at the end (see the module)."""

    def __init__(self, path: str | Path | None, options: Mapping[str, Any]) -> None:
        self.path = Path(path) if path is not None else None
        self.folder = path is not None and is_folder(path)
        #: Relative cassette paths (header, admin start) are found here.
        self.root = (self.path if self.path is not None and self.folder else Path.cwd()).resolve()
        #: The folders a named cassette may lie in: the served folder; serving one file, the
        #: working directory and that file's folder.
        self.roots = (
            (self.root,) if self.folder or self.path is None else (self.root, self.path.resolve().parent)
        )
        self.options = dict(options)
        self._open: dict[str, ServedCassette] = {}  # folder names, and "" for the command line's file
        self._started: dict[Path, ServedCassette] = {}  # by resolved path: admin start and the header
        self._by_start: set[Path] = set()  # those started by the admin call (the default route)
        self._finished: list[dict[str, Any]] = []  # the reports of cassettes already stopped
        #: What the server did with each cassette it left, for ``--usage-record`` (``promptvcr prune``).
        self.used = usage.Used(f"promptvcr serve, process {os.getpid()}")
        self._lock = threading.Lock()
        if self.folder and self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)

    # Naming a cassette -----------------------------------------------------------------------

    def file_for(self, name: str) -> Path:
        assert self.path is not None
        if not self.folder:
            return self.path
        json_file = self.path / f"{name}.json"
        return self._confined(json_file if json_file.exists() else self.path / f"{name}.yaml", name)

    def resolve(self, given: str) -> Path:
        """A cassette path as a header or the admin start gives it: relative to :attr:`root`,
        ``.yaml`` added when it has no cassette suffix (``.json`` when that file exists);
        :class:`BadPath` when it leaves the folder or is not a regular file (see the module)."""
        if not given or "\x00" in given:
            raise BadPath(f"{given!r} is not a cassette path")
        if given.startswith("~"):
            raise BadPath(f"{given!r}: a cassette path is relative to {self.root}, never to a home folder")
        path = Path(given)
        if not path.is_absolute():
            path = self.root / path
        if not path.name or path.name in (".", ".."):
            raise BadPath(f"{given!r} names a folder, not a cassette file")
        if path.suffix not in _SUFFIXES:
            json_file = path.with_name(path.name + ".json")
            path = json_file if json_file.exists() else path.with_name(path.name + ".yaml")
        return self._confined(path, given)

    def _confined(self, path: Path, given: str) -> Path:
        """``path`` with its symlinks resolved, when that lies in :attr:`root` and is a regular
        file or nothing yet; :class:`BadPath` otherwise. ``stat``, never ``open``: a FIFO
        opened for reading would block the server until someone writes to it."""
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError) as error:  # a symlink loop
            raise BadPath(f"{given!r} cannot be resolved ({error})") from None
        if not any(resolved.is_relative_to(root) for root in self.roots):
            folders = " or ".join(str(root) for root in self.roots)
            raise BadPath(
                f"{given!r} is {resolved}, outside the cassette folder {folders}; "
                f"name a cassette inside it (serve another folder with: promptvcr serve FOLDER/)"
            )
        try:
            mode = os.stat(resolved).st_mode
        except FileNotFoundError:
            return resolved
        except OSError as error:
            raise BadPath(f"{given!r} cannot be read ({error.strerror})") from None
        if not stat.S_ISREG(mode):
            raise BadPath(f"{given!r} is {resolved}, which is not a regular file")
        return resolved

    # Finding the cassette of a request -------------------------------------------------------

    def get(self, name: str = "") -> ServedCassette:
        """The entered cassette for folder name ``name`` (or the command line's file)."""
        if self.path is None:
            raise ValueError(
                "no cassette was started (POST /_promptvcr/start) and none is on the command line"
            )
        if self.folder and not NAME_PATTERN.match(name):
            raise ValueError(f"{name!r} is not a cassette name (letters, digits, '-', '_', '.')")
        key = name if self.folder else ""
        with self._lock:
            cassette = self._open.get(key)
            if cassette is None:
                cassette = ServedCassette(self.file_for(name), **self.options).__enter__()
                self._open[key] = cassette
            return cassette

    def named(self, given: str) -> ServedCassette:
        """The cassette a request's header names: the started one of that path, else opened now."""
        path = self.resolve(given)
        with self._lock:
            cassette = self._started.get(path)
            if cassette is None:
                cassette = ServedCassette(path, **self.options).__enter__()
                self._started[path] = cassette
            return cassette

    def default(self) -> ServedCassette:
        """The cassette of a request that names none: the one started, or the command line's."""
        with self._lock:
            started = [self._started[path] for path in self._by_start if path in self._started]
        if len(started) == 1:
            return started[0]
        if len(started) > 1:
            listed = ", ".join(sorted(str(c.path) for c in started))
            raise ValueError(
                f"{len(started)} cassettes are started ({listed}) and this request names none: "
                f"send the header {CASSETTE_HEADER}: <path> (or stop the others)"
            )
        if self.folder:
            raise ValueError("this server serves a folder: name the cassette in the path")
        return self.get()

    # Started per test ------------------------------------------------------------------------

    def start(self, given: str, overrides: Mapping[str, Any]) -> tuple[ServedCassette, dict[str, Any] | None]:
        """Start the cassette at ``given`` afresh with the server's options updated by
        ``overrides``; one of that path already started is stopped first (its report second)."""
        path = self.resolve(given)
        previous = self._stop_path(path)
        cassette = ServedCassette(path, **{**self.options, **overrides})  # ValueError: a bad option
        cassette.__enter__()  # CassetteError: a corrupt or stale file
        with self._lock:
            self._started[path] = cassette
            self._by_start.add(path)
        return cassette, previous

    def _started_path(self, given: str | None) -> Path:
        if given is not None:
            return self.resolve(given)
        with self._lock:
            paths = [path for path in self._by_start if path in self._started]
        if len(paths) != 1:
            raise ValueError(f"{len(paths)} cassettes are started: name the one to stop")
        return paths[0]

    async def settle(self, given: str | None, timeout: float = SETTLE_SECONDS) -> None:
        """Wait, at most ``timeout`` seconds, for the recordings under way in a started cassette
        to end: a test stops its cassette as soon as its client is done, when a websocket
        session it closed is still closing upstream (it is written once both sides closed) or
        an answer it stopped reading is still arriving (the cassette keeps it whole). Stopped
        before, they would be cut short, or land after the stop's report."""
        path = self._started_path(given)
        with self._lock:
            cassette = self._started.get(path)
        deadline = time.monotonic() + timeout
        while cassette is not None and cassette.recording and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def stop(self, given: str | None, *, passed: bool = True) -> dict[str, Any]:
        """Stop a started cassette (``None``: the one started), writing it; its report.
        ``passed``: whether the test that used it passed (a failed one may need all of it)."""
        path = self._started_path(given)
        entry = self._stop_path(path, passed=passed)
        if entry is None:
            raise LookupError(f"cassette {path} is not started")
        return entry

    def _stop_path(self, path: Path, *, passed: bool = True) -> dict[str, Any] | None:
        with self._lock:
            cassette = self._started.pop(path, None)
            self._by_start.discard(path)
        if cassette is None:
            return None
        return self._leave(cassette, passed=passed)

    def _leave(self, cassette: ServedCassette, *, passed: bool = True) -> dict[str, Any]:
        """Leave ``cassette`` (writing what is left), and keep its report and its use for the
        server's (:attr:`used`)."""
        cassette.wait_for_writes()  # what a thread is writing (see .relay) is the cassette's first
        try:
            cassette.__exit__(None, None, None)
        except CassetteError as error:
            cassette.errors.append(str(error))
        except CassetteMiss:
            pass  # each miss was answered to its client as an API error, and is in the report
        entry = report_entry(cassette)
        self.used.add(cassette, passed=passed)
        with self._lock:
            self._finished.append(entry)
        return entry

    # The whole server ------------------------------------------------------------------------

    @property
    def cassettes(self) -> list[ServedCassette]:
        with self._lock:
            return [*self._open.values(), *self._started.values()]

    def close(self) -> list[dict[str, Any]]:
        """Leave every cassette still open; the reports of all the server served."""
        with self._lock:
            opened = [*self._open.values(), *self._started.values()]
            self._open, self._started = {}, {}
            self._by_start.clear()
        for cassette in opened:
            self._leave(cassette)
        with self._lock:
            return list(self._finished)

    def report(self) -> list[dict[str, Any]]:
        """What each cassette served so far: those stopped, then those open."""
        with self._lock:
            finished = list(self._finished)
        return [*finished, *(report_entry(cassette) for cassette in self.cassettes)]

"""The cassettes a server serves: one file, or a folder of files named by the clients.

With a file, every request goes to it. With a folder (an existing directory, or a path
ending in ``/``), the first segment of a request's path names the cassette:
``/NAME/openai/v1/chat/completions`` plays ``FOLDER/NAME.yaml`` (``NAME.json`` when that
file exists). A path prefix rather than a header, because a base URL is the one thing every
SDK, language and tool lets a user set. Each cassette is a :class:`~promptvcr.Cassette`,
entered when the first request names it (loading the file) and left when the server stops
(writing what was recorded), so keys, modes, redaction, secret refusal, faults and timing
are the in-process ones.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cassette import Cassette
from ..errors import CassetteError, CassetteMiss

__all__ = ["NAME_PATTERN", "Shelf", "is_folder"]

#: A folder cassette's name: one path segment of letters, digits, ``-``, ``_`` and ``.``.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")


def is_folder(path: str | Path) -> bool:
    return Path(path).is_dir() or str(path).endswith(("/", "\\"))


class Shelf:
    """Opens each cassette once, on first use, and closes them all at the end."""

    def __init__(self, path: str | Path, options: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.folder = is_folder(path)
        self._options = dict(options)
        self._open: dict[str, Cassette] = {}
        self._lock = threading.Lock()
        if self.folder:
            self.path.mkdir(parents=True, exist_ok=True)

    def file_for(self, name: str) -> Path:
        if not self.folder:
            return self.path
        json_file = self.path / f"{name}.json"
        return json_file if json_file.exists() else self.path / f"{name}.yaml"

    def get(self, name: str = "") -> Cassette:
        """The entered cassette for ``name`` (ignored for a single file)."""
        if self.folder and not NAME_PATTERN.match(name):
            raise ValueError(f"{name!r} is not a cassette name (letters, digits, '-', '_', '.')")
        key = name if self.folder else ""
        with self._lock:
            cassette = self._open.get(key)
            if cassette is None:
                cassette = Cassette(self.file_for(name), **self._options)
                cassette.__enter__()
                self._open[key] = cassette
            return cassette

    @property
    def cassettes(self) -> list[Cassette]:
        with self._lock:
            return list(self._open.values())

    def close(self) -> list[str]:
        """Leave every cassette (writing what was recorded); the errors, one line each."""
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        errors = []
        for cassette in opened:
            try:
                cassette.__exit__(None, None, None)
            except CassetteError as error:
                errors.append(str(error))
            except CassetteMiss:
                pass  # each miss was answered to its client as an API error, and logged: none was swallowed
        return errors

    def report(self) -> list[dict[str, Any]]:
        """What each cassette served: per cassette, the requests per outcome and the misses."""
        entries = []
        for cassette in self.cassettes:
            outcomes: dict[str, int] = {}
            for play in cassette.played:
                outcomes[play.outcome] = outcomes.get(play.outcome, 0) + 1
            entries.append(
                {
                    "path": str(cassette.path),
                    "mode": cassette.record_mode.value,
                    "outcomes": outcomes,
                    "missed": [f"{r.method} {r.url}" for r in cassette.missed],
                    "unused": [f"{i.request.method} {i.request.url}" for i in cassette.unplayed],
                }
            )
        return entries

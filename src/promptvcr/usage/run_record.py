"""The usage record: which cassettes, and which of their interactions, one whole test run played.

The pytest plugin writes it at the end of every run (``.promptvcr/usage.json`` under the
rootdir); ``promptvcr prune`` reads it. It is the only evidence prune deletes on, so it
says as much about what the run did *not* see as about what it saw:

* ``incomplete``: why the run cannot vouch for the whole suite (tests deselected or failed,
  only some paths run, the run interrupted); prune refuses to delete anything then;
* ``test_dirs``: the folders of the tests that ran; a cassette outside them was out of the
  run's reach, so its absence from the record proves nothing;
* ``protected``, ``protected_modules``: cassettes (or folders of cassettes) of skipped tests,
  which may still need them.

A test that did not pass (skipped, xfailed) may have stopped before playing everything, so
its cassettes count as wholly used.

Plain JSON data, so that pytest-xdist workers send theirs to the controller to merge.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CassetteError

__all__ = ["RECORD_PATH", "CassetteUsage", "UsageRecord", "read_record"]

#: Where the record lives, relative to the pytest rootdir.
RECORD_PATH = Path(".promptvcr") / "usage.json"
_VERSION = 1


@dataclass
class CassetteUsage:
    """What a run did with one cassette, over every test that used it."""

    interactions: int
    """How many interactions it held when used; ``-1`` when uses disagreed (it changed meanwhile)."""
    unplayed: list[int] = field(default_factory=list)
    """Positions of the interactions that no use played."""
    users: list[str] = field(default_factory=list)
    """Who used it: test ids, and ``process <pid>: <argv>`` for a child process or a server
    outside any test (see :mod:`promptvcr.usage`)."""

    def merge(self, other: CassetteUsage) -> CassetteUsage:
        users = sorted({*self.users, *other.users})
        if self.interactions != other.interactions:
            return CassetteUsage(-1, [], users)  # the file changed during the run: keep all of it
        return CassetteUsage(self.interactions, sorted(set(self.unplayed) & set(other.unplayed)), users)


#: The one reason a shard may give for not running every test that the shards' records together
#: can answer: tests it collected and deselected (a split's ``--group``, ``--deselect``), which
#: are in its ``collected`` and so must be in some shard's ``ran``. A selection by path is not:
#: the tests outside the path were never collected, so no record shows whether any shard ran them.
DESELECTED = "tests were deselected (-k, -m, --deselect or --lf)"


@dataclass
class UsageRecord:
    finished: float = 0.0
    """Seconds since the epoch when the run ended."""
    incomplete: list[str] = field(default_factory=list)
    test_dirs: list[str] = field(default_factory=list)
    protected: list[str] = field(default_factory=list)
    protected_modules: list[str] = field(default_factory=list)
    """Test modules with skipped tests: cassettes in a folder of that name are theirs."""
    cassettes: dict[str, CassetteUsage] = field(default_factory=dict)
    """Resolved cassette path -> its usage."""
    root: str = ""
    """The resolved pytest rootdir the paths lie under: shards of one run on other machines
    (other folders) are moved onto the folder prune runs in (see :mod:`.shards`)."""
    shard: str = ""
    """The shard this run was of a suite split across processes or machines; empty for a whole run."""
    collected: list[str] = field(default_factory=list)
    """A shard's: every test it collected, before the split deselected some."""
    ran: list[str] = field(default_factory=list)
    """A shard's: the tests it ran."""
    selection: list[str] = field(default_factory=list)
    """A shard's: why it did not run every test (the split's deselection); the shards' union
    answers these when together they ran every test collected."""
    digests: dict[str, str] = field(default_factory=dict)
    """A shard's: each used cassette's sha256 when the run ended, so a cassette checked out on
    another machine (a newer file time, the same bytes) is known to be the one the shard used."""

    def use(self, path: str, usage: CassetteUsage) -> None:
        known = self.cassettes.get(path)
        self.cassettes[path] = usage if known is None else known.merge(usage)

    def merge(self, other: UsageRecord) -> None:
        """Add a pytest-xdist worker's record to the controller's."""
        self.incomplete = sorted({*self.incomplete, *other.incomplete})
        self.test_dirs = sorted({*self.test_dirs, *other.test_dirs})
        self.protected = sorted({*self.protected, *other.protected})
        self.protected_modules = sorted({*self.protected_modules, *other.protected_modules})
        for path, usage in other.cassettes.items():
            self.use(path, usage)
        self.collected = sorted({*self.collected, *other.collected})
        self.ran = sorted({*self.ran, *other.ran})
        self.selection = sorted({*self.selection, *other.selection})
        self.digests.update(other.digests)

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        data["version"] = _VERSION
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> UsageRecord:
        cassettes = {path: CassetteUsage(**usage) for path, usage in data.get("cassettes", {}).items()}
        return cls(
            finished=float(data["finished"]),
            incomplete=list(data.get("incomplete", [])),
            test_dirs=list(data.get("test_dirs", [])),
            protected=list(data.get("protected", [])),
            protected_modules=list(data.get("protected_modules", [])),
            cassettes=cassettes,
            root=str(data.get("root", "")),
            shard=str(data.get("shard", "")),
            collected=list(data.get("collected", [])),
            ran=list(data.get("ran", [])),
            selection=list(data.get("selection", [])),
            digests=dict(data.get("digests", {})),
        )

    def write(self, path: Path) -> None:
        from ..files.storage import write_atomic

        write_atomic(path, json.dumps(self.to_data(), indent=1, sort_keys=True) + "\n")


def read_record(path: Path) -> UsageRecord:
    """The record at ``path``; a :class:`CassetteError` that says how to make one when there is none."""
    how = "Run the whole test suite once (pytest, with no -k, -m or paths); it writes the record."
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(f"There is no usage record at {path}. {how}", path=path) from None
    except (OSError, ValueError) as error:
        raise CassetteError(f"The usage record {path} cannot be read ({error}). {how}", path=path) from None
    if not isinstance(data, dict) or data.get("version") != _VERSION or "finished" not in data:
        raise CassetteError(f"The usage record {path} is not one this promptvcr writes. {how}", path=path)
    try:
        return UsageRecord.from_data(data)
    except (TypeError, ValueError, KeyError) as error:
        raise CassetteError(f"The usage record {path} is damaged ({error}). {how}", path=path) from None

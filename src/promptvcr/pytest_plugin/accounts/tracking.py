"""What a run did with every cassette: the usage record for ``promptvcr prune``, and the drift report.

Every cassette is seen as it exits (:func:`promptvcr.activation.watch_exits`), whether a test opened it
through the marker, the ``cassette`` fixture or ``use_cassette`` itself, so a cassette a
test uses directly is never mistaken for an unused one. Under pytest-xdist each worker
sends what it saw to the controller, which writes one record and one report.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ... import usage
from ...activation import watch_exits
from ...usage.run_record import DESELECTED, CassetteUsage, UsageRecord
from ...usage.shards import digest, record_path
from ..naming import default_cassette_path, resolved
from ..settings import export_env

if TYPE_CHECKING:
    from ...cassette import Cassette
    from ...readouts.drift import DriftEntry

__all__ = ["ENV_SHARD", "Tracker", "shard_of"]

#: The shard a run is of, when the suite is split across processes or machines.
ENV_SHARD = "PROMPTVCR_SHARD"


def shard_of(config: pytest.Config) -> str:
    """``--promptvcr-shard``, then ``$PROMPTVCR_SHARD``, then pytest-split's ``--group``/``--splits``."""
    given = config.getoption("promptvcr_shard", None) or os.environ.get(ENV_SHARD, "")
    if given:
        return str(given)
    group, splits = config.getoption("group", None), config.getoption("splits", None)
    return f"{group}/{splits}" if group and splits else ""


_WORKER_OUTPUT = "promptvcr_usage"


def _parts(arg: str) -> tuple[str, bool]:
    """An argument's path, and whether it names tests inside a file (``file.py::test``)."""
    path, _, rest = arg.partition("::")
    return path, bool(rest)


class Tracker:
    """A pytest plugin object, registered by the promptvcr plugin in ``pytest_configure``."""

    def __init__(self, config: pytest.Config, drift_report: Path | None) -> None:
        self.config = config
        self.record = UsageRecord()
        self.drift_report = drift_report
        self.drift: list[DriftEntry] = []
        self.dropped: list[str] = []  # what --cassette-unused=drop removed or kept, for the summary
        self._item: pytest.Item | None = None
        self._item_passed = True
        self._item_cassettes: list[str] = []
        self._folders: set[Path] = set()
        self._file_args: list[str] = []
        self._modules: set[Path] = set()  # the test files collected
        self._stop_watching = watch_exits(self._seen)
        self.shard = shard_of(config)
        self._check_selection()
        # Children (subprocesses, promptvcr serve) report the cassettes they use here (promptvcr.usage).
        self._fragments = Path(tempfile.mkdtemp(prefix="promptvcr-usage-"))
        export_env(config, usage.ENV, str(self._fragments))

    # What the run covers ----------------------------------------------------------------

    def _incomplete(self, reason: str, selection: bool = False) -> None:
        """A reason the run cannot vouch for the whole suite. A shard's ``selection`` (the tests
        its split left out) is kept apart: the shards' records together answer it."""
        reasons = self.record.selection if selection and self.shard else self.record.incomplete
        if reason not in reasons:
            reasons.append(reason)

    def _check_selection(self) -> None:
        """A run of whole folders covers every test in them; tests named inside a file do not
        (the file's other tests are never collected), nor files left out with ``--ignore``.
        Files given one by one are judged at the end, by what was collected (:meth:`_check_files`)."""
        for arg in self.config.args:
            path, names_tests = _parts(arg)
            folder = self.config.invocation_params.dir / path
            if names_tests:
                self._incomplete(f"it ran only {arg}", selection=True)
            elif not folder.is_dir():
                self._file_args.append(arg)
            elif self.shard and folder.resolve() != self.config.rootpath.resolve():
                # a shard of a split by folder: the other folders' tests are in no record of it
                self._incomplete(f"it ran only {arg}", selection=True)
        if self.config.getoption("ignore", None) or self.config.getoption("ignore_glob", None):
            self._incomplete("test files were left out (--ignore)")

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        if isinstance(collector, pytest.Module):
            self._modules.add(collector.path)

    def _check_files(self) -> None:
        """Files given one by one cover the suite when no other test file lies in their folders.

        Prune deletes only below the folders whose tests ran (``test_dirs``), so the suite that
        matters is every test file there, as a bare ``pytest`` would collect it (``python_files``
        patterns; ``norecursedirs``, virtualenvs and ``collect_ignore`` left out): when each was
        collected (the only test file was given, or all of them), the run covered the whole suite.
        """
        if not self._file_args or not self._modules:
            return  # a run of whole folders, or an xdist controller (its workers check)
        patterns = self.config.getini("python_files")
        roots = sorted({path.parent for path in self._modules})
        roots = [
            root for root in roots if not any(root != other and root.is_relative_to(other) for other in roots)
        ]
        hook = self.config.hook.pytest_ignore_collect
        for root in roots:
            for folder, dirs, files in os.walk(root):
                here = Path(folder)
                dirs[:] = sorted(d for d in dirs if not hook(collection_path=here / d, config=self.config))
                for name in sorted(files):
                    path = here / name
                    if (
                        any(fnmatch.fnmatch(name, pattern) for pattern in patterns)
                        and path not in self._modules
                        and not hook(collection_path=path, config=self.config)
                    ):
                        shown = os.path.relpath(path, self.config.invocation_params.dir)
                        self._incomplete(
                            f"it ran only {' '.join(self._file_args)}, not {shown}", selection=True
                        )
                        return

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self._incomplete(DESELECTED, selection=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A shard's whole suite: every test collected, before a split deselects any."""
        if self.shard:
            self.record.collected = sorted({*self.record.collected, *(item.nodeid for item in items)})

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._incomplete("some test files could not be collected")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self._item, self._item_passed, self._item_cassettes = item, True, []
        if self.shard:
            self.record.ran.append(item.nodeid)
        started = time.time()
        folder = item.path.parent
        if folder not in self._folders:  # resolved once per folder: no file-system calls per test
            self._folders.add(folder)
            self.record.test_dirs = sorted({*self.record.test_dirs, resolved(folder)})
        try:
            return (yield)
        finally:
            self._collect(started - 1.0, item.nodeid)  # what its children used counts as its use
            if not self._item_passed:  # skipped, xfailed or failed part-way: it may need every interaction
                for path in self._item_cassettes:
                    self.record.cassettes[path].unplayed = []
            self._item = None

    def _collect(self, since: float, user: str) -> None:
        """Add what children reported since ``since`` to the record, as used by ``user``."""
        for path, found in usage.read_fragments(self._fragments, since).items():
            found.users = sorted({*found.users, user})
            self.record.use(path, found)
            if self._item is not None:
                self._item_cassettes.append(path)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.passed:
            self._item_passed = False
        if report.failed:
            self._incomplete("tests failed")
        elif report.skipped and self._item is not None:
            self._protect(self._item)

    def _protect(self, item: pytest.Item) -> None:
        """A skipped test's cassettes: its marker's path, and its module's default folder wherever
        ``cassette_dir`` puts it (``<any dir>/<module>/``: the fixture that sets it did not run)."""
        marker = item.get_closest_marker("promptvcr")
        path = marker.args[0] if marker is not None and marker.args else None
        if marker is not None and path is None:
            path = marker.kwargs.get("path")
        if path is not None:
            self.record.protected.append(str((item.path.parent / str(path)).resolve()))
        option = self.config.getoption("--cassette-dir")
        directory = self.config.invocation_params.dir / option if option else None
        folder = default_cassette_path(item.path, item.name, (), directory).parent
        self.record.protected = sorted({*self.record.protected, str(folder.resolve())})
        self.record.protected_modules = sorted({*self.record.protected_modules, item.path.stem})

    # Cassettes, as they exit --------------------------------------------------------------

    def _seen(self, cassette: Cassette) -> None:
        interactions = cassette.interactions
        if cassette.record_mode.reads_cassette:
            unplayed = {id(interaction) for interaction in cassette.unplayed}
            positions = [i for i, interaction in enumerate(interactions) if id(interaction) in unplayed]
        else:
            positions = []  # rewritten or passed through: the whole file is in use
        path = resolved(cassette.path)
        users = [self._item.nodeid] if self._item is not None else ["pytest session"]
        self.record.use(path, CassetteUsage(len(interactions), positions, users))
        if self._item is not None:
            self._item_cassettes.append(path)
        if self.drift_report is not None and (
            cassette.missed or cassette.drift or any(p.outcome == "tool-drift" for p in cassette.played)
        ):
            from ...readouts.drift import drift_entries  # only on a miss, drift found by verify, tool drift

            nodeid = self._item.nodeid if self._item is not None else ""
            self.drift.extend(drift_entries(cassette, nodeid, self.config.rootpath))

    # The end of the run -------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly:  # pytest --co ran nothing: the last run's record stands
            return
        self._collect(0.0, "pytest session")  # session-wide servers stop about now: all of them again
        self._check_files()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_WORKER_OUTPUT] = {
                "record": self.record.to_data(),
                "drift": [entry.to_data() for entry in self.drift],
            }
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop or session.shouldfail:
            self._incomplete("the run was interrupted or stopped early")
        elif exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            self._incomplete(f"pytest ended with exit status {int(exitstatus)}")
        if self.config.getoption("--cassette-unused", None) == "drop":
            from .refresh import drop_unused

            shown = {path: _relative(path, self.config.rootpath) for path in self.record.cassettes}
            self.dropped = drop_unused(self.record, shown)
        self.record.finished = time.time()
        self.record.root = resolved(self.config.rootpath)
        if self.shard:
            self.record.shard = self.shard
            self.record.digests = {path: digest(Path(path)) for path in self.record.cassettes}
        path = record_path(self.config.rootpath, self.shard)
        if self.record.cassettes or path.exists():  # a project without cassettes gets no file
            self.record.write(path)
        if self.drift_report is not None:
            from ...readouts.drift import write_report

            write_report(self.drift_report, self.drift)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist, on the controller: a worker finished; add what it saw."""
        if error:
            self._incomplete("a pytest-xdist worker crashed")
        output = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT)
        if output is None:
            return
        from ...readouts.drift import DriftEntry

        self.record.merge(UsageRecord.from_data(output["record"]))
        self.drift.extend(DriftEntry.from_data(entry) for entry in output["drift"])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.dropped:
            terminalreporter.write_line(line)
        if self.drift_report is not None and not hasattr(self.config, "workerinput"):
            shown = os.path.relpath(self.drift_report, self.config.invocation_params.dir)
            count = sum(entry.kind == "miss" for entry in self.drift)
            verified = sum(entry.kind == "verify" for entry in self.drift)
            tools = len(self.drift) - count - verified
            more = f" and {verified} drifted answer(s) (verify)" if verified else ""
            more += f" and {tools} request(s) with tool drift" if tools else ""
            terminalreporter.write_line(f"promptvcr drift report: {count} missed request(s){more} in {shown}")

    def pytest_unconfigure(self) -> None:
        self._stop_watching()
        shutil.rmtree(self._fragments, ignore_errors=True)


def _relative(path: str, root: Path) -> str:
    return os.path.relpath(path, root) if Path(path).is_relative_to(root) else path

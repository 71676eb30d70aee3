"""``--promptvcr-html FILE``: an HTML page of what the run's LLM calls said (see :mod:`promptvcr.htmlreport`).

Every cassette is seen as it exits (:func:`promptvcr.activation.watch_exits`), however the
test opened it, and what it played becomes the test's entry then, masked, while the
requests and answers are still in memory; nothing is kept when the option is not given.
Under pytest-xdist each worker sends its entries to the controller, which writes the file.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ...cassette import Cassette
    from ...htmlreport.model import Entry

__all__ = ["HtmlReport", "add_options", "configure"]

_WORKER_OUTPUT = "promptvcr_html"
_OUTSIDE = "(outside a test)"
STASH = pytest.StashKey["HtmlReport"]()


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--promptvcr-html",
        default=None,
        metavar="FILE",
        help="write an HTML page of every test's LLM calls to FILE at the end of the run: the conversations, "
        "what each request met (replayed, recorded, missed, drifted), miss diffs, tokens and price.",
    )


def configure(config: pytest.Config) -> None:
    """Register the collector when the option asks for a report; fail now if Jinja2 is missing."""
    option = config.getoption("promptvcr_html", None)
    if not option:
        return
    try:
        import jinja2  # noqa: F401  (checked here: a missing extra is said before the run, not after)
    except ImportError:
        raise pytest.UsageError(
            "--promptvcr-html needs Jinja2: pip install 'promptvcr[report]' (or pip install jinja2)."
        ) from None
    collector = HtmlReport(config, config.invocation_params.dir / option)
    config.stash[STASH] = collector
    config.pluginmanager.register(collector, "promptvcr-html")


class HtmlReport:
    """A pytest plugin object: each test's entry, built as its cassettes exit."""

    def __init__(self, config: pytest.Config, path: Path) -> None:
        from ...activation import watch_exits
        from ...htmlreport.pricing import Prices

        self.config = config
        self.path = path
        self.entries: dict[str, Entry] = {}
        self.prices = Prices()
        self._item: pytest.Item | None = None
        self._status = ""
        self.failure = ""
        self._stop_watching = watch_exits(self._seen)

    def _seen(self, cassette: Cassette) -> None:
        from ...htmlreport.collect import add_cassette
        from ...htmlreport.model import Entry
        from ...readouts.drift import shown_path

        name = self._item.nodeid if self._item is not None else _OUTSIDE
        entry = self.entries.setdefault(name, Entry(name))
        add_cassette(entry, cassette, shown_path(cassette.path, self.config.rootpath), self.prices)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self._item, self._status = item, "passed"
        try:
            return (yield)
        finally:
            if item.nodeid in self.entries:
                self.entries[item.nodeid].status = self._status
            self._item = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self._status = "failed"
        elif report.skipped and self._status != "failed":
            self._status = "skipped"

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # a pytest-xdist worker: the controller writes the file
            workeroutput[_WORKER_OUTPUT] = [entry.to_data() for entry in self.entries.values()]
            return
        from ...htmlreport import render
        from ...htmlreport.model import Report

        title = f"promptvcr report: {self.config.rootpath.name}"
        try:
            render.write(self.path, Report(title, list(self.entries.values()), self.prices.available))
        except OSError as error:  # the run's outcome stands; the summary says why there is no file
            self.failure = f"{error} (check that --promptvcr-html names a file in a folder you can write)"

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """pytest-xdist, on the controller: a worker finished; keep its entries."""
        from ...htmlreport.model import Entry

        for data in getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT, []):
            entry = Entry.from_data(data)
            if entry.name in self.entries:  # cassettes used outside a test, on several workers
                self.entries[entry.name].merge(entry)
            else:
                self.entries[entry.name] = entry

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput"):
            return
        requests = sum(len(entry.exchanges) for entry in self.entries.values())
        missed = sum(len(entry.misses) for entry in self.entries.values())
        shown = os.path.relpath(self.path, self.config.invocation_params.dir)
        counts = f"{len(self.entries)} test(s), {requests:,} request(s)" + (
            f", {missed} missed" if missed else ""
        )
        terminalreporter.write_line(f"promptvcr html report: {counts} in {shown}")

    def pytest_unconfigure(self) -> None:
        self._stop_watching()

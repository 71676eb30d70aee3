"""``--fail-on-drift``: a ``--record-mode=verify`` run fails when any live answer drifted.

Verify reports drift and passes by default: the provider changed, not the code, and a
test that fails for it blames the wrong party. A scheduled job wants the opposite: a red run
that someone looks at. With ``--fail-on-drift`` every test still runs (each drift found is
worth knowing), and the run ends with exit status 1 and one line per drifted test and
cassette. Every cassette is seen as it exits, the marker's and a ``use_cassette(...)`` a test
opens itself; under pytest-xdist the workers send what they saw to the controller.

Registered only when the option is given: a run without it pays nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ...activation import watch_exits

if TYPE_CHECKING:
    from ...cassette import Cassette

__all__ = ["NAME", "DriftGate", "add_options", "configure"]

NAME = "promptvcr-drift-gate"
_WORKER_OUTPUT = "promptvcr_drift_gate"


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--fail-on-drift",
        action="store_true",
        default=False,
        help="with --record-mode=verify: end the run with exit status 1 when any live answer's "
        "structure differs from its recording, naming each drifted test and cassette.",
    )


def configure(config: pytest.Config) -> None:
    if config.getoption("--fail-on-drift"):
        config.pluginmanager.register(DriftGate(config), NAME)


class DriftGate:
    """Collects ``(test, cassette, answer, differences)`` of every drifted answer of the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.found: list[tuple[str, str, str, int]] = []
        self._nodeid = ""
        self._stop = watch_exits(self._seen)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self._nodeid = item.nodeid
        try:
            return (yield)
        finally:
            self._nodeid = ""

    def _seen(self, cassette: Cassette) -> None:
        drifts = getattr(cassette, "drift", ())
        if not drifts:
            return
        from ...readouts.drift import shown_path  # only on drift

        shown = shown_path(cassette.path, self.config.rootpath)
        for drift in drifts:
            self.found.append((self._nodeid, shown, drift.where, len(drift.differences)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_WORKER_OUTPUT] = [list(entry) for entry in self.found]
            return
        if self.found and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        for nodeid, cassette, where, count in getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT, []):
            self.found.append((str(nodeid), str(cassette), str(where), int(count)))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput") or not self.found:
            return
        by_test: dict[tuple[str, str], list[str]] = {}
        for nodeid, cassette, where, count in sorted(self.found):
            by_test.setdefault((nodeid, cassette), []).append(f"{where} ({count} difference(s))")
        terminalreporter.write_sep("=", "promptvcr --fail-on-drift", red=True)
        terminalreporter.write_line(
            f"FAILED: {len(self.found)} live answer(s) in {len(by_test)} test/cassette pair(s) differ "
            "in structure from the recording:"
        )
        for (nodeid, cassette), answers in by_test.items():
            terminalreporter.write_line(f"  {nodeid or '(outside a test)'}  cassette {cassette}")
            for answer in answers:
                terminalreporter.write_line(f"    {answer}")
        terminalreporter.write_line(
            "Re-record them (--record-mode=rewrite) to replay what the provider sends now; "
            "--drift-report FILE lists every difference."
        )

    def pytest_unconfigure(self) -> None:
        self._stop()

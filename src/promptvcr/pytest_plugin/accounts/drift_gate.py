"""``--fail-on-drift``: a run fails when any live answer drifted, or a replay had tool drift.

Verify reports drift and passes by default: the provider changed, not the code, and a
test that fails for it blames the wrong party. A scheduled job wants the opposite: a red run
that someone looks at. With ``--fail-on-drift`` every test still runs (each drift found is
worth knowing), and the run ends with exit status 1 and one line per drifted test and
cassette. Every cassette is seen as it exits, the marker's and a ``use_cassette(...)`` a test
opens itself; under pytest-xdist the workers send what they saw to the controller.

A replay with ``--on-tool-drift=replay`` (or ``on_tool_drift="replay"``) serves a request whose
tool results changed and plays it as ``tool-drift``: with ``--fail-on-drift`` such a run fails
too, naming the tool and the call id. ``--on-tool-drift`` reaches every cassette of the run,
those a test opens itself included, as ``$PROMPTVCR_ON_TOOL_DRIFT`` (see
:mod:`promptvcr.policies.tooldrift`).

Registered only when the option is given: a run without it pays nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ...activation import watch_exits
from ...policies.tooldrift import ENV_ON_TOOL_DRIFT, TOOL_DRIFT_CHOICES
from ..settings import export_env

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
        help="end the run with exit status 1 when any live answer's structure differs from its "
        "recording (--record-mode=verify) or a replay had tool drift (--on-tool-drift=replay), "
        "naming each test and cassette.",
    )
    group.addoption(
        "--on-tool-drift",
        choices=TOOL_DRIFT_CHOICES,
        default=None,
        help="when a replayed request differs from its recording only in tool results: miss (default) "
        "or replay the recorded answer and report the tool drift (tool, call id) in the summary and "
        "--drift-report.",
    )


def configure(config: pytest.Config) -> None:
    if (on_tool_drift := config.getoption("--on-tool-drift")) is not None:
        export_env(config, ENV_ON_TOOL_DRIFT, on_tool_drift)
    if config.getoption("--fail-on-drift"):
        config.pluginmanager.register(DriftGate(config), NAME)


class DriftGate:
    """Collects ``(test, cassette, answer, differences)`` of every drifted answer of the run."""

    #: Where a pytest-xdist worker puts what it found, for the controller.
    output_key = _WORKER_OUTPUT

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
        tools = [play for play in getattr(cassette, "played", ()) if play.outcome == "tool-drift"]
        if not drifts and not tools:
            return
        from ...readouts.drift import shown_path  # only on drift

        shown = shown_path(cassette.path, self.config.rootpath)
        for drift in drifts:
            self.found.append((self._nodeid, shown, drift.where, len(drift.differences)))
        for play in tools:  # one line per tool result: the tool, the call id, recorded -> sent
            where = f"tool drift in {play.request.method} {play.request.url}: {'; '.join(play.tool_drift)}"
            self.found.append((self._nodeid, shown, where, len(play.tool_drift)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[self.output_key] = [list(entry) for entry in self.found]
            return
        if self.found and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        for nodeid, cassette, where, count in getattr(node, "workeroutput", {}).get(self.output_key, []):
            self.found.append((str(nodeid), str(cassette), str(where), int(count)))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput") or not self.found:
            return
        by_test: dict[tuple[str, str], list[str]] = {}
        for nodeid, cassette, where, count in sorted(self.found):
            by_test.setdefault((nodeid, cassette), []).append(f"{where} ({count} difference(s))")
        terminalreporter.write_sep("=", "promptvcr --fail-on-drift", red=True)
        tools = sum(where.startswith("tool drift in ") for _, _, where, _ in self.found)
        pairs = f"{len(by_test)} test/cassette pair(s)"
        head = f"FAILED: {len(self.found)} live answer(s) in {pairs} differ in structure from the recording:"
        if tools:
            head = (
                f"FAILED: {len(self.found)} request(s) in {pairs} drifted from the recording "
                f"({tools} with tool drift: only their tool results differ):"
            )
        terminalreporter.write_line(head)
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

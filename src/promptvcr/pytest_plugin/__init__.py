"""The pytest plugin: a marker, a ``cassette`` fixture, record-mode options, a network guard, a summary.

Registered through the ``pytest11`` entry point, so it loads in every pytest run of an
environment where promptvcr is installed; it therefore imports nothing heavy at load time
(no HTTP client, no SDK): the cassette machinery is imported by the fixture that uses it.

Conventions follow pytest-recording, which most users come from: the
``@pytest.mark.promptvcr`` marker, ``--record-mode``, ``--block-network``,
``--allowed-hosts``. State lives in ``config.stash``; under pytest-xdist each worker
sends its cassette records to the controller, which prints one summary.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import CassetteMiss
from ..identity.values import set_project_root
from ..policies.modes import VCR_MODES, RecordMode, record_flag, vcr_mode_note
from . import coexist, upkeep, vcr_compat
from .accounts import cache_gate, drift_gate, html, spending
from .accounts.report import CassetteUse, summary_lines, unused_of, use_of
from .coexist import promptvcr_cassette_dir  # noqa: F401  (pytest-recording's vcr_cassette_dir)
from .fixture_values import fixture_value
from .guards import held, network
from .guards.failures import failure_text
from .guards.misses import MissWatch, hidden_miss, replaced_text
from .guards.network import NetworkBlocked
from .naming import resolved
from .serving import promptvcr_serve, promptvcr_serve_session  # noqa: F401  (the promptvcr serve fixtures)
from .settings import MARKER, Options, export_record_mode, parse_options, settings_for

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = ["NetworkBlocked", "UnusedInteractionsWarning", "cassette", "promptvcr_config"]

UNUSED_SETTINGS = ("ignore", "warn", "fail", "drop")
_WORKER_OUTPUT = "promptvcr_cassette_uses"


class UnusedInteractionsWarning(UserWarning):
    """A test passed without playing some interactions of its cassette: stale recordings."""


@dataclass
class _State:
    options: Options
    uses: list[CassetteUse] = field(default_factory=list)


_STATE = pytest.StashKey[_State]()
_ACTIVE = pytest.StashKey["Cassette"]()
_FAILED = pytest.StashKey[BaseException]()


# Options and configuration -----------------------------------------------------------------


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    if not coexist.recording_loads(pluginmanager):  # a conftest's pytest_recording_configure still loads
        pluginmanager.add_hookspecs(coexist.RecordingHookSpec)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("promptvcr", "promptvcr: record and replay LLM HTTP traffic")
    # pytest-recording defines --record-mode, --block-network and --allowed-hosts too (see .coexist).
    rivals = coexist.active_rivals(pluginmanager)
    shared = not rivals
    group.addoption(
        "--record-mode" if shared else "--promptvcr-record-mode",
        dest="record_mode" if shared else "promptvcr_record_mode",
        choices=[*(mode.value for mode in RecordMode), *VCR_MODES],
        default=None,
        help="record mode of every cassette; wins over the marker and $PROMPTVCR_RECORD_MODE "
        "(default: replay; vcrpy's none, once, new_episodes and all are accepted).",
    )
    group.addoption(
        "--cassette-dir",
        default=None,
        metavar="DIR",
        help="put default cassettes in DIR/<module>/ instead of <test dir>/cassettes/<module>/.",
    )
    if not coexist.recording_loads(pluginmanager):
        _addoption_network(group)
    _addoption_own(group)
    upkeep.add_options(group)  # --max-age, --on-stale, --allow-record-in-ci
    drift_gate.add_options(group)  # --fail-on-drift, --on-tool-drift
    cache_gate.add_options(group)  # --fail-on-cache-break
    spending.add_options(group)  # --max-record-tokens, --max-record-requests
    html.add_options(group)  # --promptvcr-html


def _addoption_network(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--block-network",
        action="store_true",
        default=False,
        help="fail any test that connects outside loopback, unless its cassette records "
        "(tests replaying a cassette are always blocked).",
    )
    group.addoption(
        "--allowed-hosts",
        action="append",
        default=[],
        metavar="HOST[,HOST...]",
        help="hosts that blocked tests may still reach (names or addresses; loopback always may).",
    )


def _addoption_own(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--cassette-unused",
        choices=UNUSED_SETTINGS,
        default="warn",
        help="what a passing test whose cassette holds unplayed interactions gets: "
        "ignore, warn (default), fail, or drop (removed from the file; with --record-mode=record, "
        "a re-record in one step).",
    )
    group.addoption(
        "--promptvcr-shard",
        dest="promptvcr_shard",
        default=None,
        metavar="NAME",
        help="this run is one shard (e.g. 2/3) of a suite split across processes or machines: its usage "
        "record is .promptvcr/usage-<NAME>.json, for promptvcr prune to judge with the other shards' "
        "(default: $PROMPTVCR_SHARD, or pytest-split's --group/--splits).",
    )
    group.addoption(
        "--drift-report",
        default=None,
        metavar="FILE",
        help="write every request that missed its cassette, with its diff, to FILE at the end of the run, "
        "with the command that re-records exactly those tests.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, record_mode=None, **options): replay (or record) this test's HTTP traffic "
        "from a cassette; without a path, cassettes/<module>/<test>.yaml beside the test file.",
    )
    config.stash[_STATE] = _State(parse_options(config))
    outer = set_project_root(config.rootpath)  # <project> is the rootdir (promptvcr.identity)

    def give_back() -> None:  # a run inside a run (pytester) leaves the outer one's root
        set_project_root(outer)

    config.add_cleanup(give_back)
    export_record_mode(config, config.stash[_STATE].options)
    upkeep.configure(config)
    spending.configure(config)
    coexist.export_record_flag(config)  # the option a miss names (see .coexist)
    if not coexist.active_rivals(config.pluginmanager):  # no other plugin runs @pytest.mark.vcr
        config.pluginmanager.register(vcr_compat, vcr_compat.NAME)
    from .accounts.tracking import Tracker  # the usage record (promptvcr prune) and --drift-report

    drift_report = config.getoption("--drift-report")
    drift_path = config.invocation_params.dir / drift_report if drift_report else None
    config.pluginmanager.register(Tracker(config, drift_path), "promptvcr-tracking")
    config.pluginmanager.register(MissWatch(), "promptvcr-misses")
    config.pluginmanager.register(held, held.NAME)
    drift_gate.configure(config)
    cache_gate.configure(config)
    html.configure(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [coexist.status_line(coexist.active_rivals(config.pluginmanager))]
    mode = config.stash[_STATE].options.record_mode
    if mode is not None and (note := vcr_mode_note(mode)) is not None:
        lines.append(f"promptvcr: {note}.")
    return [line for line in lines if line]


def _shown(config: pytest.Config, path: Path) -> str:
    """The cassette as reports name it: relative to the root folder when it lies below it."""
    full, root = resolved(path), resolved(config.rootpath).rstrip(os.sep) + os.sep
    return full[len(root) :] if full.startswith(root) else str(path)


# Fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def promptvcr_config() -> dict[str, Any]:
    """Cassette options for the tests below a ``conftest.py`` that overrides this fixture.

    Keys: any ``use_cassette`` argument (``rules``, ``allow_playback_repeats``,
    ``request_headers``, ...), ``cassette_dir`` (relative to the test file's folder) and
    ``allowed_hosts``. A marker's own options win over these.
    """
    return {}


@pytest.fixture
def cassette(_promptvcr_cassette: Cassette) -> Cassette:
    """The test's active cassette: the marker's, or the default one when the test has no marker."""
    return _promptvcr_cassette


@pytest.fixture
def _promptvcr_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The work behind ``cassette``, under a name no test overrides, so the marker always finds it.

    The autouse fixture below has usually entered it already; a fixture of the user's that
    runs first and asks for ``cassette`` gets it entered here."""
    active = request.node.stash.get(_ACTIVE, None)
    if active is not None:
        yield active
        return
    with _test_cassette(request) as active:
        yield active


@contextlib.contextmanager
def _test_cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The test's cassette, entered for the test and left after it, with its use recorded."""
    item = request.node
    assert isinstance(item, pytest.Item)
    state = request.config.stash[_STATE]
    if vcr_compat.applies(item):  # pytest-recording's @pytest.mark.vcr, not yet migrated
        settings = vcr_compat.settings(request, state.options)
    else:
        config: dict[str, Any] = fixture_value(request, "promptvcr_config", dict)  # ours gives {}
        module_dir = fixture_value(request, "promptvcr_cassette_dir", lambda: None)
        settings = settings_for(item, config, state.options, module_dir)
    options = {
        "record_mode": settings.record_mode,
        **settings.cassette_options,
        **upkeep.overrides(request.config),
    }
    from ..cassette import Cassette

    active = Cassette(settings.opened or settings.path, **options)
    shown = _shown(request.config, settings.path)
    # Entered and left by hand, not with ``with``: pytest does not throw a failed test into
    # its fixtures, and the cassette must know (rewrite keeps the old file when the test failed).
    if _FAILED in item.stash:  # a rerun of the same item starts clean
        del item.stash[_FAILED]
    active.__enter__()
    item.stash[_ACTIVE] = active
    try:
        if active.record_mode is RecordMode.REPLAY:
            reason = f"this test replays {shown} (record mode replay), so it must not need the network"
            # The cassette's passthrough hosts (OAuth token endpoints) reach the network in every mode.
            allowed = (*settings.allowed_hosts, *active.background.passthrough)
            with network.blocked(allowed, reason=reason):
                yield active
        else:
            yield active
        vcr_compat.after_test(item, active)
    finally:
        failure = item.stash.get(_FAILED, None)
        try:
            if failure is None:
                active.__exit__(None, None, None)
            else:
                _exit_after(active, failure)
        finally:
            state.uses.append(use_of(item.nodeid, active, shown))  # after exit: what was written
            # Items live as long as the session: a cassette kept on one (its interactions, every
            # request played) would make each garbage collection of a long suite slower.
            del item.stash[_ACTIVE]


def _exit_after(active: Cassette, failure: BaseException) -> None:
    """Exit the cassette of a test that failed with ``failure``, already reported: a miss the
    exit raises out of that failure (a task group of misses, unwrapped) is not raised again
    as a teardown error."""
    try:
        active.__exit__(type(failure), failure, failure.__traceback__)
    except CassetteMiss as miss:
        if miss is not CassetteMiss.unwrapped(failure):
            raise


@pytest.fixture(autouse=True)
def _promptvcr_autouse(request: pytest.FixtureRequest) -> Iterator[None]:
    """Enter the cassette of a test that has one, first; guard the network under ``--block-network``.

    One autouse fixture does it all, the cassette included, not one fixture asking for
    another: each fixture pytest sets up and tears down costs every test (issue 22)."""
    item = request.node
    if _ACTIVE in item.stash:  # entered already, by a plugin's fixture that asked first
        yield
        return
    if held.enters_cassette(item):
        with _test_cassette(request):  # the cassette decides about the network itself
            yield
        return
    options = request.config.stash[_STATE].options
    if not options.block_network:
        yield
        return
    reason = "--block-network is on and this test uses no cassette"
    with network.blocked(options.allowed_hosts, reason=reason):
        yield


# Reports -----------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "teardown":
        spending.stop_if_spent(item)
    excinfo = call.excinfo
    if excinfo is not None and report.failed and call.when in ("setup", "call"):
        item.stash[_FAILED] = excinfo.value
    if excinfo is not None and (cause := _own_error(excinfo.value)) is not None:
        report.longrepr = failure_text(item, excinfo, cause)
    elif (
        call.when == "call"
        and not report.skipped
        and (hidden := hidden_miss(item, item.stash.get(_ACTIVE, None), _failure(report, excinfo)))
    ):
        # A miss the code caught, or turned into another error: the miss is what the test shows.
        error = _failure(report, excinfo)
        report.outcome, report.longrepr = "failed", replaced_text(*hidden, error, str(report.longrepr))
        item.stash[_FAILED] = error or hidden[0]  # the cassette then exits quietly
    elif call.when == "call" and report.passed:
        _report_unused(item, report)
    return report


def _failure(
    report: pytest.TestReport, excinfo: pytest.ExceptionInfo[BaseException] | None
) -> BaseException | None:
    return excinfo.value if excinfo is not None and report.failed else None


def _own_error(error: BaseException) -> BaseException | None:
    """A miss or a blocked connection, also from inside an exception group (task groups)."""
    if isinstance(error, (CassetteMiss, NetworkBlocked)):
        return error
    inner_errors = getattr(error, "exceptions", None)  # an exception group (3.11+, or exceptiongroup)
    if isinstance(inner_errors, (list, tuple)):
        for inner in inner_errors:
            if isinstance(inner, BaseException) and (found := _own_error(inner)) is not None:
                return found
    return None


def _report_unused(item: pytest.Item, report: pytest.TestReport) -> None:
    setting = item.config.stash[_STATE].options.unused
    active = item.stash.get(_ACTIVE, None)
    if setting == "ignore" or active is None or not active.record_mode.reads_cassette:
        return
    unused = unused_of(active)
    if not unused:
        return
    text = (
        f"promptvcr: {len(unused)} interaction(s) of {_shown(item.config, active.path)} were not played "
        f"by this test:\n" + "\n".join(f"  {line}" for line in unused) + "\n"
        f"The code no longer sends them: re-record the cassette ({record_flag()}=rewrite) or delete them."
    )
    if setting == "drop":  # removed at the end of the run, if no other test plays them (.refresh)
        return
    if setting == "fail":
        report.outcome = "failed"
        report.longrepr = text
    else:
        item.warn(UnusedInteractionsWarning(text))


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: the controller prints the summary
        workeroutput[_WORKER_OUTPUT] = [use.to_data() for use in session.config.stash[_STATE].uses]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: a worker finished; keep its cassette records."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT, [])
    node.config.stash[_STATE].uses.extend(CassetteUse.from_data(item) for item in data)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    lines = summary_lines(config.stash[_STATE].uses)
    if lines:
        terminalreporter.write_sep("=", "promptvcr")
        for line in lines:
            terminalreporter.write_line(line)

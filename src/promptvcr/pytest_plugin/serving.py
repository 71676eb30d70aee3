"""Fixtures that run ``promptvcr serve`` for a test or a session (see :mod:`promptvcr.server`).

``promptvcr_serve(cassette, upstreams=..., record_mode=...)`` starts a server in a child
process and points the provider base-URL variables (``OPENAI_BASE_URL``, ...) at it until
the test ends, so the processes the test starts reach it; ``promptvcr_serve_session`` does
the same for the whole session. A relative ``cassette`` is found beside the test file, as the
marker's; none is the test's own cassette (``cassettes/<module>/<test>.yaml``). The record
mode defaults to ``--record-mode``, else ``$PROMPTVCR_RECORD_MODE``, else replay.

A miss always reaches the test: a child process that swallowed the provider-shaped 404 of a
miss (a ``try``/``except``, a retry loop, a log line) has its test failed when the test's
body returns, with the miss's message. What each server served is in the run's summary.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .naming import default_cassette_path
from .settings import parse_options

if TYPE_CHECKING:
    from ..server.launch import Served

__all__ = ["promptvcr_serve", "promptvcr_serve_session"]

Start = Callable[..., "Served"]


class _Summary:
    """A plugin registered on first use: each test that used a server fails on its misses, and
    what the servers served is in the terminal summary."""

    def __init__(self) -> None:
        self.reports: list[dict[str, Any]] = []
        #: The servers running now, each with the number of misses already blamed on a test.
        self.running: dict[int, tuple[Served, int]] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield  # the test's own failure, if any, is what shows
        new = self._new_misses()
        if new:
            first = new[0]
            pytest.fail(
                f"promptvcr serve: {len(new)} request(s) of this test missed the cassette, and the code "
                f"that sent them went on (it swallowed the provider-shaped 404):\n"
                f"{first['message'] if isinstance(first, dict) else first}",
                pytrace=False,
            )

    def _new_misses(self) -> list[Any]:
        new: list[Any] = []
        for key, (served, seen) in list(self.running.items()):
            try:
                entries = served.live_report()["cassettes"]
            except OSError:
                continue  # stopped: its misses are in its report
            misses = [m for entry in entries for m in (entry.get("misses") or entry.get("missed", []))]
            new.extend(misses[seen:])
            self.running[key] = (served, len(misses))
        return new

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = served_lines(self.reports)
        if lines:
            terminalreporter.section("promptvcr serve")
            for line in lines:
                terminalreporter.write_line(line)


def served_lines(reports: list[dict[str, Any]]) -> list[str]:
    lines = []
    for report in reports:
        for entry in report.get("cassettes", []):
            counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(entry["outcomes"].items()))
            missed = len(entry["missed"])
            lines.append(f"{entry['path']} ({entry['mode']}): {counts or 'no requests'}, {missed} missed")
            lines.extend(f"  missed: {request}" for request in entry["missed"][:5])
        lines.extend(f"  error: {error}" for error in report.get("errors", []))
    return lines


def _summary(config: pytest.Config) -> _Summary:
    plugin = config.pluginmanager.get_plugin("promptvcr-serve")
    if not isinstance(plugin, _Summary):
        plugin = _Summary()
        config.pluginmanager.register(plugin, "promptvcr-serve")
    return plugin


def _cassette_path(request: pytest.FixtureRequest, cassette: str | os.PathLike[str] | None) -> Path:
    """A relative path beside the test file (the rootdir for a session's); none: the test's own."""
    if request.scope != "function":
        if cassette is None:
            raise TypeError(
                "promptvcr_serve_session(cassette, ...) needs a cassette: a session has no test name"
            )
        return request.config.rootpath / os.fspath(cassette)
    test_file = Path(request.path)
    if cassette is not None:
        return test_file.parent / os.fspath(cassette)
    classes = [request.cls.__name__] if request.cls is not None else []
    return default_cassette_path(test_file, request.node.name, classes)


@contextlib.contextmanager
def _starter(request: pytest.FixtureRequest) -> Iterator[Start]:
    from ..server.launch import serve  # the server's parts load when a test asks for one

    config = request.config
    summary = _summary(config)
    default_mode = parse_options(config).record_mode  # --promptvcr-record-mode beside pytest-recording
    with contextlib.ExitStack() as stack:
        running: list[Served] = []

        def start(
            cassette: str | os.PathLike[str] | None = None,
            *,
            upstreams: Mapping[str, str] | None = None,
            record_mode: str | None = None,
            options: tuple[str, ...] = (),
        ) -> Served:
            mode = record_mode or (str(default_mode) if default_mode else None)
            path = _cassette_path(request, cassette)
            served = stack.enter_context(serve(path, record_mode=mode, upstreams=upstreams, options=options))
            running.append(served)
            summary.running[id(served)] = (served, 0)
            return served

        try:
            yield start
        finally:
            for served in running:
                summary.running.pop(id(served), None)
            stack.close()
            summary.reports.extend(served.report for served in running if served.report)


@pytest.fixture
def promptvcr_serve(request: pytest.FixtureRequest) -> Iterator[Start]:
    """``promptvcr_serve(cassette=None, upstreams={...}, record_mode=...)``: a server for this test."""
    with _starter(request) as start:
        yield start


@pytest.fixture(scope="session")
def promptvcr_serve_session(request: pytest.FixtureRequest) -> Iterator[Start]:
    """``promptvcr_serve_session(cassette, ...)``: a server for the whole session."""
    with _starter(request) as start:
        yield start

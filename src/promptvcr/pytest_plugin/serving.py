"""Fixtures that run ``promptvcr serve`` for a test or a session (see :mod:`promptvcr.server`).

``promptvcr_serve(cassette, upstreams=..., record_mode=...)`` starts a server in a child
process and points the provider base-URL variables (``OPENAI_BASE_URL``, ...) at it until
the test ends, so the processes the test starts reach it; ``promptvcr_serve_session`` does
the same for the whole session. The record mode defaults to ``--record-mode``, else
``$PROMPTVCR_RECORD_MODE``, else replay. What each server served is added to the run's
summary.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from .settings import parse_options

if TYPE_CHECKING:
    from ..server.launch import Served

__all__ = ["promptvcr_serve", "promptvcr_serve_session"]

Start = Callable[..., "Served"]


class _Summary:
    """A plugin registered on first use: what the servers served, in the terminal summary."""

    def __init__(self) -> None:
        self.reports: list[dict[str, Any]] = []

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


@contextlib.contextmanager
def _starter(config: pytest.Config) -> Iterator[Start]:
    from ..server.launch import serve  # the server's parts load when a test asks for one

    summary = _summary(config)
    default_mode = parse_options(config).record_mode  # --promptvcr-record-mode beside pytest-recording
    with contextlib.ExitStack() as stack:
        running: list[Served] = []

        def start(
            cassette: str | os.PathLike[str],
            *,
            upstreams: Mapping[str, str] | None = None,
            record_mode: str | None = None,
            options: tuple[str, ...] = (),
        ) -> Served:
            mode = record_mode or (str(default_mode) if default_mode else None)
            served = stack.enter_context(
                serve(cassette, record_mode=mode, upstreams=upstreams, options=options)
            )
            running.append(served)
            return served

        try:
            yield start
        finally:
            stack.close()
            summary.reports.extend(served.report for served in running if served.report)


@pytest.fixture
def promptvcr_serve(request: pytest.FixtureRequest) -> Iterator[Start]:
    """``promptvcr_serve(cassette, upstreams={...}, record_mode=...)``: a server for this test."""
    with _starter(request.config) as start:
        yield start


@pytest.fixture(scope="session")
def promptvcr_serve_session(request: pytest.FixtureRequest) -> Iterator[Start]:
    """``promptvcr_serve_session(cassette, ...)``: a server for the whole session."""
    with _starter(request.config) as start:
        yield start

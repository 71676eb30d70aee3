"""The report as one HTML file, laid out by Jinja2 templates shipped in the package.

The file is self-contained: its CSS and script are written into it and images are
``data:`` URIs the requests carried, so it opens offline, from a CI artefact, with no
network. Jinja2 escapes every value (autoescape), so a prompt holding ``<script>`` is text.

Large suites: tests past :data:`OPEN_TESTS` start folded, and the body of a folded test
is held in a ``<template>`` that the browser parses but neither styles nor lays out until
the test is opened, so a 2,000-exchange report opens as fast as a small one.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from .model import Report

__all__ = ["OPEN_TESTS", "render", "write"]

#: Reports with at most this many tests show every test unfolded.
OPEN_TESTS = 30


def _dollars(value: float | None) -> str:
    """A price as people read one: cents for dollars, six decimals for a fraction of a cent."""
    if value is None:
        return ""
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:.4f}" if value >= 0.01 else f"${value:.6f}"


def _environment() -> Any:
    try:
        import jinja2
    except ImportError as error:  # the plugin option and the command name the extra
        raise ImportError(
            "promptvcr's HTML report needs Jinja2: pip install 'promptvcr[report]' (or pip install jinja2)."
        ) from error
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("promptvcr.htmlreport", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["dollars"] = _dollars
    return environment


def render(report: Report) -> str:
    """The whole HTML document of ``report``."""
    template = _environment().get_template("report.html.j2")
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    folded = len(report.tests) > OPEN_TESTS
    return str(template.render(report=report, created=created, folded=folded))


def write(path: Path, report: Report) -> None:
    """Write the report to ``path`` atomically (a reader never sees half a file)."""
    from ..files.storage import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, render(report))

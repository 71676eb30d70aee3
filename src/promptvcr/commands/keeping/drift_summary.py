"""``promptvcr drift REPORT.json``: what a verify run found, for a pull request, or the tests to re-record.

The drift workflow (``nox -s drift``, see docs/team.md) runs ``--record-mode=verify
--drift-report=drift.json``, re-records the tests this command lists with ``--tests``, and
puts this command's summary in the pull request: each difference once, grouped by severity
(worst first, :data:`promptvcr.policies.shapes.SEVERITIES`), with the tests that saw it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ...policies.shapes import SEVERITIES, severity_of
from ...readouts.drift import DriftEntry, read_entries

__all__ = ["add_arguments", "drifted_tests", "run", "summary"]

_SHOWN_TESTS = 5


def drifted_tests(entries: list[DriftEntry]) -> list[str]:
    """The tests whose answers drifted, once each, in order: exactly what to re-record."""
    return sorted({entry.nodeid for entry in entries if entry.kind == "verify" and entry.nodeid})


def _tests(nodeids: set[str]) -> str:
    shown = sorted(nodeids)
    more = f" and {len(shown) - _SHOWN_TESTS} more" if len(shown) > _SHOWN_TESTS else ""
    return ", ".join(f"`{nodeid}`" for nodeid in shown[:_SHOWN_TESTS]) + more


def summary(entries: list[DriftEntry], rerecorded: bool = False) -> str:
    """Markdown for a pull request body: the drift grouped by severity, each difference once."""
    verified = [entry for entry in entries if entry.kind == "verify"]
    missed = [entry for entry in entries if entry.kind == "miss"]
    tools = [entry for entry in entries if entry.kind == "tool-drift"]
    tests = drifted_tests(entries)
    if not verified:
        lines = ["## Provider drift: none", "", "Every verified answer has the structure of its recording."]
    else:
        cassettes = {entry.cassette for entry in verified}
        lines = [
            f"## Provider drift: {len(verified)} answer(s) in {len(cassettes)} cassette(s), "
            f"{len(tests)} test(s)",
            "",
            ("Re-recorded: " if rerecorded else "To re-record: ") + _tests(set(tests)),
        ]
        grouped: dict[str, dict[str, set[str]]] = {}
        for entry in verified:
            for line in entry.differences:
                grouped.setdefault(severity_of(line), {}).setdefault(line, set()).add(entry.nodeid or "?")
        for severity in SEVERITIES:
            found = grouped.get(severity)
            if not found:
                continue
            lines += ["", f"### {severity} ({len(found)})", ""]
            lines += [f"- {line} ({_tests(nodeids)})" for line, nodeids in sorted(found.items())]
    if missed:
        lines += [
            "",
            f"{len(missed)} request(s) missed their cassette (the code changed, not the provider); "
            "the text drift report lists them.",
        ]
    if tools:
        lines += [
            "",
            f"{len(tools)} request(s) replayed with tool drift (a tool returned something new; "
            "--on-tool-drift=replay): the text drift report names each tool and call id.",
        ]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report", type=Path, help="the drift report a verify run wrote: --drift-report=drift.json"
    )
    parser.add_argument(
        "--tests",
        action="store_true",
        help="print the drifted tests' node ids, one per line, and nothing else",
    )
    parser.add_argument(
        "--rerecorded", action="store_true", help="say in the summary that the drifted tests were re-recorded"
    )


def run(args: argparse.Namespace) -> int:
    try:
        entries = read_entries(args.report)
    except ValueError as error:
        print(f"promptvcr drift: {error}")
        return 1
    if args.tests:
        for nodeid in drifted_tests(entries):
            print(nodeid)
    else:
        print(summary(entries, rerecorded=args.rerecorded), end="")
    return 0

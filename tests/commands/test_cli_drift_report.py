"""``--drift-report FILE``: every miss of a replaying run, with its diff, in one file at the end."""

from __future__ import annotations

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

DRIFTED = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_greets():
    assert ask("hello there") == "Hi!"

@pytest.mark.promptvcr
def test_still_matches():
    assert ask("bye") == "Bye!"
"""


@pytest.fixture
def drifted(pytester: pytest.Pytester) -> pytest.Pytester:
    """One test whose prompt changed since recording, one that still matches."""
    make_suite(pytester, test_app=DRIFTED)
    write_cassette(pytester.path / "cassettes/test_app/test_greets.yaml", chat("hello", "Hi!"))
    write_cassette(pytester.path / "cassettes/test_app/test_still_matches.yaml", chat("bye", "Bye!"))
    return pytester


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_the_report_lists_each_miss_with_its_diff_and_the_command_to_rerecord(
    drifted: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    result = run(drifted, *workers, "--drift-report", "drift.txt")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["promptvcr drift report: 1 missed request(s) in drift.txt"])
    report = (drifted.path / "drift.txt").read_text(encoding="utf-8")
    head, entry = report.split("\n\n== ", 1)
    assert head == (
        "promptvcr drift report: 1 missed request(s) in 1 cassette(s), 1 test(s).\n"
        "\n"
        "Re-record exactly these (the other interactions stay as recorded):\n"
        "  nox -s record -- test_app.py::test_greets\n"
        "or without nox:\n"
        "  python -m pytest --record-mode=record test_app.py::test_greets"
    )
    lines = entry.splitlines()
    assert lines[0] == "test_app.py::test_greets  cassette cassettes/test_app/test_greets.yaml"
    assert lines[1] == (
        "promptvcr: no recorded request in cassettes/test_app/test_greets.yaml matches this one "
        "(record mode: replay)."
    )
    assert any("hello" in line and "hello there" in line for line in lines)  # the diff of the changed prompt


def test_a_run_without_misses_says_so(drifted: pytest.Pytester) -> None:
    write_cassette(drifted.path / "cassettes/test_app/test_greets.yaml", chat("hello there", "Hi!"))
    run(drifted, "--drift-report", "drift.txt").assert_outcomes(passed=2)
    assert (drifted.path / "drift.txt").read_text(encoding="utf-8") == (
        "promptvcr drift report: no request missed its cassette.\n"
    )

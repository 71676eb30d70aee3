"""The drift workflow: ``--fail-on-drift``, a ``*.json`` drift report, and ``promptvcr drift``.

A suite of three tests records real openai SDK traffic from the loopback fake provider; then
the provider's answers change shape for two of them (a new field; a field's type), and the
workflow that ``nox -s drift`` runs is driven step by step: verify fails the run naming the
drifted tests and cassettes, ``promptvcr drift --tests`` lists exactly those two, re-recording
them leaves the third cassette untouched, and the summary groups the changes by severity.
"""

from __future__ import annotations

from typing import Any

import fake_provider
import pytest
from fake_provider import FakeProvider
from plugin_suites import make_suite, run

from promptvcr.cli import main

SUITE = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_fielded():
    assert ask("new field please", base_url=os.environ["UPSTREAM"])

@pytest.mark.promptvcr
def test_typed():
    assert ask("new type please", base_url=os.environ["UPSTREAM"])

@pytest.mark.promptvcr
def test_steady():
    assert ask("steady please", base_url=os.environ["UPSTREAM"])
"""


@pytest.fixture
def drifted(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """The suite recorded, then the provider changed: a new field for one test, a type for another."""
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    make_suite(pytester, test_app=SUITE)
    run(pytester, "--record-mode=record").assert_outcomes(passed=3)
    original = fake_provider.openai_completion

    def changed(answer: Any) -> dict[str, Any]:
        body = original(answer)
        if "new field" in answer.content:
            body["service_tier"] = "default"
        if "new type" in answer.content:
            body["created"] = "2026-11-28T06:00:00Z"
        return body

    monkeypatch.setattr(fake_provider, "openai_completion", changed)
    return pytester


def cassette(pytester: pytest.Pytester, test: str) -> bytes:
    return (pytester.path / f"cassettes/test_app/{test}.yaml").read_bytes()


@pytest.mark.parametrize("workers", [(), ("-n", "1")], ids=["one process", "xdist"])
def test_fail_on_drift_fails_the_run_naming_each_drifted_test_and_cassette(
    drifted: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    if not workers:
        passing = run(drifted, "--record-mode=verify")
        passing.assert_outcomes(passed=3)
        assert passing.ret == pytest.ExitCode.OK  # without the flag drift is reported, not failed
    result = run(drifted, *workers, "--record-mode=verify", "--fail-on-drift")
    result.assert_outcomes(passed=3)  # every test ran: the run fails, not the tests
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*promptvcr --fail-on-drift*",
            "FAILED: 2 live answer(s) in 2 test/cassette pair(s) differ in structure from the recording:",
            "  test_app.py::test_fielded  cassette cassettes/test_app/test_fielded.yaml",
            "    interactions[[]0] POST http://127.0.0.1:*/v1/chat/completions (1 difference(s))",
            "  test_app.py::test_typed  cassette cassettes/test_app/test_typed.yaml",
            "    interactions[[]0] POST http://127.0.0.1:*/v1/chat/completions (1 difference(s))",
        ]
    )
    assert "test_steady  cassette" not in result.stdout.str()


def test_the_drift_workflow_rerecords_exactly_the_drifted_tests_and_summarises_by_severity(
    drifted: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    steady = cassette(drifted, "test_steady")
    fielded = cassette(drifted, "test_fielded")
    verify = run(drifted, "--record-mode=verify", "--drift-report=.promptvcr/drift.json", "--fail-on-drift")
    assert verify.ret == pytest.ExitCode.TESTS_FAILED
    report = str(drifted.path / ".promptvcr/drift.json")
    capsys.readouterr()

    assert main(["drift", report, "--tests"]) == 0
    tests = capsys.readouterr().out.split()
    assert tests == ["test_app.py::test_fielded", "test_app.py::test_typed"]

    run(drifted, "--record-mode=rewrite", *tests).assert_outcomes(passed=2)
    assert cassette(drifted, "test_steady") == steady  # not drifted: not touched
    assert cassette(drifted, "test_fielded") != fielded
    assert b"service_tier" in cassette(drifted, "test_fielded")
    again = run(drifted, "--record-mode=verify", "--fail-on-drift")
    assert again.ret == pytest.ExitCode.OK  # the re-recorded cassettes hold what the provider sends now

    capsys.readouterr()
    assert main(["drift", report, "--rerecorded"]) == 0
    summary = capsys.readouterr().out
    assert summary.splitlines() == [
        "## Provider drift: 2 answer(s) in 2 cassette(s), 2 test(s)",
        "",
        "Re-recorded: `test_app.py::test_fielded`, `test_app.py::test_typed`",
        "",
        "### type changed (1)",
        "",
        "- created: was number, now string (`test_app.py::test_typed`)",
        "",
        "### new field (1)",
        "",
        "- the body: new field 'service_tier' (`test_app.py::test_fielded`)",
    ]


def test_drift_without_a_report_says_how_to_write_one(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["drift", str(tmp_path / "drift.json")]) == 1
    out = capsys.readouterr().out
    assert "There is no drift report at" in out
    assert "--record-mode=verify --drift-report=drift.json" in out

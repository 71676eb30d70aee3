"""The summary says what a run did in the modes a newcomer tries first (issue 46): what
``--cassette-unused=drop`` removed (at the end of the run since issue 42), no "tokens
replayed: 0" after a live run, and the tokens a verify run spent."""

from __future__ import annotations

import pytest
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

ONE_CALL = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_one_call():
    assert ask("one", base_url=os.environ.get("LLM_BASE_URL", "http://127.0.0.1:9/v1"))
"""


def _summary(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and " promptvcr " in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return lines[start + 1 : end]


def test_drop_says_what_it_removed(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=ONE_CALL)
    path = write_cassette(
        pytester.path / "cassettes/test_app/test_one_call.yaml", chat("one", "1"), chat("gone", "2")
    )
    result = run(pytester, "--cassette-unused=drop")
    result.assert_outcomes(passed=1)
    assert any(
        line.startswith("removed from cassettes/test_app/test_one_call.yaml: interactions[1]")
        for line in result.outlines
    ), result.outlines
    assert "gone" not in path.read_text(encoding="utf-8")


def test_a_passthrough_run_counts_no_tokens_as_replayed(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite(pytester, test_app=ONE_CALL)
    monkeypatch.setenv("LLM_BASE_URL", provider.openai_base_url)
    result = run(pytester, "--record-mode=passthrough")
    result.assert_outcomes(passed=1)
    summary = _summary(result)
    assert not any(line.startswith("tokens replayed") for line in summary), summary
    assert "passthrough: 1 request sent live and not recorded; their tokens are not counted" in summary


def test_a_verify_run_prints_the_tokens_it_spent(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite(pytester, test_app=ONE_CALL)
    write_cassette(pytester.path / "cassettes/test_app/test_one_call.yaml", chat("one", "1"))
    monkeypatch.setenv("LLM_BASE_URL", provider.openai_base_url)
    result = run(pytester, "--record-mode=verify", "-W", "ignore::promptvcr.DriftWarning")
    result.assert_outcomes(passed=1)
    summary = _summary(result)
    assert len(provider.requests) == 1
    verified = [line for line in summary if line.startswith("tokens verified: ")]
    assert verified and "spent on this run" in verified[0], summary
    assert not any(line.startswith("tokens replayed") for line in summary), summary


def test_drift_fails_the_run_with_the_documented_warning_filter(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/record-modes.md: ``-W error::promptvcr.DriftWarning`` makes a verify run fail on drift."""
    make_suite(pytester, test_app=ONE_CALL)
    recorded = chat("one", "1")
    recorded["response"]["json"]["choices"][0]["message"]["annotations"] = []  # a field the live answer lacks
    write_cassette(pytester.path / "cassettes/test_app/test_one_call.yaml", recorded)
    monkeypatch.setenv("LLM_BASE_URL", provider.openai_base_url)
    warned = run(pytester, "--record-mode=verify")
    assert warned.ret == 0
    assert any("verify drift" in line for line in warned.outlines), warned.outlines
    failed = run(pytester, "--record-mode=verify", "-W", "error::promptvcr.DriftWarning")
    assert failed.ret != 0
    assert any("DriftWarning" in line for line in failed.outlines)


def test_the_usage_record_is_written_as_docs_housekeeping_says(pytester: pytest.Pytester) -> None:
    """docs/housekeeping.md: the first run that uses a cassette creates ``.promptvcr/usage.json``;
    a run of a project that never used one writes none (so ``prune`` has nothing to go on)."""
    record = pytester.path / ".promptvcr" / "usage.json"
    make_suite(pytester, test_plain="def test_no_llm():\n    assert True\n")
    run(pytester, "test_plain.py").assert_outcomes(passed=1)
    assert not record.exists()
    make_suite(pytester, test_app=ONE_CALL)
    write_cassette(pytester.path / "cassettes/test_app/test_one_call.yaml", chat("one", "1"))
    run(pytester).assert_outcomes(passed=2)
    assert record.exists()

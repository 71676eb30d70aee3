"""A recording budget: ``--max-record-requests`` / ``--max-record-tokens`` stop a recording run.

Four tests record real openai SDK calls from the loopback fake provider. With a budget of two
requests the first two record, the third is refused before anything is sent (its test fails
with what was spent, the limit and how to raise it) and the run stops: the fourth never runs
and never spends. The summary says what was spent, priced from genai-prices. The budget is the
run's: pytest-xdist workers and the processes a run starts spend from one count.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider
from plugin_suites import make_suite, run

import promptvcr
from promptvcr.policies import budget

SUITE = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_asks(n):
    assert ask(f"question {n}", base_url=os.environ["UPSTREAM"])
"""


@pytest.fixture
def suite(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    make_suite(pytester, test_app=SUITE)
    return pytester


def test_a_request_budget_stops_the_run_before_it_spends_more(
    suite: pytest.Pytester, provider: FakeProvider
) -> None:
    result = run(suite, "--record-mode=record", "-p", "no:randomly", "--max-record-requests=2")
    result.assert_outcomes(passed=2, failed=1)  # the fourth test never ran
    assert len(provider.requests) == 2  # the refused request was never sent
    result.stdout.fnmatch_lines(
        [
            "*promptvcr: the recording budget is spent: 2 request(s) sent, the limit is 2 "
            "(--max-record-requests). POST http://127.0.0.1:*/v1/chat/completions was not sent*",
            "*To spend more, raise the limit (--max-record-tokens / --max-record-requests, or "
            "$PROMPTVCR_MAX_RECORD_TOKENS / $PROMPTVCR_MAX_RECORD_REQUESTS)*",
            "*recording budget: * tokens in 2 live request(s), of 2 requests; spent: 1 request(s) refused "
            "and the run stopped*",
        ]
    )
    result.stdout.fnmatch_lines(["*Interrupted: promptvcr: the recording budget is spent*"])
    assert not (suite.path / "cassettes/test_app/test_asks[3].yaml").exists()


def test_a_token_budget_stops_at_the_answer_that_crosses_it_and_the_summary_prices_it(
    suite: pytest.Pytester, provider: FakeProvider
) -> None:
    result = run(suite, "--record-mode=record", "-p", "no:randomly", "--max-record-tokens=1")
    result.assert_outcomes(passed=1, failed=1)  # the first answer crossed 1 token: no second request
    assert len(provider.requests) == 1
    result.stdout.fnmatch_lines(
        [
            "*the recording budget is spent: * tokens spent (input *, output *), the limit is 1 "
            "(--max-record-tokens)*",
            "tokens recorded: * spent on this run",
            "tokens priced: $0.0* spent on this run (list prices, genai-prices)",
            "recording budget: * tokens in 1 live request(s), of 1 tokens; spent: 1 request(s) refused*",
        ]
    )
    replayed = run(suite, "-p", "no:randomly", "-k", "test_asks and 1")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["tokens priced: $0.0* not spent (replayed) (list prices, genai-prices)"])


def test_the_environment_budget_reaches_use_cassette_outside_pytest(
    provider: FakeProvider, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(budget.ENV_MAX_RECORD_REQUESTS, "1")
    budget.reset()
    client = openai.OpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=3)
    path = Path(str(tmp_path)) / "budget.yaml"

    def ask(text: str) -> object:
        return client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
        )

    refused = pytest.raises(budget.RecordBudgetSpent, match="the limit is 1")
    with refused, promptvcr.use_cassette(path, record_mode="record"):
        ask("first")
        ask("second")  # refused, not retried: the SDK's retries do not catch it
    assert len(provider.requests) == 1
    budget.reset()


PARALLEL = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
@pytest.mark.parametrize("n", range(8))
def test_asks(n):
    assert ask(f"question {n}", base_url=os.environ["UPSTREAM"])
"""

_SHARED = (
    "the recording budget is spent: 3 request(s) sent, the limit is 3 (--max-record-requests), "
    "the run's total across 2 processes"
)


def test_pytest_xdist_workers_share_the_run_s_budget(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45 left the budget per process: ``-n 2`` spent two. Eight tests, two workers, a
    budget of three requests: three are sent in all, and each worker's first refused test fails
    with the message naming the run's total; the summary shows the run's total."""
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    make_suite(pytester, test_app=PARALLEL)
    result = run(pytester, "--record-mode=record", "-p", "no:randomly", "-n", "2", "--max-record-requests=3")
    assert len(provider.requests) == 3  # never more than the limit, over both workers
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 3
    assert 1 <= outcomes.get("failed", 0) <= 2  # each worker stops at its own first refusal
    told = [line for line in result.stdout.lines if _SHARED in line and not line.startswith("FAILED")]
    assert len(told) == outcomes["failed"]  # each refused test says it is the run's total
    result.stdout.fnmatch_lines(
        [
            "recording budget: * tokens in 3 live request(s), of 3 requests (the run's total across 2 "
            "processes); spent: * request(s) refused and the run stopped*"
        ]
    )


CHILD = """
import sys

import openai
import promptvcr

client = openai.OpenAI(api_key="sk-test", base_url=sys.argv[2], max_retries=0)
with promptvcr.use_cassette(sys.argv[1], record_mode="record"):
    for text in ("child one", "child two"):
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
"""


def test_a_process_started_after_the_first_live_request_spends_from_the_same_budget(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside pytest's own runs the first process that sends with a limit set keeps the count,
    and the processes it starts (an application under test) share it."""
    monkeypatch.setenv(budget.ENV_MAX_RECORD_REQUESTS, "2")
    monkeypatch.delenv(budget.ENV_BUDGET_DIR, raising=False)
    budget.reset()
    client = openai.OpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=0)
    try:
        with promptvcr.use_cassette(tmp_path / "parent.yaml", record_mode="record"):
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "parent"}]
            )
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp_path / "child.yaml"), provider.openai_base_url],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        budget.reset()
    assert budget.ENV_BUDGET_DIR not in os.environ  # reset() takes back what this process made
    assert len(provider.requests) == 2  # the parent's and the child's first: not the child's second
    assert child.returncode == 1, child.stderr
    assert (
        "RecordBudgetSpent: promptvcr: the recording budget is spent: 2 request(s) sent, the limit is 2 "
        "(--max-record-requests), the run's total across 2 processes" in child.stderr
    )
    assert "POST http://127.0.0.1:" in child.stderr and "/v1/chat/completions was not sent" in child.stderr

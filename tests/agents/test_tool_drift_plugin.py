"""Tool drift in a pytest run: the failure names it, ``--on-tool-drift=replay`` passes and reports it.

An inner suite runs an agent turn through the real openai SDK (two tools called in parallel,
their results sent back); it is recorded from FakeProvider on 127.0.0.1, then replayed offline
while the weather tool returns something new. The test fails saying "tool drift" with the tool
and the call id; with ``--on-tool-drift=replay`` it passes, and the summary, the
``--drift-report`` file and the HTML report show the drift; ``--fail-on-drift`` fails the run.
"""

from __future__ import annotations

import pytest
from fake_provider import FakeProvider
from plugin_suites import make_suite, run

from promptvcr.cli import main

AGENT = """
import json
import os

import openai

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
NAMES = ("get_weather", "get_time")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in NAMES]
RUN = {"get_weather": lambda: os.environ["WEATHER"], "get_time": lambda: "10:00"}


def agent_turn(base_url):
    client = openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=base_url, max_retries=0)
    messages = [{"role": "user", "content": "PARALLEL weather and time in Paris"}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message = first.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    calls = message.tool_calls[::-1] if os.environ.get("REVERSED") else message.tool_calls  # as they finished
    for call in calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": RUN[call.function.name]()})
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    return answer.choices[0].message.content
"""

SUITE = """
import os
import pytest
from agent import agent_turn

@pytest.mark.promptvcr
def test_agent():
    assert agent_turn(os.environ.get("UPSTREAM", "http://127.0.0.1:9/v1")).startswith("echo 2:")
"""


@pytest.fixture
def recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    make_suite(pytester, agent=AGENT, test_app=SUITE)
    monkeypatch.setenv("WEATHER", "sunny")
    with FakeProvider() as fake:
        monkeypatch.setenv("UPSTREAM", fake.openai_base_url)
        run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    monkeypatch.delenv("UPSTREAM")
    monkeypatch.setenv("REVERSED", "1")  # replays send the parallel results in the other order
    return pytester


def test_a_tool_returning_a_new_value_fails_as_tool_drift_unless_replayed(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run(recorded).assert_outcomes(passed=1)  # as recorded: replays

    monkeypatch.setenv("WEATHER", "rain")
    failed = run(recorded)
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        ["*Why it missed: tool drift*", '*get_weather (call call_fake_1): "sunny" -> "rain"*']
    )

    args = ("--on-tool-drift=replay", "--drift-report=drift.txt", "--promptvcr-html=report.html")
    replayed = run(recorded, *args)
    replayed.assert_outcomes(passed=1)
    assert replayed.ret == 0
    replayed.stdout.fnmatch_lines(
        [
            "*requests: 1 replayed, 0 recorded, 0 missed, 1 tool-drift*",
            "*tool drift: 1 request replayed though only tool results differ from the recording*",
            '*get_weather (call call_fake_1): "sunny" -> "rain"*',
        ]
    )
    report = (recorded.path / "drift.txt").read_text()
    assert "tool drift: 1 request(s) replayed" in report
    assert 'get_weather (call call_fake_1): "sunny" -> "rain"' in report
    html = (recorded.path / "report.html").read_text()
    assert "tool drift" in html and "get_weather (call call_fake_1)" in html

    gated = run(recorded, "--on-tool-drift=replay", "--fail-on-drift", "--drift-report=drift.json")
    gated.assert_outcomes(passed=1)
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    gated.stdout.fnmatch_lines(
        ["*promptvcr --fail-on-drift*", "*tool drift in POST*get_weather (call call_fake_1)*"]
    )

    assert main(["drift", str(recorded.path / "drift.json")]) == 0
    summary = capsys.readouterr().out
    assert "## Provider drift: none" in summary  # the provider did not change: nothing to re-record
    assert "1 request(s) replayed with tool drift" in summary
    assert "missed their cassette" not in summary

    monkeypatch.setenv("WEATHER", "sunny")
    steady = run(recorded, "--on-tool-drift=replay", "--fail-on-drift")
    steady.assert_outcomes(passed=1)
    assert steady.ret == 0

"""``faults=`` and ``timing=`` are ordinary ``use_cassette`` options, so the pytest marker takes them."""

from __future__ import annotations

import textwrap

import pytest

# Imported once here: pytester's in-process runs drop the modules each run imports.
import openai  # noqa: F401  # isort: skip

from promptvcr.files import fileformat

CASSETTE = {
    "request": {
        "method": "POST",
        "url": "https://api.openai.com/v1/chat/completions",
        "headers": {"content-type": "application/json"},
        "json": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]},
    },
    "response": {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "json": {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "gpt-4o-mini",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi!"}}
            ],
        },
        "timing": {"headers": 0.2, "chunks": [0.0]},
    },
}

SUITE = """
import time

import openai
import pytest
from promptvcr import faults


def ask(max_retries):
    client = openai.OpenAI(api_key="sk-test-0000", base_url="http://127.0.0.1:9/v1", max_retries=max_retries)
    messages = [{"role": "user", "content": "hello"}]
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return reply.choices[0].message.content


@pytest.mark.promptvcr("hello.yaml", faults=[faults.http_error(429, retry_after=0.01)])
def test_rate_limited_then_answered(cassette):
    assert ask(max_retries=1) == "Hi!"
    assert [fired.fault.status for fired in cassette.faults_fired] == [429]


@pytest.mark.promptvcr("hello.yaml", faults=[faults.http_error(503)])
def test_out_of_retries(cassette):
    with pytest.raises(openai.InternalServerError):
        ask(max_retries=0)


@pytest.mark.promptvcr("hello.yaml", timing="recorded")
def test_recorded_time_to_headers(cassette):
    started = time.monotonic()
    assert ask(max_retries=0) == "Hi!"
    assert time.monotonic() - started >= 0.2
"""


def test_the_marker_passes_faults_and_timing_to_the_cassette(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_app=textwrap.dedent(SUITE))
    path = pytester.path / "hello.yaml"
    path.write_text(fileformat.dumps([CASSETTE], path), encoding="utf-8")
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:langsmith_plugin")
    result.assert_outcomes(passed=3)

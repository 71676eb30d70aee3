"""What the plugin reports: the session summary, unused interactions, tokens, and xdist runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.cassettes.models import Response
from promptvcr.cassettes.sse import encode_event
from promptvcr.cassettes.tokens import Tokens, tokens_of

THREE_TESTS = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_two_calls():
    assert ask("one") == "1"
    assert ask("two") == "2"

@pytest.mark.promptvcr
def test_one_of_two():
    assert ask("three") == "3"

@pytest.mark.promptvcr
def test_misses():
    ask("never recorded")
"""


def _three_cassettes(directory: Path) -> None:
    write_cassette(
        directory / "cassettes/test_app/test_two_calls.yaml",
        chat("one", "1", (100, 20)),
        chat("two", "2", (1000, 7)),
    )
    write_cassette(
        directory / "cassettes/test_app/test_one_of_two.yaml",
        chat("three", "3", (5, 1)),
        chat("four", "4", (9, 9)),
    )
    write_cassette(directory / "cassettes/test_app/test_misses.yaml", chat("five", "5"))


def _summary(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and " promptvcr " in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("="))
    return lines[start + 1 : end]


def test_summary_counts_cassettes_requests_misses_unused_and_tokens(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=THREE_TESTS)
    _three_cassettes(pytester.path)
    result = run(pytester, "--cassette-unused=ignore")
    result.assert_outcomes(passed=2, failed=1)
    assert _summary(result) == [
        "cassettes used: 3, by 3 tests (record mode: replay)",
        "requests: 3 replayed, 0 recorded, 1 missed",
        "missed requests, by cassette (1 cassette):",
        "  cassettes/test_app/test_misses.yaml: POST http://127.0.0.1:9/v1/chat/completions",
        "unused interactions: 2 in 2 cassettes",
        "  cassettes/test_app/test_misses.yaml: interactions[0] POST /v1/chat/completions",
        "  cassettes/test_app/test_one_of_two.yaml: interactions[1] POST /v1/chat/completions",
        "tokens replayed: 1,133 (input 1,105, output 28), not spent on this run",
        # gpt-4o-mini at its genai-prices list price (issue 45)
        "tokens priced: $0.000183 not spent (replayed) (list prices, genai-prices)",
    ]


def test_no_summary_when_no_test_uses_a_cassette(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_plain="def test_nothing():\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert not any(line.startswith("=") and " promptvcr " in line for line in result.stdout.lines)
    assert "cassettes used" not in result.stdout.str()


UNUSED = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_uses_one():
    assert ask("three") == "3"
"""


def _unused_suite(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=UNUSED)
    write_cassette(
        pytester.path / "cassettes/test_app/test_uses_one.yaml", chat("three", "3"), chat("four", "4")
    )


UNUSED_MESSAGE = [
    "*promptvcr: 1 interaction(s) of cassettes/test_app/test_uses_one.yaml were not played by this test:",
    "*  interactions[[]1] POST /v1/chat/completions",  # [[] is fnmatch for a literal [
    "*The code no longer sends them: re-record the cassette (--record-mode=rewrite) or delete them.",
]


def test_unused_interactions_warn_by_default(pytester: pytest.Pytester) -> None:
    _unused_suite(pytester)
    result = run(pytester)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*warnings summary*", "*UnusedInteractionsWarning*", *UNUSED_MESSAGE[1:]])
    result.stdout.fnmatch_lines(["unused interactions: 1 in 1 cassette"])


def test_unused_interactions_ignored(pytester: pytest.Pytester) -> None:
    _unused_suite(pytester)
    result = run(pytester, "--cassette-unused=ignore")
    result.assert_outcomes(passed=1, warnings=0)
    assert "were not played" not in result.stdout.str()
    result.stdout.fnmatch_lines(["unused interactions: 1 in 1 cassette"])  # still counted in the summary


def test_unused_interactions_fail_the_test(pytester: pytest.Pytester) -> None:
    _unused_suite(pytester)
    result = run(pytester, "--cassette-unused=fail")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*_ test_uses_one _*", *UNUSED_MESSAGE])


def test_a_failing_test_is_not_blamed_for_unused_interactions(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest
        from llm import ask

        @pytest.mark.promptvcr
        def test_stops_early():
            assert ask("three") == "not what was recorded"
        """,
    )
    write_cassette(
        pytester.path / "cassettes/test_app/test_stops_early.yaml", chat("three", "3"), chat("four", "4")
    )
    result = run(pytester, "--cassette-unused=fail")
    result.assert_outcomes(failed=1)
    assert "were not played" not in result.stdout.str()


def test_xdist_workers_send_their_records_to_one_summary(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=THREE_TESTS)
    _three_cassettes(pytester.path)
    result = run(pytester, "-n", "2", "--cassette-unused=ignore")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    assert _summary(result)[:2] == [
        "cassettes used: 3, by 3 tests (record mode: replay)",
        "requests: 3 replayed, 0 recorded, 1 missed",
    ]
    assert _summary(result)[-2:] == [
        "tokens replayed: 1,133 (input 1,105, output 28), not spent on this run",
        "tokens priced: $0.000183 not spent (replayed) (list prices, genai-prices)",  # through the workers
    ]
    result.stdout.fnmatch_lines(["*_ test_misses _*", "promptvcr: no recorded request in *test_misses.yaml*"])


# Tokens, per provider -----------------------------------------------------------------------


def _json(body: object) -> Response:
    return Response(200, {"content-type": "application/json"}, [json.dumps(body).encode()])


def _stream(*events: dict[str, object]) -> Response:
    return Response(200, {"content-type": "text/event-stream"}, [encode_event(event) for event in events])


def test_tokens_of_each_provider_shape() -> None:
    openai_chat = _json({"usage": {"prompt_tokens": 132, "completion_tokens": 23, "total_tokens": 155}})
    openai_responses = _json({"usage": {"input_tokens": 40, "output_tokens": 2, "total_tokens": 42}})
    anthropic = _json({"usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5}})
    gemini = _json(
        {"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "thoughtsTokenCount": 4}}
    )
    assert tokens_of(openai_chat) == Tokens(132, 23)
    assert tokens_of(openai_responses) == Tokens(40, 2)
    assert tokens_of(anthropic) == Tokens(100, 5)
    assert tokens_of(gemini) == Tokens(7, 7)


def test_tokens_of_streams_take_the_cumulative_totals() -> None:
    anthropic = _stream(
        {"event": "message_start", "data": {"message": {"usage": {"input_tokens": 43, "output_tokens": 1}}}},
        {"event": "content_block_delta", "data": {"delta": {"text": "hi"}}},
        {"event": "message_delta", "data": {"usage": {"output_tokens": 282}}},
    )
    openai_with_usage = _stream(
        {"data": {"choices": [{"delta": {"content": "hi"}}], "usage": None}},
        {"data": {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}},
        {"data": "[DONE]"},
    )
    openai_responses = _stream(
        {
            "event": "response.completed",
            "data": {"response": {"usage": {"input_tokens": 5, "output_tokens": 6}}},
        }
    )
    gemini = _stream(
        {"data": {"usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 1}}},
        {"data": {"usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 12}}},
    )
    assert tokens_of(anthropic) == Tokens(43, 282)
    assert tokens_of(openai_with_usage) == Tokens(9, 2)
    assert tokens_of(openai_responses) == Tokens(5, 6)
    assert tokens_of(gemini) == Tokens(8, 12)


def test_tokens_of_answers_without_usage_are_zero() -> None:
    assert tokens_of(_stream({"data": {"choices": []}}, {"data": "[DONE]"})) == Tokens()
    assert tokens_of(Response(200, {"content-type": "text/plain"}, [b"not json"])) == Tokens()
    assert tokens_of(_json({"usage": {"prompt_tokens": "many", "completion_tokens": True}})) == Tokens()
    assert tokens_of(Response(204)) == Tokens()


SHARED_CASSETTE_TESTS = """
import pytest
from llm import ask

@pytest.mark.promptvcr("shared.yaml")
@pytest.mark.parametrize("n", range(12))
def test_plays_one(n):
    assert ask("one") == "1"

@pytest.mark.promptvcr("shared.yaml")
def test_plays_two():
    assert ask("two") == "2"
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_a_cassette_shared_by_many_tests_counts_each_unused_interaction_once(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """13 tests share a 4-interaction cassette, each leaving 3 unplayed: the summary says 2
    (three and four, which no test played), not the 39 of adding each test's count."""
    make_suite(pytester, test_app=SHARED_CASSETTE_TESTS)
    write_cassette(
        pytester.path / "shared.yaml",
        chat("one", "1"),
        chat("two", "2"),
        chat("three", "3"),
        chat("four", "4"),
    )
    result = run(pytester, *workers, "--cassette-unused=ignore")
    result.assert_outcomes(passed=13)
    summary = _summary(result)
    assert summary[0].startswith("cassettes used: 1, by 13 tests")
    assert "unused interactions: 2 in 1 cassette" in summary
    assert (
        "  shared.yaml: interactions[2] POST /v1/chat/completions, interactions[3] POST /v1/chat/completions"
        in summary
    )

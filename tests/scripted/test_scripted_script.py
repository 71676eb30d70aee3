"""The script as users meet it: running out, mixing with a cassette file, the pytest marker,
the decorator, faults and slow streams."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import openai
import pytest
from plugin_suites import chat, make_suite, run, write_cassette

import promptvcr
from promptvcr import CassetteMiss, faults, reply, script, use_cassette

OFFLINE = "http://127.0.0.1:9/v1"  # nothing listens: every answer must come from promptvcr


def client() -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=OFFLINE, max_retries=0)


def ask(text: str, **options: object) -> str | None:
    completion = client().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], **options
    )
    return completion.choices[0].message.content


def test_a_request_beyond_the_script_is_a_miss_that_says_the_script_ran_out() -> None:
    with pytest.raises(CassetteMiss) as raised, script(reply("One"), reply("Two")) as cassette:
        assert (ask("a"), ask("b")) == ("One", "Two")
        ask("c")
    message = str(raised.value)
    assert "the script ran out" in message and "its 2 replies were all used" in message
    assert "asked for reply 3" in message and "/chat/completions" in message
    assert cassette.missed and [play.outcome for play in cassette.played] == ["replayed", "replayed"]


def test_an_endpoint_replies_do_not_render_for_uses_up_no_reply() -> None:
    with pytest.raises(CassetteMiss, match="scripted replies render only for"), script(reply("One")):
        client().embeddings.create(model="text-embedding-3-small", input="hi")
    with script(reply("One")):
        assert ask("a") == "One"


def test_a_recorded_answer_comes_first_and_the_script_answers_what_the_file_lacks(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "mixed.yaml", chat("hello", "Hi, recorded!"))
    cassette = use_cassette(path, script=script(reply("Scripted.")))
    with pytest.raises(CassetteMiss) as raised, cassette:
        assert ask("something never recorded") == "Scripted."
        assert ask("hello") == "Hi, recorded!"  # still there: the script took nothing from the file
        ask("a third question")
    assert cassette.all_played
    assert [play.request.content.count(b"hello") for play in cassette.played] == [0, 1]
    message = str(raised.value)
    assert "the script ran out" in message and f"The cassette {path} has no answer for it either" in message
    assert path.read_text(encoding="utf-8").count("Scripted") == 0  # scripted answers are never written


def test_in_record_mode_what_neither_answers_goes_to_the_network_and_scripted_answers_are_not_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recorded.yaml"
    with use_cassette(path, record_mode="record", script=script(reply("Scripted."))):
        assert ask("first") == "Scripted."
        with pytest.raises(openai.APIConnectionError):
            ask("second")  # not scripted, not recorded: sent, and nothing listens there
    assert not path.exists()


def test_as_a_decorator_each_call_starts_from_the_first_reply() -> None:
    @script(reply("First"), reply("Second"))
    def both() -> tuple[str | None, str | None]:
        return ask("a"), ask("b")

    assert both() == ("First", "Second")
    assert both() == ("First", "Second")


async def test_as_an_async_decorator() -> None:
    @script(reply("Async"))
    async def one() -> str | None:
        completion = await openai.AsyncOpenAI(
            api_key="sk-test", base_url=OFFLINE, max_retries=0
        ).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
        return completion.choices[0].message.content

    assert await one() == "Async"


def test_an_http_error_fault_takes_the_place_of_an_answer_and_leaves_the_reply_for_the_retry() -> None:
    retrying = openai.OpenAI(api_key="sk-test", base_url=OFFLINE, max_retries=1)
    with script(reply("After the retry"), faults=[faults.http_error(429, retry_after=0)]) as cassette:
        completion = retrying.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}]
        )
    assert completion.choices[0].message.content == "After the retry"
    assert [play.outcome for play in cassette.played] == ["fault", "replayed"]
    with (
        script(reply("never served"), faults=[faults.http_error(500)]),
        pytest.raises(openai.InternalServerError),
    ):
        ask("x")


def test_a_cut_stream_fault_breaks_the_scripted_stream() -> None:
    with script(reply("one two three four five six"), faults=[faults.cut_stream(after_events=3)]) as cassette:
        stream = client().chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], stream=True
        )
        received = []
        with pytest.raises((openai.APIError, httpx2.HTTPError)):
            received.extend(chunk.choices[0].delta.content for chunk in stream)
    assert len(received) == 3 and len(cassette.faults_fired) == 1


def test_a_slow_stream_keeps_its_delay_and_gaps_and_timing_scales_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = reply("a b c d", delay=0.2, gap=0.05)
    # Served as given, the waits add up to 0.4 s; scaled by 0.1, to 0.04 s. What the replay asked
    # the clock for is read off ``time.sleep`` (the one clock sync replay waits on), not off the
    # wall clock: a loaded host's slow client makes a run longer, never its waits shorter, so the
    # wall clock gives only the lower bound.
    asked: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    # The delay is one wait; each gap is a wait for what is left until the event's moment.
    for pace, scale in (("none", 1.0), (0.1, 0.1)):
        asked.clear()
        started = time.monotonic()
        with script(slow, timing=pace):
            stream = client().chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], stream=True
            )
            assert "".join(c.choices[0].delta.content or "" for c in stream) == "a b c d"
        delay, *gaps = asked
        assert delay == pytest.approx(0.2 * scale), (pace, asked)
        assert len(gaps) >= 4 and all(0 < gap <= 0.05 * scale + 1e-6 for gap in gaps), (pace, asked)
        assert time.monotonic() - started >= 0.4 * scale * 0.9, pace


def test_reply_checks_what_it_is_given() -> None:
    with pytest.raises(TypeError, match="name, args"):
        reply(tool_calls=["search"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"promptvcr\.reply"):
        script("Hello")  # type: ignore[arg-type]
    assert reply().text == "" and reply(tool_calls=[("f", {})]).finish_reason == "tool_calls"
    assert promptvcr.reply(usage={"input": 3, "output": 4}).usage == promptvcr.scripted.Usage(3, 4)


def test_the_marker_takes_a_script(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest
        from llm import ask
        from promptvcr import CassetteMiss, reply, script

        @pytest.mark.promptvcr(script=script(reply("Scripted!"), reply("Again!")))
        def test_scripted(cassette):
            assert ask("never recorded") == "Scripted!"
            assert ask("hello") == "Hi!"  # from the test's cassette file: it comes first
            assert ask("still never recorded") == "Again!"
            assert [play.outcome for play in cassette.played] == ["replayed"] * 3

        @pytest.mark.promptvcr(script=script(reply("Only one")))
        def test_runs_out():
            assert ask("a") == "Only one"
            ask("b")
        """,
    )
    write_cassette(pytester.path / "cassettes/test_app/test_scripted.yaml", chat("hello", "Hi!"))
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the script ran out*"])

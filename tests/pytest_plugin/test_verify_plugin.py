"""The plugin's side of keeping cassettes honest: ``--record-mode=verify`` in the summary and in
``--drift-report``, and ``--max-age`` / ``--on-stale`` over every cassette of the run."""

from __future__ import annotations

from typing import Any

import fake_provider
import pytest
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

SUITE = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_asks():
    assert ask("hello", base_url=os.environ["UPSTREAM"]).endswith("hello")
"""


@pytest.fixture
def recorded(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    make_suite(pytester, test_app=SUITE)
    run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    return pytester


def test_verify_without_drift_says_how_many_it_verified(recorded: pytest.Pytester) -> None:
    result = run(recorded, "--record-mode=verify")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["requests: 0 replayed, 0 recorded, 0 missed, 1 verified"])
    assert "verify drift" not in result.stdout.str()


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_verify_drift_is_in_the_summary_and_the_drift_report(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    original = fake_provider.openai_completion

    def with_service_tier(answer: Any) -> dict[str, Any]:
        return {**original(answer), "service_tier": "default"}

    monkeypatch.setattr(fake_provider, "openai_completion", with_service_tier)
    before = (recorded.path / "cassettes/test_app/test_asks.yaml").read_text(encoding="utf-8")
    result = run(recorded, *workers, "--record-mode=verify", "--drift-report", "drift.txt")
    result.assert_outcomes(passed=1)  # drift is reported, not failed: the provider changed, not the code
    result.stdout.fnmatch_lines(
        [
            "promptvcr drift report: 0 missed request(s) and 1 drifted answer(s) (verify) in drift.txt",
            "requests: 0 replayed, 0 recorded, 0 missed, 1 verified",
            "verify drift: 1 answer(s) in 1 cassette(s) differ from the recording",
            "  cassettes/test_app/test_asks.yaml: interactions[[]0] POST http://127.0.0.1:*/v1/chat/completions",
            "    the body: new field 'service_tier'",
        ]
    )
    assert (recorded.path / "cassettes/test_app/test_asks.yaml").read_text(encoding="utf-8") == before
    report = (recorded.path / "drift.txt").read_text(encoding="utf-8")
    head, verify = report.split("\n\n", 1)
    assert head == "promptvcr drift report: no request missed its cassette."
    lines = verify.splitlines()
    assert lines[:4] == [
        "verify: 1 live answer(s) in 1 cassette(s), 1 test(s), differ in structure from the recording.",
        "",
        "Record them anew, to replay what the provider sends now:",
        "  python -m pytest --record-mode=rewrite test_app.py::test_asks",
    ]
    assert lines[5] == "== verify test_app.py::test_asks  cassette cassettes/test_app/test_asks.yaml"
    assert lines[6].startswith("interactions[0] POST http://127.0.0.1:")
    assert lines[7] == "  the body: new field 'service_tier'"


OLD_SUITE = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_old():
    assert ask("hello") == "Hi!"

@pytest.mark.promptvcr(max_age="1d", on_stale="fail")
def test_marked():
    assert ask("hello") == "Hi!"
"""


def test_max_age_on_the_command_line_wins_over_the_marker(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=OLD_SUITE)
    old = chat("hello", "Hi!")
    old["recorded"] = "2020-01-01T00:00:00Z"
    write_cassette(pytester.path / "cassettes/test_app/test_old.yaml", old)
    write_cassette(pytester.path / "cassettes/test_app/test_marked.yaml", old)
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)  # the marker's own max_age fails test_marked
    result.stdout.fnmatch_lines(["*StaleCassetteError*test_marked.yaml is older than max_age=1 day:*"])
    warned = run(pytester, "--max-age", "30d", "--on-stale", "warn")
    warned.assert_outcomes(passed=2, warnings=2)
    warned.stdout.fnmatch_lines(["*StaleCassetteWarning*test_old.yaml is older than max_age=30 days*"])
    failed = run(pytester, "--max-age", "30d", "--on-stale", "fail")
    failed.assert_outcomes(errors=2)


def test_a_bad_max_age_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=OLD_SUITE)
    result = run(pytester, "--max-age", "soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--max-age: max_age 'soon' is not an age*"])


#: A credential with no key shape: found by the names it is sent under, and as a sent value.
DRIFT_KEY = "drift-secret-Zq81Lm0Xw7Pk"

KEYED_SUITE = f"""
import os
import openai
import pytest

def ask(client, text):
    reply = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{{"role": "user", "content": text}}],
        extra_body={{"provider": {{"config": {{"api_key": "{DRIFT_KEY}"}}}}}},
        extra_query={{"key": "{DRIFT_KEY}"}},
    )
    return reply.choices[0].message.content

@pytest.mark.promptvcr
def test_asks_with_a_key():
    client = openai.OpenAI(api_key="{DRIFT_KEY}", base_url=os.environ["UPSTREAM"], max_retries=0)
    assert ask(client, "hello").endswith("hello")
    assert ask(client, os.environ["SECOND"]).endswith(os.environ["SECOND"])
"""


def test_the_drift_report_shows_no_credential_of_the_drifted_request(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The requests carry the key in their authorization header, a nested body field and the
    URL's query (the URL is what the report names). In
    the verify run the first one's live answer drifted and the second one's prompt changed (a
    miss, whose message compares it field by field with the recorded one): neither the report
    file nor the terminal shows the key."""
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    monkeypatch.setenv("SECOND", "what changed")
    make_suite(pytester, test_app=KEYED_SUITE)
    run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    cassette = (pytester.path / "cassettes/test_app/test_asks_with_a_key.yaml").read_text(encoding="utf-8")
    assert DRIFT_KEY not in cassette and "<redacted:field:api_key>" in cassette
    original = fake_provider.openai_completion

    def with_service_tier(answer: Any) -> dict[str, Any]:
        return {**original(answer), "service_tier": "default"}

    monkeypatch.setattr(fake_provider, "openai_completion", with_service_tier)
    monkeypatch.setenv("SECOND", "what changed now")
    result = run(pytester, "--record-mode=verify", "--drift-report", "drift.txt", "-rA", "-vv")

    terminal = result.stdout.str() + result.stderr.str()
    report = (pytester.path / "drift.txt").read_text(encoding="utf-8")
    assert "the body: new field 'service_tier'" in report
    assert DRIFT_KEY not in report
    assert DRIFT_KEY not in terminal

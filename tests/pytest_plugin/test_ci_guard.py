"""With ``$CI`` set, record, rewrite and verify refuse unless allowed: CI never spends money by accident.

This suite itself records against loopback servers with ``PROMPTVCR_ALLOW_RECORD_IN_CI=1``
(tests/conftest.py); these tests remove it to see the guard.
"""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

import promptvcr
from promptvcr import RecordInCIError
from promptvcr.policies.modes import on_ci

RECORDING_SUITE = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_asks():
    assert ask("hello", base_url=os.environ["UPSTREAM"]) == "echo 1: hello"
"""


@pytest.fixture
def on_ci_unforced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("PROMPTVCR_ALLOW_RECORD_IN_CI", raising=False)


@pytest.mark.usefixtures("on_ci_unforced")
@pytest.mark.parametrize("mode", ["record", "rewrite", "verify", "once"])
def test_recording_modes_refuse_on_ci_and_say_how_to_allow_them(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "new.yaml"
    with pytest.raises(RecordInCIError) as raised, promptvcr.use_cassette(path, record_mode=mode):
        pytest.fail("the body must not run")
    message = str(raised.value)
    assert f"cassette {path} would" in message and "$CI is set" in message
    assert "PROMPTVCR_ALLOW_RECORD_IN_CI=1" in message and "--allow-record-in-ci" in message
    assert not path.exists()


@pytest.mark.usefixtures("on_ci_unforced")
def test_replay_and_passthrough_run_on_ci(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.yaml", chat("hello", "Hi!"))
    with promptvcr.use_cassette(path, record_mode="replay"):
        pass
    with promptvcr.use_cassette(path, record_mode="passthrough"):
        pass


@pytest.mark.usefixtures("on_ci_unforced")
def test_max_age_rewrite_is_refused_on_ci_too(tmp_path: Path) -> None:
    old = chat("hello", "Hi!")
    old["recorded"] = "2020-01-01T00:00:00Z"
    path = write_cassette(tmp_path / "old.yaml", old)
    stale = promptvcr.use_cassette(path, max_age="30d", on_stale="rewrite")
    with pytest.raises(RecordInCIError, match="from max_age with on_stale=rewrite"), stale:
        pass


@pytest.mark.parametrize(
    ("value", "ci"), [("true", True), ("1", True), ("0", False), ("false", False), ("", False)]
)
def test_what_counts_as_ci(value: str, ci: bool) -> None:
    assert on_ci({"CI": value}) is ci
    assert on_ci({}) is False


def test_allowed_by_the_environment(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PROMPTVCR_ALLOW_RECORD_IN_CI", "1")
    with promptvcr.use_cassette(tmp_path / "c.yaml", record_mode="record") as cassette:
        client = openai.OpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=0)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert [play.outcome for play in cassette.played] == ["recorded"]


@pytest.mark.usefixtures("on_ci_unforced")
def test_the_plugin_refuses_on_ci_and_allow_record_in_ci_lets_it_record(
    pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    make_suite(pytester, test_app=RECORDING_SUITE)
    refused = run(pytester, "--record-mode=record")
    refused.assert_outcomes(errors=1)
    refused.stdout.fnmatch_lines(["*RecordInCIError*would record into it (record mode record)*$CI is set*"])
    assert not (pytester.path / "cassettes").exists() and provider.requests == []
    run(pytester, "--record-mode=record", "--allow-record-in-ci").assert_outcomes(passed=1)
    assert (pytester.path / "cassettes/test_app/test_asks.yaml").exists()
    assert run(pytester).ret == 0  # and replay runs on CI as always

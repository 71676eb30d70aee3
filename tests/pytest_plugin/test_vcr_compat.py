"""A suite written the pytest-recording way runs on promptvcr unchanged, and after
``promptvcr migrate``; with both plugins installed pytest starts and says which is active."""

from __future__ import annotations

import base64
import json
import textwrap
from pathlib import Path

import pytest
from plugin_suites import QUIET, make_suite, run

from promptvcr.cli import main

ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-4o-mini",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi!"}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}


def _vcr_cassette(question: str, *, binary: bool = False) -> str:
    """A cassette as vcrpy writes it: list-valued headers, a string or !!binary body."""
    request_body = json.dumps({"messages": [{"role": "user", "content": question}], "model": "gpt-4o-mini"})
    answer = json.dumps(ANSWER)
    if binary:
        encoded = base64.b64encode(answer.encode()).decode()
        response_body = f"      string: !!binary |\n        {encoded}"
    else:
        response_body = f"      string: {json.dumps(answer)}"
    return (
        "interactions:\n- request:\n"
        f"    body: {json.dumps(request_body)}\n"
        "    headers:\n      Authorization: [Bearer sk-proj-REDACTED]\n"
        "      Content-Type: [application/json]\n"
        "    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
        "  response:\n    body:\n"
        f"{response_body}\n"
        "    headers:\n      Content-Type: [application/json]\n"
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )


CONFTEST = """
import pytest

@pytest.fixture(scope="module")
def vcr_config():
    return {
        "match_on": ["method", "scheme", "host", "port", "path", "query"],
        "filter_headers": ["authorization"],
        "before_record_response": lambda response: response,
        "record_mode": "once",
    }

@pytest.fixture(scope="module")
def vcr_cassette_dir(request):
    return str(request.path.parent / "recordings" / request.path.stem)

def pytest_recording_configure(config, vcr):
    vcr.register_persister(object())
"""

TESTS = """
import pytest
from llm import ask

@pytest.mark.vcr
def test_ask():
    assert ask("hello") == "Hi!"

@pytest.mark.vcr
def test_prompt_changed_since_recording():
    assert ask("hello, and be brief") == "Hi!"   # vcrpy ignored the body: stale, still passes

class TestBinary:
    @pytest.mark.vcr(record_mode="none")
    def test_binary_body(self):
        assert ask("binary please") == "Hi!"

@pytest.mark.vcr(record_mode="none")
def test_leftover_marker_without_cassette_never_reaches_the_network():
    ask("nothing recorded")
"""


def _suite(pytester: pytest.Pytester) -> None:
    make_suite(pytester, conftest=CONFTEST, test_chat=TESTS)
    folder = pytester.path / "recordings" / "test_chat"
    folder.mkdir(parents=True)
    (folder / "test_ask.yaml").write_text(_vcr_cassette("hello"))
    (folder / "test_prompt_changed_since_recording.yaml").write_text(_vcr_cassette("hello"))
    (folder / "TestBinary.test_binary_body.yaml").write_text(_vcr_cassette("binary please", binary=True))


def test_a_pytest_recording_suite_runs_unchanged_then_after_migrate(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(pytester)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_leftover_marker_without_cassette_never_reaches_the_network*",
            "*4 test(s) ran from pytest-recording's @pytest.mark.vcr*promptvcr migrate*",
            "*1 of them would change outcome with body matching (1 would miss, 0 would replay another "
            "recording)*test_prompt_changed_since_recording*",
            "*vcr.register_persister(...) is not honoured*",
            "*record mode 'once' is vcrpy's*",
        ]
    )
    assert "does not exist, so nothing can be replayed from it" in result.stdout.str()

    assert main(["migrate", str(pytester.path)]) == 1  # before_record_response and the hook are named
    printed = capsys.readouterr().out
    assert "cassettes: converted 3, 0 already promptvcr" in printed
    assert "conftest.py:8: vcr_config before_record_response: kept, as vcr_style(...)" in printed
    assert "vcr_style(lambda response: response)" in (pytester.path / "conftest.py").read_text()
    assert "pytest_recording_configure: no promptvcr equivalent" in printed
    source = (pytester.path / "test_chat.py").read_text()
    assert "pytest.mark.vcr" not in source and source.count("pytest.mark.promptvcr") == 4
    assert "def promptvcr_config" in (pytester.path / "conftest.py").read_text()
    stored = (pytester.path / "recordings/test_chat/test_ask.yaml").read_text()
    assert "url: https://api.openai.com/v1/chat/completions" in stored and "sk-proj" not in stored

    after = run(pytester, "-p", "no:randomly")
    after.assert_outcomes(passed=3, failed=1)
    assert "ran from pytest-recording's" not in after.stdout.str()

    assert main(["migrate", str(pytester.path)]) == 1  # idempotent: nothing converted again
    again = capsys.readouterr().out
    assert "cassettes: converted 0, 3 already promptvcr" in again and "source: 0 change(s)" in again


def test_vcrpy_mode_names_on_the_command_line_and_in_promptvcr_config(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        conftest="""
        import pytest

        @pytest.fixture
        def promptvcr_config():
            return {"record_mode": "none"}
        """,
        test_modes="""
        import pytest

        @pytest.mark.promptvcr
        def test_mode(cassette):
            assert cassette.record_mode.value == EXPECTED
        """,
    )
    test_file = pytester.path / "test_modes.py"
    text = test_file.read_text()
    test_file.write_text(text.replace("EXPECTED", "'replay'"))
    run(pytester).assert_outcomes(passed=1)
    test_file.write_text(text.replace("EXPECTED", "'rewrite'"))
    result = run(pytester, "--record-mode=all")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["promptvcr: record mode 'all' is vcrpy's name for promptvcr's 'rewrite'."])
    cassette = pytester.path / "cassettes/test_modes/test_mode.yaml"
    assert cassette.exists()  # rewrite wrote it
    run(pytester, "--record-mode=once").assert_outcomes(failed=1)  # once, with a cassette: replay
    cassette.unlink()
    test_file.write_text(text.replace("EXPECTED", "'record'"))  # once, with no cassette yet: record
    run(pytester, "--record-mode=once").assert_outcomes(passed=1)


FAKE_RECORDING = """
import pytest

def pytest_addoption(parser):
    group = parser.getgroup("recording")
    group.addoption("--record-mode", action="store", default=None,
                    choices=("once", "new_episodes", "none", "all", "rewrite"))
    group.addoption("--block-network", action="store_true", default=False)
    group.addoption("--allowed-hosts", action="store", default=None)

def pytest_configure(config):
    config.addinivalue_line("markers", "vcr: Mark the test as using VCR.py.")
"""


def _install_fake_recording(root: Path) -> Path:
    """pytest-recording's option definitions under its name and entry point (the conflict itself)."""
    site = root / "site"
    (site / "pytest_recording").mkdir(parents=True)
    (site / "pytest_recording" / "__init__.py").write_text("")
    (site / "pytest_recording" / "plugin.py").write_text(textwrap.dedent(FAKE_RECORDING))
    info = site / "pytest_recording-0.14.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest-recording\nVersion: 0.14.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nrecording = pytest_recording.plugin\n")
    return site


def test_both_plugins_installed_pytest_starts_and_says_which_is_active(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _install_fake_recording(pytester.path)
    monkeypatch.setenv("PYTHONPATH", str(site))
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    both = pytester.runpytest_subprocess(*QUIET, "--record-mode=none")
    both.assert_outcomes(passed=1)
    both.stdout.fnmatch_lines(["*pytest-recording installed too*-p no:recording or -p no:promptvcr*"])
    ours = pytester.runpytest_subprocess(*QUIET, "-p", "no:recording", "--record-mode=record")
    ours.assert_outcomes(passed=1)
    assert "installed too" not in ours.stdout.str()
    theirs = pytester.runpytest_subprocess(*QUIET, "-p", "no:promptvcr", "--record-mode=all")
    theirs.assert_outcomes(passed=1)


def test_record_hooks_edit_and_drop_before_writing_in_both_styles(pytester: pytest.Pytester) -> None:
    """promptvcr's hooks get promptvcr's values; vcr_config's (vcrpy's) get vcrpy's; both write."""
    from fake_provider import FakeProvider

    with FakeProvider() as fake:
        make_suite(
            pytester,
            conftest="""
            import dataclasses, json
            import pytest

            def trim(response):  # promptvcr style: a Response in, a Response (or None) out
                body = json.loads(b"".join(response.chunks))
                body["choices"][0]["message"]["content"] = "trimmed"
                return dataclasses.replace(response, chunks=[json.dumps(body).encode()])

            def skip_secret_prompt(request):
                return None if b"do not record" in request.content else request

            @pytest.fixture
            def promptvcr_config():
                return {"before_record_response": trim, "before_record_request": skip_secret_prompt}

            def vcr_trim(response):  # vcrpy style: a dict with body.string
                body = json.loads(response["body"]["string"])
                body["choices"][0]["message"]["content"] = "vcr-trimmed"
                response["body"]["string"] = json.dumps(body).encode()
                return response

            @pytest.fixture
            def vcr_config():
                return {"before_record_response": vcr_trim, "record_mode": "new_episodes"}
            """,
            test_app=f"""
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_ours():
                assert ask("hello", base_url="{fake.openai_base_url}")
                assert ask("do not record this", base_url="{fake.openai_base_url}")

            @pytest.mark.vcr
            def test_theirs():
                assert ask("hello", base_url="{fake.openai_base_url}")
            """,
        )
        run(pytester, "--record-mode=record").assert_outcomes(passed=2)
    ours = (pytester.path / "cassettes/test_app/test_ours.yaml").read_text()
    assert "content: trimmed" in ours and "do not record" not in ours and ours.count("- request:") == 1
    theirs = (pytester.path / "cassettes/test_app/test_theirs.yaml").read_text()
    assert "content: vcr-trimmed" in theirs


def test_the_record_mode_flag_reaches_an_explicit_use_cassette(pytester: pytest.Pytester) -> None:
    from fake_provider import FakeProvider

    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import promptvcr
            from llm import ask

            def test_explicit():
                with promptvcr.use_cassette("explicit.yaml") as cassette:
                    assert ask("hello", base_url="{fake.openai_base_url}")
                assert [play.outcome for play in cassette.played] == ["recorded"]
            """,
        )
        run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    assert "content: hello" in (pytester.path / "explicit.yaml").read_text()


def test_a_record_run_has_no_replayed_tokens_line(pytester: pytest.Pytester) -> None:
    from fake_provider import FakeProvider

    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_hello():
                assert ask("hello", base_url="{fake.openai_base_url}")
            """,
        )
        recorded = run(pytester, "--record-mode=record")
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines(["tokens recorded: *, spent on this run"])
    assert "tokens replayed" not in recorded.stdout.str()
    replayed = run(pytester)
    replayed.stdout.fnmatch_lines(["tokens replayed: *, not spent on this run"])


def test_rerecord_in_one_step_records_what_missed_and_drops_what_is_no_longer_sent(
    pytester: pytest.Pytester,
) -> None:
    from fake_provider import FakeProvider
    from plugin_suites import chat, write_cassette

    cassette = write_cassette(
        pytester.path / "cassettes/test_app/test_prompt.yaml", chat("kept", "Hi!"), chat("old prompt", "Old!")
    )
    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_prompt(cassette):
                base = "{fake.openai_base_url}"
                ask("kept", base_url=base)
                ask("new prompt", base_url=base)
            """,
        )
        result = run(pytester, "--record-mode=record", "--cassette-unused=drop", "-W", "error")
        result.assert_outcomes(passed=1)
        assert len(fake.requests) == 1  # only the new prompt went to the provider
    text = cassette.read_text()
    assert "content: kept" in text and "new prompt" in text and "old prompt" not in text
    assert text.count("- request:") == 2
    run(pytester, "--cassette-unused=fail").assert_outcomes(passed=1)  # nothing stale is left


def test_extra_cassettes_of_the_marker_and_default_cassette_are_honoured(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_extra="""
        import pytest
        from llm import ask

        @pytest.mark.vcr("shared.yaml")
        def test_own_and_shared():
            assert ask("own") == "Hi!"
            assert ask("shared") == "Hi!"

        @pytest.mark.default_cassette("renamed")
        @pytest.mark.vcr
        def test_renamed():
            assert ask("renamed") == "Hi!"
        """,
    )
    folder = pytester.path / "cassettes" / "test_extra"
    folder.mkdir(parents=True)
    (folder / "test_own_and_shared.yaml").write_text(_vcr_cassette("own"))
    (folder / "shared.yaml").write_text(_vcr_cassette("shared", binary=True))
    (folder / "renamed.yaml").write_text(_vcr_cassette("renamed"))
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)
    assert (
        (folder / "shared.yaml").read_text().startswith("interactions:\n- request:\n    body:")
    )  # untouched

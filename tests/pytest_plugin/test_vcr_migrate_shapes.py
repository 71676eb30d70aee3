"""Shapes of real pytest-recording suites met while migrating one: a ``vcr_config`` without
``match_on`` (vcrpy's default never compared bodies), parametrized tests whose cassette names
pytest-recording chose differently from promptvcr, and a miss raised beside pytest-recording,
where ``--record-mode`` is not promptvcr's."""

from __future__ import annotations

import json
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
from plugin_suites import QUIET, chat, make_suite, run

from promptvcr.cli import main
from promptvcr.matching import diagnose
from promptvcr.policies import staleness
from promptvcr.policies.modes import ENV_PYTEST_RECORD_FLAG
from promptvcr.pytest_plugin.naming import cassette_file_name, recording_file_name


def _vcr_cassette(question: str, answer: str = "Hi!") -> str:
    """One chat interaction as vcrpy writes it (list-valued headers, a string body)."""
    interaction = chat(question, answer)
    request, response = interaction["request"]["json"], interaction["response"]["json"]
    return (
        "interactions:\n- request:\n"
        f"    body: {json.dumps(json.dumps(request))}\n"
        "    headers:\n      Content-Type: [application/json]\n"
        "    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
        "  response:\n    body:\n"
        f"      string: {json.dumps(json.dumps(response))}\n"
        "    headers:\n      Content-Type: [application/json]\n"
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )


NO_MATCH_ON = """
import pytest

@pytest.fixture(scope="module")
def vcr_config():
    return {"filter_headers": ["authorization"]}
"""

STALE = """
import pytest
from llm import ask

@pytest.mark.vcr
def test_fresh():
    assert ask("hello") == "Hi!"

@pytest.mark.vcr
def test_prompt_changed():
    assert ask("hello, in French") == "Hi!"   # recorded with "hello": vcrpy never looked
"""


def test_migrate_keeps_vcrpys_default_matching_and_the_stale_cassettes_stay_named(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite(pytester, conftest=NO_MATCH_ON, test_chat=STALE)
    folder = pytester.path / "cassettes" / "test_chat"
    folder.mkdir(parents=True)
    for name in ("test_fresh", "test_prompt_changed"):
        (folder / f"{name}.yaml").write_text(_vcr_cassette("hello"))
    before = run(pytester, "-p", "no:randomly")
    before.assert_outcomes(passed=2)
    before.stdout.fnmatch_lines(
        [
            "*1 of them would change outcome with body matching (1 would miss, 0 would replay another "
            "recording)*test_chat.py::test_prompt_changed"
        ]
    )

    assert main(["migrate", str(pytester.path)]) == 0
    printed = capsys.readouterr().out
    assert "vcr_config has no match_on: vcrpy's default, which never compared bodies, is kept" in printed
    conftest = (pytester.path / "conftest.py").read_text()
    rule = '"rules": match_on_rules(["method", "scheme", "host", "port", "path", "query"])'
    assert f"return {{{rule}}}" in conftest and "filter_headers" not in conftest

    after = run(pytester, "-p", "no:randomly")
    after.assert_outcomes(passed=2)  # no edit by hand: the suite passes as it did
    after.stdout.fnmatch_lines(
        [
            "*1 test(s) matching like vcrpy (match_on_rules, no bodies) would change outcome with body "
            "matching (1 would miss*::test_prompt_changed"
        ]
    )
    assert "ran from pytest-recording's" not in after.stdout.str()

    # Dropping the rule compares bodies: the stale cassette misses, naming what changed.
    (pytester.path / "conftest.py").write_text(conftest.replace(rule, ""))
    strict = run(pytester, "-p", "no:randomly")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(["*hello*hello, in French*"])

    assert main(["migrate", str(pytester.path)]) == 0  # nothing left to migrate: nothing added back
    assert "source: 0 change(s)" in capsys.readouterr().out


OLDER_FIRST = """
import pytest
from llm import ask

@pytest.mark.vcr
def test_fresh():
    assert ask("hello") == "Hi!"

@pytest.mark.vcr
def test_older_body_served():
    assert ask("hello, in French") == "Hi!"   # vcrpy served the first recording of the URL
"""


def test_the_preview_counts_a_test_served_an_older_recording_not_only_misses(
    pytester: pytest.Pytester,
) -> None:
    """Both bodies are recorded, the older one first: vcrpy's matching serves it to the newer
    question. Body matching would serve the other one, which is no miss but another outcome."""
    make_suite(pytester, conftest=NO_MATCH_ON, test_chat=OLDER_FIRST)
    folder = pytester.path / "cassettes" / "test_chat"
    folder.mkdir(parents=True)
    (folder / "test_fresh.yaml").write_text(_vcr_cassette("hello"))
    older, newer = _vcr_cassette("hello"), _vcr_cassette("hello, in French", "Bonjour!")
    both = older.removesuffix("version: 1\n") + newer.removeprefix("interactions:\n")
    (folder / "test_older_body_served.yaml").write_text(both)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*1 of them would change outcome with body matching (0 would miss, 1 would replay another "
            "recording)*: test_chat.py::test_older_body_served"
        ]
    )


PARAMETRIZED = """
import pytest
from llm import ask

QUESTIONS = ["hello world", "what: now?", "#1 & more", "long " + "x" * 120]

@pytest.mark.vcr
@pytest.mark.parametrize("question", QUESTIONS, ids=QUESTIONS)  # a long id as well
def test_ask(question):
    assert ask(question) == "Hi!"

class TestNested:
    class TestInner:
        @pytest.mark.vcr
        @pytest.mark.parametrize("question", ["a b"])
        def test_ask(self, question):
            assert ask(question) == "Hi!"
"""


def test_parametrized_cassettes_keep_pytest_recordings_names_through_migrate(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = ["hello world", "what: now?", "#1 & more", "long " + "x" * 120]
    make_suite(pytester, test_params=PARAMETRIZED)
    folder = pytester.path / "cassettes" / "test_params"
    folder.mkdir(parents=True)
    named = {recording_file_name(f"test_ask[{q}]"): q for q in questions}
    named[recording_file_name("test_ask[a b]", ["TestNested", "TestInner"])] = "a b"
    for name, question in named.items():
        (folder / f"{name}.yaml").write_text(_vcr_cassette(question))
    # Each differs from promptvcr's own name: the files keep pytest-recording's.
    assert "test_ask[what- now-]" in named and "TestInner.test_ask[a b]" in named
    assert all(cassette_file_name(f"test_ask[{q}]") not in named for q in questions)

    run(pytester, "-p", "no:randomly").assert_outcomes(passed=5)
    assert main(["migrate", str(pytester.path)]) == 0
    capsys.readouterr()
    assert sorted(path.stem for path in folder.iterdir()) == sorted(named)  # nothing renamed
    after = run(pytester, "-p", "no:randomly")
    after.assert_outcomes(passed=5)
    after.stdout.fnmatch_lines(["*requests: 5 replayed, 0 recorded, 0 missed*"])

    # A test recorded from now on gets promptvcr's name, beside the migrated ones.
    (folder / f"{recording_file_name('test_ask[hello world]')}.yaml").rename(
        folder / f"{cassette_file_name('test_ask[hello world]')}.yaml"
    )
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=5)


FAKE_RECORDING = """
def pytest_addoption(parser):
    group = parser.getgroup("recording")
    group.addoption("--record-mode", default=None, choices=("once", "new_episodes", "none", "all", "rewrite"))
    group.addoption("--block-network", action="store_true", default=False)
    group.addoption("--allowed-hosts", default=None)

def pytest_configure(config):
    config.addinivalue_line("markers", "vcr: pytest-recording's marker")
"""

MISSING = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_not_recorded():
    ask("nothing recorded for this")
"""


def test_a_miss_names_the_record_option_that_works_in_that_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite(pytester, test_missing=MISSING)
    alone = pytester.runpytest_subprocess(*QUIET, "-p", "no:randomly")
    alone.assert_outcomes(failed=1)
    alone.stdout.fnmatch_lines(["*(pytest: --record-mode=record)*"])

    site = pytester.path / "site"
    (site / "pytest_recording").mkdir(parents=True)
    (site / "pytest_recording" / "__init__.py").write_text("")
    (site / "pytest_recording" / "plugin.py").write_text(textwrap.dedent(FAKE_RECORDING))
    info = site / "pytest_recording-0.14.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest-recording\nVersion: 0.14.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nrecording = pytest_recording.plugin\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    beside = pytester.runpytest_subprocess(*QUIET, "-p", "no:randomly")
    beside.assert_outcomes(failed=1)
    beside.stdout.fnmatch_lines(["*(pytest: --promptvcr-record-mode=record)*"])
    assert "--record-mode=record" not in beside.stdout.str().replace("--promptvcr-record-mode", "")
    # The option it names is one pytest accepts there.
    (Path(pytester.path) / "cassettes").mkdir(exist_ok=True)
    pytester.runpytest_subprocess(
        *QUIET, "-p", "no:randomly", "--promptvcr-record-mode=replay"
    ).assert_outcomes(failed=1)


def test_the_hints_read_the_option_the_plugin_exported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stale = staleness.Staleness(tmp_path / "c.yaml", timedelta(days=1), 1, 1, 0, timedelta(days=3))
    monkeypatch.delenv(ENV_PYTEST_RECORD_FLAG, raising=False)
    assert diagnose.record_hint().endswith("(pytest: --record-mode=record).")
    assert "python -m pytest --record-mode=rewrite" in stale.message("")
    monkeypatch.setenv(ENV_PYTEST_RECORD_FLAG, "--promptvcr-record-mode")
    assert diagnose.record_hint().endswith("(pytest: --promptvcr-record-mode=record).")
    assert "python -m pytest --promptvcr-record-mode=rewrite" in stale.message("")


def test_migrate_names_a_default_cassette_marker_it_cannot_carry_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "import pytest\n\n\n"
        '@pytest.mark.default_cassette("shared")\n'
        "@pytest.mark.vcr\n"
        "def test_renamed():\n"
        "    pass\n"
    )
    (tmp_path / "test_named.py").write_text(source)
    assert main(["migrate", str(tmp_path)]) == 1
    printed = capsys.readouterr().out
    assert "test_named.py:4: @pytest.mark.default_cassette: name the file in the promptvcr marker" in printed
    assert "test_named.py:5: pytest.mark.vcr -> pytest.mark.promptvcr" in printed


def test_a_suite_without_vcr_config_passes_after_migrate_as_it_did(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 53: a suite with no ``vcr_config`` matched by vcrpy's default (never bodies);
    migrate writes that default out, so the suite passes as it did, and says so."""
    make_suite(pytester, test_chat=STALE)
    folder = pytester.path / "cassettes" / "test_chat"
    folder.mkdir(parents=True)
    for name in ("test_fresh", "test_prompt_changed"):
        (folder / f"{name}.yaml").write_text(_vcr_cassette("hello"))
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)

    assert main(["migrate", str(pytester.path)]) == 0
    printed = capsys.readouterr().out
    assert "the suite had no vcr_config: vcrpy's default matching (never bodies) written out" in printed
    assert "nothing left to do by hand" in printed
    conftest = (pytester.path / "conftest.py").read_text()
    assert 'match_on_rules(["method", "scheme", "host", "port", "path", "query"])' in conftest

    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)  # as it did, no edit by hand
    assert main(["migrate", str(pytester.path)]) == 0  # twice: nothing more
    assert (pytester.path / "conftest.py").read_text() == conftest

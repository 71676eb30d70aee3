"""``promptvcr prune`` judges "the whole suite" by what the run collected, not by its command line.

Prune deletes only below the folders whose tests ran, so a run covers the whole suite when
every test file there was collected: the only test file given by name is the whole suite,
and so is a ``-k`` that deselected nothing. A test file left out, even one folder down, is not.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.cli import main

SUITE = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_hello():
    assert ask("hello") == "Hi!"
"""

HELPERS = "def helper():\n    return 1\n"  # matches no python_files pattern: not a test file


@pytest.fixture
def one_file_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One test file, one unused cassette beside the used one, and an unused interaction."""
    monkeypatch.setenv("COLUMNS", "200")
    make_suite(pytester, test_app=SUITE, helpers=HELPERS)
    root = pytester.path
    write_cassette(root / "cassettes/test_app/test_hello.yaml", chat("hello", "Hi!"), chat("bye", "Bye!"))
    write_cassette(root / "cassettes/test_app/test_gone.yaml", chat("gone", "Long gone"))
    an_hour_ago = time.time() - 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    return root


def _prune(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["prune", "--dry-run"])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [("test_app.py",), ("-k", "hello"), ("test_app.py", "-n", "2")],
    ids=["the only test file by name", "-k deselecting nothing", "the only file under xdist"],
)
def test_a_run_that_collected_every_test_file_is_the_whole_suite(
    pytester: pytest.Pytester,
    one_file_suite: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
) -> None:
    run(pytester, *args, "--cassette-unused=ignore").assert_outcomes(passed=1)
    code, out = _prune(capsys)
    assert code == 0, out
    assert "kept cassettes/test_app/test_gone.yaml: no test of the run used it" in out
    assert "would remove interactions[1] from cassettes/test_app/test_hello.yaml" in out


def test_a_test_file_one_folder_down_that_did_not_run_makes_the_run_partial(
    pytester: pytest.Pytester, one_file_suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (one_file_suite / "more").mkdir()
    (one_file_suite / "more" / "test_more.py").write_text("def test_more():\n    pass\n")
    run(pytester, "test_app.py", "--cassette-unused=ignore").assert_outcomes(passed=1)
    code, out = _prune(capsys)
    assert code == 1
    assert f"(it ran only test_app.py, not {os.path.join('more', 'test_more.py')})" in out
    # Given too, it is collected: the whole suite again.
    run(pytester, "test_app.py", "more/test_more.py", "--cassette-unused=ignore").assert_outcomes(passed=2)
    assert _prune(capsys)[0] == 0


def test_folders_pytest_never_collects_and_ignored_files(
    pytester: pytest.Pytester, one_file_suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # norecursedirs (a dot folder, build) and collect_ignore are not part of the suite...
    for folder in (".hidden", "build"):
        (one_file_suite / folder).mkdir()
        (one_file_suite / folder / "test_never.py").write_text("def test_never():\n    pass\n")
    (one_file_suite / "test_scratch.py").write_text("def test_scratch():\n    pass\n")
    (one_file_suite / "conftest.py").write_text('collect_ignore = ["test_scratch.py"]\n')
    run(pytester, "test_app.py", "--cassette-unused=ignore").assert_outcomes(passed=1)
    assert _prune(capsys)[0] == 0
    # ... but a file left out on the command line is.
    run(pytester, "--ignore=test_app.py").assert_outcomes()
    code, out = _prune(capsys)
    assert code == 1 and "(test files were left out (--ignore);" in out


SHARED = """
import pytest
from llm import ask

@pytest.mark.promptvcr("shared.yaml")
def test_hello():
    assert ask("hello") == "Hi!"

@pytest.mark.skip(reason="this test is skipped on purpose: prune must keep the answer it needs")
@pytest.mark.promptvcr("shared.yaml")
def test_bye():
    assert ask("bye") == "Bye!"
"""


def test_a_skipped_test_keeps_the_interactions_it_shares_a_cassette_for(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite(pytester, test_shared=SHARED)
    cassette = write_cassette(pytester.path / "shared.yaml", chat("hello", "Hi!"), chat("bye", "Bye!"))
    an_hour_ago = time.time() - 3600
    os.utime(cassette, (an_hour_ago, an_hour_ago))
    run(pytester, "--cassette-unused=ignore").assert_outcomes(passed=1, skipped=1)
    code, out = _prune(capsys)
    assert code == 0
    assert "interactions[1]" not in out  # test_bye's answer: it did not run, it may need it

"""``promptvcr prune`` on the usage record a real pytest run wrote, and ``--drift-report``.

Each test runs a small suite through pytester (the plugin as users meet it: marker, direct
``use_cassette``, skipped tests, pytest-xdist), then prunes what that run did not use.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.cli import main
from promptvcr.files import fileformat

SUITE = """
import pytest
import promptvcr
from llm import ask

@pytest.mark.promptvcr
def test_hello():
    assert ask("hello") == "Hi!"

def test_direct():
    with promptvcr.use_cassette("data/direct.yaml"):
        assert ask("direct") == "Yes"
"""

LATER = """
import pytest

@pytest.mark.skip(reason="not yet")
@pytest.mark.promptvcr
def test_skipped():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite whose run leaves one cassette and one interaction unused, and others to keep."""
    monkeypatch.setenv("COLUMNS", "200")
    make_suite(pytester, test_app=SUITE, test_later=LATER)
    root = pytester.path
    write_cassette(root / "cassettes/test_app/test_hello.yaml", chat("hello", "Hi!"), chat("bye", "Bye!"))
    write_cassette(root / "cassettes/test_app/test_gone.yaml", chat("gone", "Long gone"))
    write_cassette(root / "data/direct.yaml", chat("direct", "Yes"))
    write_cassette(root / "cassettes/test_later/test_skipped.yaml", chat("later", "Later"))
    (root / "data/notes.yaml").write_text("not: a cassette\n", encoding="utf-8")
    an_hour_ago = time.time() - 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (an_hour_ago, an_hour_ago))
    return root


def prune(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["prune", *args])
    return code, capsys.readouterr().out


def _count(path: Path) -> int:
    return len(fileformat.loads(path.read_text(encoding="utf-8"), path))


DRY_RUN = (
    "would remove interactions[1] from cassettes/test_app/test_hello.yaml (no test played them)\n"
    "kept cassettes/test_app/test_gone.yaml: no test of the run used it (a script's?); name it to remove it\n"
    "kept cassettes/test_later/test_skipped.yaml: a skipped test's, which may need it\n"
    "0 cassette(s) and 1 interaction(s) would be removed; 2 cassette(s) no test used kept (listed above); "
    "run without --dry-run to remove them.\n"
)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_prune_removes_only_what_the_whole_run_did_not_use(
    pytester: pytest.Pytester, suite: Path, capsys: pytest.CaptureFixture[str], workers: tuple[str, ...]
) -> None:
    run(pytester, *workers, "--cassette-unused=ignore").assert_outcomes(passed=2, skipped=1)
    capsys.readouterr()
    before = {path: path.read_bytes() for path in suite.rglob("*.yaml")}

    assert prune(capsys, "--dry-run") == (0, DRY_RUN)
    assert {path: path.read_bytes() for path in suite.rglob("*.yaml")} == before  # a dry run touches nothing

    code, out = prune(capsys)
    assert code == 0
    assert out == DRY_RUN.replace("would remove", "removed").replace("would be removed", "removed").replace(
        "; run without --dry-run to remove them", ""
    )
    # A whole cassette no test used goes only when named (issue 42: a script may be its user).
    assert (suite / "cassettes/test_app/test_gone.yaml").read_bytes() == before[
        suite / "cassettes/test_app/test_gone.yaml"
    ]
    assert _count(suite / "cassettes/test_app/test_hello.yaml") == 1
    # Used directly, owned by a skipped test, or not a cassette: all kept as they were.
    for kept in ("data/direct.yaml", "cassettes/test_later/test_skipped.yaml", "data/notes.yaml"):
        assert (suite / kept).read_bytes() == before[suite / kept]
    code, out = prune(capsys, "cassettes/test_app/test_gone.yaml", "cassettes/test_later/test_skipped.yaml")
    assert code == 0
    assert "removed cassettes/test_app/test_gone.yaml (named here, and no test used it)" in out
    assert not (suite / "cassettes/test_app/test_gone.yaml").exists()
    assert (suite / "cassettes/test_later/test_skipped.yaml").exists()  # a skipped test's: never
    run(pytester, *workers).assert_outcomes(passed=2, skipped=1)  # the pruned suite still replays


def test_prune_refuses_without_a_usage_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = prune(capsys, str(tmp_path), "--record", str(tmp_path / "usage.json"))
    assert code == 1
    assert out == (
        f"promptvcr prune: There is no usage record at {tmp_path / 'usage.json'}. "
        "Run the whole test suite once (pytest, with no -k, -m or paths); it writes the record.\n"
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("-k", "hello"), "tests were deselected (-k, -m, --deselect or --lf)"),
        (("test_app.py",), "it ran only test_app.py, not test_later.py"),
        (("test_app.py::test_hello",), "it ran only test_app.py::test_hello"),
    ],
)
def test_prune_refuses_after_a_partial_run(
    pytester: pytest.Pytester,
    suite: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    reason: str,
) -> None:
    run(pytester, *args)
    capsys.readouterr()
    before = {path: path.read_bytes() for path in suite.rglob("*.yaml")}
    code, out = prune(capsys)
    assert code == 1
    assert out == (
        f"promptvcr prune: The last test run did not cover the whole suite ({reason}), "
        "so it cannot show what is unused. "
        "Run the whole test suite (pytest, no -k, -m or single files), then prune.\n"
    )
    assert {path: path.read_bytes() for path in suite.rglob("*.yaml")} == before


def test_prune_refuses_after_a_failing_run(
    pytester: pytest.Pytester, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_cassette(suite / "data/direct.yaml", chat("direct", "No"))  # test_direct now fails
    run(pytester).assert_outcomes(passed=1, failed=1, skipped=1)
    capsys.readouterr()
    code, out = prune(capsys)
    assert code == 1
    assert "(tests failed)" in out
    assert (suite / "cassettes/test_app/test_gone.yaml").exists()


def test_prune_refuses_when_a_cassette_is_newer_than_the_record(
    pytester: pytest.Pytester, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(pytester).assert_outcomes(passed=2, skipped=1)
    capsys.readouterr()
    later = time.time() + 60
    os.utime(suite / "cassettes/test_app/test_hello.yaml", (later, later))
    code, out = prune(capsys)
    assert code == 1
    assert out == (
        "promptvcr prune: cassettes/test_app/test_hello.yaml changed after the last test run, so the usage "
        "record is out of date. Run the whole test suite (pytest, no -k, -m or single files), then prune.\n"
    )
    assert (suite / "cassettes/test_app/test_gone.yaml").exists()


def test_prune_keeps_cassettes_outside_the_folders_whose_tests_ran(
    pytester: pytest.Pytester, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (suite / "tests").mkdir()
    for name in ("test_app.py", "test_later.py", "llm.py"):
        (suite / name).rename(suite / "tests" / name)
    (suite / "tests/conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
    )
    (suite / "cassettes").rename(suite / "tests/cassettes")
    orphan = write_cassette(suite / "fixtures/orphan.yaml", chat("orphan", "No test runs from here"))
    os.utime(orphan, (time.time() - 60, time.time() - 60))
    run(pytester, "tests").assert_outcomes(passed=2, skipped=1)
    capsys.readouterr()
    code, out = prune(capsys, "--dry-run")
    assert code == 0
    assert out.startswith(
        "would remove interactions[1] from tests/cassettes/test_app/test_hello.yaml (no test played them)\n"
    )
    assert "kept fixtures/orphan.yaml: no test of the run used it" in out
    assert "kept tests/cassettes/test_app/test_gone.yaml: no test of the run used it" in out
    assert out.endswith(
        "0 cassette(s) and 1 interaction(s) would be removed; "
        "3 cassette(s) no test used kept (listed above); "
        "run without --dry-run to remove them.\n"
    )


EARLY_STOP = """
import pytest
import promptvcr
from llm import ask

@pytest.fixture
def promptvcr_config():
    return {"cassette_dir": "recordings"}

@pytest.mark.xfail(reason="the second answer is wrong", strict=True)
def test_stops_early():
    with promptvcr.use_cassette("data/three.yaml"):
        assert ask("one") == "1"
        assert ask("two") == "not 2"
        assert ask("three") == "3"

@pytest.mark.skip(reason="later")
@pytest.mark.promptvcr
def test_later():
    pass
"""


def test_prune_keeps_what_tests_that_did_not_pass_may_need(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An xfailed test stopped before its last interaction; a skipped test's folder came from a fixture."""
    monkeypatch.setenv("COLUMNS", "200")
    make_suite(pytester, test_mod=EARLY_STOP)
    three = write_cassette(
        pytester.path / "data/three.yaml", chat("one", "1"), chat("two", "2"), chat("three", "3")
    )
    later = write_cassette(pytester.path / "recordings/test_mod/test_later.yaml", chat("later", "Later"))
    for path in (three, later):
        os.utime(path, (time.time() - 60, time.time() - 60))
    run(pytester, "--cassette-unused=ignore").assert_outcomes(xfailed=1, skipped=1)
    capsys.readouterr()
    code, out = prune(capsys)
    assert code == 0
    assert out == (
        "kept recordings/test_mod/test_later.yaml: a skipped test's, which may need it\n"
        "0 cassette(s) and 0 interaction(s) removed; 1 cassette(s) no test used kept (listed above).\n"
    )
    assert _count(three) == 3
    assert later.exists()


def test_prune_wants_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = prune(capsys, str(tmp_path / "nowhere"))
    assert code == 1
    assert (
        out == f"promptvcr prune: no such file or folder: {tmp_path / 'nowhere'}; give the folder of your "
        "cassettes, or cassette files.\n"
    )

"""A suite split in shards prunes exactly what one whole run prunes.

Six tests in two files; a cassette shared by tests of different shards (each plays one of
its interactions), cassettes with an interaction no test plays, and one no test opens. The
suite runs whole in one folder and in three shards, each a separate pytest process in its own
folder (as on three CI machines); prune then runs in a fresh checkout (new file times) on
the three shards' records, given as a folder: it plans and removes exactly what the whole run
does. Two shards' records of three are refused, naming the tests no shard ran.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugin_suites import QUIET, chat, make_suite, run, write_cassette

from promptvcr.cli import main

FIRST = """
import pytest
from llm import ask

@pytest.mark.promptvcr("cassettes/shared.yaml")
def test_one():
    assert ask("one") == "1"

@pytest.mark.promptvcr
def test_two():
    assert ask("two") == "2"

@pytest.mark.promptvcr
def test_three():
    assert ask("three") == "3"
"""

SECOND = """
import pytest
from llm import ask

@pytest.mark.promptvcr("cassettes/shared.yaml")
def test_four():
    assert ask("four") == "4"

@pytest.mark.promptvcr
def test_five():
    assert ask("five") == "5"

@pytest.mark.promptvcr
def test_six():
    assert ask("six") == "6"
"""

SHARDS = [
    ["test_first.py::test_one", "test_first.py::test_two"],
    ["test_first.py::test_three", "test_second.py::test_four"],
    ["test_second.py::test_five", "test_second.py::test_six"],
]


def _suite(root: Path) -> None:
    write_cassette(root / "cassettes/shared.yaml", chat("one", "1"), chat("four", "4"), chat("old", "x"))
    write_cassette(root / "cassettes/test_first/test_two.yaml", chat("two", "2"), chat("stale", "s"))
    write_cassette(root / "cassettes/test_first/test_three.yaml", chat("three", "3"))
    write_cassette(root / "cassettes/test_second/test_five.yaml", chat("gone", "g"), chat("five", "5"))
    write_cassette(root / "cassettes/test_second/test_six.yaml", chat("six", "6"))
    write_cassette(root / "cassettes/test_second/test_seven.yaml", chat("seven", "7"))  # no test
    an_hour_ago = time.time() - 3600
    for path in root.rglob("*.yaml"):
        os.utime(path, (an_hour_ago, an_hour_ago))


def _pytest(folder: Path, *args: str) -> None:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        *QUIET,
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        *args,
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300, env=os.environ)
    assert done.returncode == 0, done.stdout + done.stderr


def _prune(folder: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        capsys.readouterr()
        code = main(["prune", *args])
        return code, capsys.readouterr().out
    finally:
        os.chdir(before)


def _cassettes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*.yaml"))}


def test_three_shards_prune_exactly_what_one_whole_run_prunes(
    pytester: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite(pytester, test_first=FIRST, test_second=SECOND)
    _suite(pytester.path)
    folders = {name: tmp_path / name for name in ("shard1", "shard2", "shard3")}
    for folder in folders.values():
        shutil.copytree(pytester.path, folder)
    folders["whole"] = pytester.path
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=6)  # the whole suite, in one run
    everything = [test for shard in SHARDS for test in shard]
    for number, tests in enumerate(SHARDS, start=1):
        others = [arg for test in everything if test not in tests for arg in ("--deselect", test)]
        _pytest(folders[f"shard{number}"], f"--promptvcr-shard={number}/3", *others)

    checkout = tmp_path / "checkout"  # a fresh checkout: the same bytes, newer file times
    shutil.copytree(pytester.path, checkout, copy_function=shutil.copyfile)
    records = tmp_path / "records"  # downloaded from the three jobs, outside the cassettes' folders
    records.mkdir()
    for number in (1, 2, 3):
        (shard_record,) = (folders[f"shard{number}"] / ".promptvcr").glob("usage-*.json")
        assert shard_record.name == f"usage-{number}-3.json"
        shutil.copy(shard_record, records)

    whole_code, whole_plan = _prune(folders["whole"], capsys, "--dry-run")
    shards_code, shards_plan = _prune(checkout, capsys, "--dry-run", "--record", str(records))
    assert (whole_code, shards_code) == (0, 0)
    assert shards_plan == whole_plan
    assert (
        "would remove interactions[2] from cassettes/shared.yaml" in whole_plan
    )  # "old": no shard played it
    assert "interactions[0] from cassettes/test_second/test_five.yaml" in whole_plan
    assert "kept cassettes/test_second/test_seven.yaml" in whole_plan

    assert _prune(folders["whole"], capsys)[0] == 0
    assert _prune(checkout, capsys, "--record", str(records))[0] == 0
    assert _cassettes(checkout) == _cassettes(folders["whole"])

    # Two shards of three: the third's tests ran nowhere, so nothing can be judged unused.
    (records / "usage-3-3.json").unlink()
    code, refused = _prune(checkout, capsys, "--dry-run", "--record", str(records))
    assert code == 1
    assert "2 test(s) collected ran in none of the shards given (1/3, 2/3)" in refused
    assert "test_second.py::test_five" in refused and "give every shard's record" in refused
    # A shard's record alone is refused the same way (its split deselected the others).
    code, alone = _prune(checkout, capsys, "--dry-run", "--record", str(records / "usage-1-3.json"))
    assert code == 1 and "4 test(s) collected ran in none of the shards given (1/3)" in alone


def test_prune_without_a_record_but_with_shard_records_says_how_to_use_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".promptvcr").mkdir()
    (tmp_path / ".promptvcr/usage-1-3.json").write_text("{}")
    code, out = _prune(tmp_path, capsys, "--dry-run")
    assert code == 1
    assert "but 1 shard record(s) beside it (usage-1-3.json): prune on them with --record .promptvcr" in out

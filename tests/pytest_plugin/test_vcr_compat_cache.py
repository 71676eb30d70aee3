"""An unmigrated pytest-recording suite converts each vcrpy cassette once per content (issue 48):
a second run replays the kept conversion, and an edited cassette is converted again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plugin_suites import make_suite, run
from test_vcr_compat import _vcr_cassette

from promptvcr.files import cacheowner
from promptvcr.importers import inplace, replaycopy

TESTS = """
import pytest
from llm import ask

@pytest.mark.vcr
def test_hello():
    assert ask("hello") == "Hi!"

@pytest.mark.vcr
def test_other():
    assert ask("other") == "Hi!"
"""


def test_a_second_run_converts_nothing_and_an_edited_cassette_is_converted_again(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(tmp_path / "cache"))
    converted: list[str] = []
    convert = inplace.convert_vcr_file

    def counted(source: Path) -> inplace.FileReport:  # the real conversion, counted
        converted.append(source.name)
        return convert(source)

    monkeypatch.setattr(inplace, "convert_vcr_file", counted)
    make_suite(pytester, test_chat=TESTS)
    folder = pytester.path / "cassettes" / "test_chat"
    folder.mkdir(parents=True)
    (folder / "test_hello.yaml").write_text(_vcr_cassette("hello"))
    (folder / "test_other.yaml").write_text(_vcr_cassette("other"))

    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)
    assert sorted(converted) == ["test_hello.yaml", "test_other.yaml"]
    del converted[:]
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)
    assert converted == []  # both read from the kept conversions

    edited = _vcr_cassette("hello").replace("Hi!", "Bye!")
    (folder / "test_hello.yaml").write_text(edited)
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    assert converted == ["test_hello.yaml"]  # the edited one only, and its new answer replayed
    assert "'Bye!' == 'Hi!'" in result.stdout.str()
    # the vcrpy files are left as they are
    assert (folder / "test_other.yaml").read_text() == _vcr_cassette("other")


def test_a_cassette_already_in_promptvcr_format_is_not_parsed_again(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A vcr-marked test whose cassette a recording converted in place: found to be promptvcr's
    once, then opened as it is without reading its layout again."""
    from plugin_suites import chat, write_cassette

    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(tmp_path / "cache"))
    checked: list[str] = []
    check = inplace.is_promptvcr_file

    def counted(path: Path) -> bool:
        checked.append(path.name)
        return check(path)

    monkeypatch.setattr(inplace, "is_promptvcr_file", counted)
    make_suite(pytester, test_chat=TESTS)
    folder = pytester.path / "cassettes" / "test_chat"
    write_cassette(folder / "test_hello.yaml", chat("hello", "Hi!"))
    write_cassette(folder / "test_other.yaml", chat("other", "Hi!"))
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)
    assert sorted(checked) == ["test_hello.yaml", "test_other.yaml"]
    del checked[:]
    run(pytester, "-p", "no:randomly").assert_outcomes(passed=2)
    assert checked == []


def _converted(tmp_path: Path, questions: list[str]) -> list[Path]:
    """Each question's vcrpy cassette, converted for replay through the kept-copy cache."""
    copies = []
    for question in questions:
        source = tmp_path / "suite" / f"test_{question}.yaml"
        source.parent.mkdir(exist_ok=True)
        source.write_text(_vcr_cassette(question))
        copy = replaycopy.replay_copy(source, [source], lambda: tmp_path / "scratch")
        assert copy is not None
        copies.append(copy)
    return copies


def test_the_kept_copies_are_pruned_oldest_first_and_nothing_else_in_the_folder_is_touched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(replaycopy, "MAX_FILES", 2)
    first, second = _converted(tmp_path, ["a", "b"])
    folder = first.parent
    theirs = [folder / "notes.txt", folder / f"{'0' * 32}.yml", folder / f"{'F' * 32}.yaml"]
    for path in theirs:
        path.write_text("not promptvcr's")
    os.utime(first, (1, 1))  # the least recently used
    os.utime(second, (2, 2))
    (third,) = _converted(tmp_path, ["c"])

    assert not first.exists()  # one over the limit: the oldest copy goes
    assert second.exists() and third.exists()
    assert all(path.read_text() == "not promptvcr's" for path in theirs)


def test_a_users_folder_named_as_the_cache_keeps_every_file_of_theirs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    theirs = tmp_path / "downloads"
    (theirs / replaycopy.FOLDER).mkdir(parents=True)
    mine = [theirs / "report.pdf", theirs / replaycopy.FOLDER / f"{'a' * 32}.yaml"]
    for path in mine:
        path.write_text("the user's")
    os.utime(mine[1], (1, 1))
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(theirs))
    monkeypatch.setattr(replaycopy, "MAX_FILES", 1)
    copies = _converted(tmp_path, ["a", "b"])

    assert all(path.read_text() == "the user's" for path in mine)  # named like a copy, yet kept
    assert copies[1].exists() and copies[1].parents[1] == theirs / cacheowner.SUBFOLDER  # its own subfolder

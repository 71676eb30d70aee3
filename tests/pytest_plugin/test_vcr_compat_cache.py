"""An unmigrated pytest-recording suite converts each vcrpy cassette once per content (issue 48):
a second run replays the kept conversion, and an edited cassette is converted again."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_suites import make_suite, run
from test_vcr_compat import _vcr_cassette

from promptvcr.importers import inplace

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

"""From one cassette test to the next, the HTTP patches stay; a test without a cassette never sees them.

The inner suite notes, as each test's setup starts (before any fixture), whether httpx's
client seam is respx's patch or httpx's own method: the patch is entered by the first
cassette and, held, is still there when the next cassette test starts; it is gone before a
plain test and after the run.
"""

from __future__ import annotations

import httpx
import pytest
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.interceptors._compat import CLIENT_TRANSPORT_SEAM

CONFTEST = f"""
import httpx
import pytest

ORIGINAL = httpx.Client.{CLIENT_TRANSPORT_SEAM}
SEEN = []


def patched():
    return httpx.Client.{CLIENT_TRANSPORT_SEAM} is not ORIGINAL


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    SEEN.append((item.name, patched()))


def pytest_sessionfinish(session):
    print("SEEN", SEEN, "AFTER", patched())
"""

TESTS = """
import httpx
import pytest
from conftest import patched
from llm import ask


@pytest.mark.promptvcr
def test_first():
    assert patched() and ask("hello") == "Hi!"


@pytest.mark.promptvcr
def test_second():
    assert patched() and ask("hello") == "Hi!"


def test_plain():
    assert not patched()


def test_third(cassette):
    assert patched() and ask("hello") == "Hi!"
"""


def test_patches_are_held_between_cassette_tests_only(pytester: pytest.Pytester) -> None:
    original = getattr(httpx.Client, CLIENT_TRANSPORT_SEAM)
    make_suite(pytester, conftest=CONFTEST, test_app=TESTS)
    for name in ("test_first", "test_second", "test_third"):
        write_cassette(pytester.path / f"cassettes/test_app/{name}.yaml", chat("hello", "Hi!"))
    result = run(pytester, "-s", "-p", "no:randomly")
    result.assert_outcomes(passed=4)
    seen = [line[line.index("SEEN") :] for line in result.outlines if "SEEN [" in line]
    assert seen == [
        "SEEN [('test_first', False), ('test_second', True), ('test_plain', False), ('test_third', False)] "
        "AFTER False"
    ]
    assert getattr(httpx.Client, CLIENT_TRANSPORT_SEAM) is original


def test_an_interrupted_run_ends_with_nothing_patched(pytester: pytest.Pytester) -> None:
    original = getattr(httpx.Client, CLIENT_TRANSPORT_SEAM)
    make_suite(pytester, conftest=CONFTEST, test_app=TESTS.replace('== "Hi!"\n', '== "Hi!" and False\n', 1))
    for name in ("test_first", "test_second", "test_third"):
        write_cassette(pytester.path / f"cassettes/test_app/{name}.yaml", chat("hello", "Hi!"))
    result = run(pytester, "-s", "-x", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert any(line.endswith("AFTER False") for line in result.outlines)
    assert getattr(httpx.Client, CLIENT_TRANSPORT_SEAM) is original

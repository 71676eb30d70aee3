"""The plugin fails a test with the miss message, whatever the code under test did with the miss.

The inner suites call LangChain's ``ainvoke`` (langchain-openai), which turns a miss into
``AttributeError: 'CassetteMiss' object has no attribute 'generations'``, and code that
swallows the miss and passes. A test that expects a miss around its own cassette passes.
"""

from __future__ import annotations

import pytest
from plugin_suites import make_suite, run, write_cassette

LANGCHAIN_TESTS = """
import asyncio

import pytest
from langchain_openai import ChatOpenAI

import promptvcr


def ainvoke(text):
    llm = ChatOpenAI(model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="sk-test", max_retries=0)
    return asyncio.run(llm.ainvoke(text)).content


@pytest.mark.promptvcr
def test_fixture_cassette():
    ainvoke("never recorded, fixture")


def test_own_cassette(tmp_path):
    with promptvcr.use_cassette(tmp_path / "empty.yaml"):
        ainvoke("never recorded, own cassette")


@pytest.mark.promptvcr
def test_swallowed():
    try:
        ainvoke("never recorded, swallowed")
    except AttributeError:
        pass  # the application shrugs


def test_expected_miss(tmp_path):
    with pytest.raises(promptvcr.CassetteMiss), promptvcr.use_cassette(tmp_path / "empty.yaml"):
        ainvoke_stream = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="k").astream("x")
        asyncio.run(ainvoke_stream.__anext__())
"""


def test_a_langchain_ainvoke_miss_fails_the_test_with_the_miss_message(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=LANGCHAIN_TESTS)
    for name in ("test_fixture_cassette", "test_swallowed"):
        write_cassette(pytester.path / f"cassettes/test_app/{name}.yaml")
    result = run(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=3)
    text = result.stdout.str()
    for name, prompt in (("test_fixture_cassette", "fixture"), ("test_own_cassette", "own cassette")):
        section = text.split(f"_ {name} _", 1)[1].split("\n_", 1)[0]
        # The failure starts with the miss, names the error the framework raised, and keeps it.
        assert section.lstrip("_ \n").startswith("promptvcr: "), section
        assert "no recorded request in" in section or "does not exist" in section
        assert f"never recorded, {prompt}" in section
        assert (
            "The test failed with AttributeError: 'CassetteMiss' object has no attribute 'generations'"
            in section
        )
        assert "The failure as raised:" in section
    swallowed = text.split("_ test_swallowed _", 1)[1].split("\n_", 1)[0]
    assert "never recorded, swallowed" in swallowed
    assert "The code under test caught this CassetteMiss and went on (1 request missed" in swallowed
    summary = [line for line in result.stdout.lines if line.startswith("FAILED")]
    assert len(summary) == 3 and all(" - promptvcr: " in line for line in summary)

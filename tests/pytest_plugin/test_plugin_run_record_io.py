"""The run record is the record of a run: ``pytest --co`` runs nothing, so it neither writes
``.promptvcr/usage.json`` nor replaces the one the last run wrote."""

from __future__ import annotations

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.usage.run_record import RECORD_PATH

SUITE = """
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_hello():
    assert ask("hello") == "Hi!"
"""


def test_collect_only_writes_no_run_record(pytester: pytest.Pytester) -> None:
    make_suite(pytester, test_app=SUITE)
    write_cassette(pytester.path / "cassettes/test_app/test_hello.yaml", chat("hello", "Hi!"))
    record = pytester.path / RECORD_PATH
    run(pytester, "--co")
    assert not record.exists()
    run(pytester).assert_outcomes(passed=1)
    written = record.read_bytes()
    run(pytester, "--co")
    assert record.read_bytes() == written

"""The plugin loads in every pytest run of an environment where promptvcr is installed (the
``pytest11`` entry point), and under pytest-xdist in the controller too, before any worker
starts: a run that uses no cassette, and ``pytest --co``, must not load the cassette machinery
(issue 22: it cost 80 ms at every start, 1% of a 200-test suite run with ``-n 2``)."""

from __future__ import annotations

import pytest
from plugin_suites import QUIET

#: Loaded by a cassette when one is used, never by the plugin alone.
MACHINERY = (
    "promptvcr.cassette",
    "promptvcr.cassettes.models",
    "promptvcr.files.persister",
    "promptvcr.files.fileformat",
    "promptvcr.policies.staleness",
    "promptvcr.matching.key",
    "promptvcr.server.launch",
    "yaml",
)

CONFTEST = f"""
import sys

def pytest_sessionfinish(session):
    loaded = [name for name in {MACHINERY!r} if name in sys.modules]
    print("\\nLOADED", ",".join(loaded) or "-")
"""

PLAIN = """
import os

def test_plain():
    assert os.sep
"""

MARKED = """
import pytest

@pytest.mark.promptvcr
def test_marked():
    pass
"""


def _loaded(result: pytest.RunResult) -> list[str]:
    line = next(line for line in result.outlines if line.startswith("LOADED "))
    names = line.split(" ", 1)[1]
    return [] if names == "-" else names.split(",")


@pytest.mark.parametrize("args", [("--co",), ()], ids=["collect-only", "run"])
def test_a_run_without_cassettes_loads_no_cassette_machinery(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_subprocess(*QUIET, "-s", "-q", "-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str()
    assert _loaded(result) == []


def test_a_test_with_a_cassette_loads_it(pytester: pytest.Pytester) -> None:
    """The probe sees what a cassette loads: the test above can fail."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_marked=MARKED)
    result = pytester.runpytest_subprocess(*QUIET, "-s", "-q", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    assert {"promptvcr.cassette", "promptvcr.files.persister"} <= set(_loaded(result))


def test_the_max_age_option_is_still_checked_at_start(pytester: pytest.Pytester) -> None:
    """``--max-age`` is parsed by the cassette machinery, loaded for it only when given."""
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_subprocess(*QUIET, "-q", "-p", "no:cacheprovider", "--max-age", "soon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--max-age" in result.stderr.str()

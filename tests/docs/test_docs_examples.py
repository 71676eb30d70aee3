"""Every code block of the docs and of README.md, run or checked (issue 46).

One test per page, so that a page's blocks run in order in one process (pytest-xdist sends
whole tests to workers, never half a page). What each kind of block must be is written once
for authors at the top of docs/contributing.md and implemented in ``doc_blocks`` (parsing),
``doc_runner`` (python blocks and project files, in a record pass then a replay pass) and
``doc_checks`` (console, yaml, toml, json).
"""

from __future__ import annotations

from pathlib import Path

import plugin_suites  # noqa: F401  (imports the SDK stack before any pytester: see its docstring)
import pytest
from doc_blocks import Block, BlockError, blocks_of
from doc_checks import check_console, check_parsed
from doc_runner import ExampleFailed, run_page
from fake_provider import FakeProvider

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
#: The section of README.md whose bash blocks CI runs (tests/test_ci_commands.py).
TWO_COMMANDS = "## The two commands"


def _bash_allowed(block: Block) -> bool:
    if block.page.name != "README.md":
        return False
    text = block.page.read_text(encoding="utf-8").splitlines()
    heading = next((line for line in reversed(text[: block.line]) if line.startswith("## ")), "")
    return heading == TWO_COMMANDS


def _problem(
    page: Path, pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> str:
    """What is wrong with the page's first failing block, or ``""``."""
    try:
        blocks = blocks_of(page)
        for block in blocks:
            if block.language == "bash" and not _bash_allowed(block):
                raise AssertionError(
                    f"{block.where}: a bash block outside README.md's {TWO_COMMANDS!r}: write commands "
                    "as a console block (`$ command`, output below it)."
                )
            if block.language == "console":
                check_console(block, pytester)
            elif block.language in ("yaml", "toml", "json"):
                check_parsed(block)
        runnable = [block for block in blocks if block.title or block.language == "python"]
        run_page(runnable, pytester, provider, monkeypatch)
    except (BlockError, AssertionError, ExampleFailed) as error:
        return str(error)
    return ""


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_block_of_the_page_runs_or_checks(
    page: Path, pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    if problem := _problem(page, pytester, provider, monkeypatch):
        pytest.fail(problem, pytrace=False)

"""A real browser for the HTML report's tests: the system's Chromium driven by Playwright.

CI is a fresh Debian machine that ran only ``pip install -e '.[test]'``: Playwright comes
from the ``test`` extra, Chromium from Debian (``playwright install`` downloads a browser of
its own and is never run). When no Chromium is on the PATH and the run is root with
``apt-get``, it is installed once (tests/installs.py: started early in a distributed run);
only where none can be had is the browser test skipped, saying why.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import installs
import pytest


@pytest.fixture
def chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), or the test is skipped with the reason.

    One per test, not per session: Playwright's sync API keeps an asyncio loop running in the
    thread while it is open, and every later test of the same worker that calls
    ``asyncio.run()`` (the MCP tests) would fail with "cannot be called from a running event
    loop"."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            "Playwright for Python is not installed (it is in the test extra: pip install -e '.[test]')"
        )
    try:
        path = installs.chromium()
    except installs.Unavailable as why:
        pytest.skip(f"no Chromium to run the HTML report in: {why}")
    with sync_playwright() as playwright:
        # As root (CI containers) Chromium refuses to start sandboxed; /dev/shm is small in containers.
        browser = playwright.chromium.launch(
            executable_path=path, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield browser
        finally:
            browser.close()


def _keep(path: Path) -> Path:
    folder = os.environ.get("PROMPTVCR_ARTEFACTS")
    if folder:
        target = Path(folder) / "html-report" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return path


@pytest.fixture
def keep() -> Callable[[Path], Path]:
    """Keep a file (a screenshot) as a test artefact: it stays in the test's ``tmp_path`` and is
    copied under ``$PROMPTVCR_ARTEFACTS/html-report/`` when that variable is set (CI uploads it)."""
    return _keep

"""A real browser for the HTML report's tests: the system's Chromium driven by Playwright.

CI is a fresh Debian machine that ran only ``pip install -e '.[test]'``: Playwright comes
from the ``test`` extra, Chromium from Debian (``playwright install`` downloads a browser of
its own and is never run). When no Chromium is on the PATH and the run is root with
``apt-get``, it is installed once (one worker at a time under xdist, bounded in time);
only where none can be had is the browser test skipped, saying why.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import filelock
import pytest

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_INSTALL_SECONDS = 600


def _found() -> str | None:
    return next((path for name in _NAMES if (path := shutil.which(name))), None)


def _apt(*args: str, deadline: float) -> str | None:
    """Run apt-get; the reason it failed, or ``None``."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(
            ["apt-get", *args], env=env, capture_output=True, text=True, timeout=deadline, check=False
        )
    except subprocess.TimeoutExpired:
        return f"apt-get {' '.join(args)} took more than {deadline:.0f} s"
    if done.returncode:
        return f"apt-get {' '.join(args)} failed: {done.stderr.strip()[-300:]}"
    return None


@functools.cache  # tried once per worker: a failed install is not waited for again
def _installed() -> tuple[str | None, str]:
    """Chromium's path, installing Debian's package when root can; else why there is none."""
    if found := _found():
        return found, ""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return None, "no Chromium on the PATH, and apt-get cannot install one here (not root, or no apt-get)"
    with filelock.FileLock(Path(tempfile.gettempdir()) / "promptvcr-chromium-install.lock"):
        if found := _found():  # another worker installed it meanwhile
            return found, ""
        install = ("install", "-y", "--no-install-recommends", "chromium")
        reason = _apt(*install, deadline=_INSTALL_SECONDS / 2)
        if reason:  # no package lists yet (a fresh image has none), or stale ones: update, then again
            each = _INSTALL_SECONDS / 4
            reason = _apt("update", deadline=each) or _apt(*install, deadline=each)
    return _found(), reason or "apt-get installed chromium but no browser is on the PATH"


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
    path, reason = _installed()
    if path is None:
        pytest.skip(f"no Chromium to run the HTML report in: {reason}")
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

"""What the suite installs from the registries beyond pip's ``test`` extra: Debian's Chromium
(the HTML report's browser tests) and npm packages (the node clients of ``serve``, the
TypeScript MCP SDK, the JavaScript package's suite). Each is installed once per machine, into
a folder named by what it pins, under a file lock: workers that need one at the same time wait
for a single install.

On a fresh CI machine these downloads cost a minute or more, mostly waiting on the network
and on dpkg, not on a core. Run from the first test that needs them, they held that test's
worker idle meanwhile; so a distributed run (``pytest_xdist_setupnodes`` in tests/conftest.py)
starts each install its paths will need in a background thread of the controller, which is
idle while the workers run, and the test that needs it later finds it done or waits on the
lock for the rest. Each function raises :class:`Unavailable` with the reason where nothing can
be installed (no node, not root, no registry): the tests skip, saying why.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import filelock

TESTS = Path(__file__).resolve().parent


class Unavailable(Exception):
    """What the suite needs cannot be installed here; the message says why."""


# --- Chromium, from Debian ------------------------------------------------------------------

_CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_APT_SECONDS = 600


def _browser() -> str | None:
    return next((path for name in _CHROMIUM if (path := shutil.which(name))), None)


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


@functools.cache  # tried once per process: a failed install is not waited for again
def _chromium() -> tuple[str | None, str]:
    if found := _browser():
        return found, ""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        return None, "no Chromium on the PATH, and apt-get cannot install one here (not root, or no apt-get)"
    with filelock.FileLock(Path(tempfile.gettempdir()) / "promptvcr-chromium-install.lock"):
        if found := _browser():  # another process installed it meanwhile
            return found, ""
        install = ("install", "-y", "--no-install-recommends", "chromium")
        reason = _apt(*install, deadline=_APT_SECONDS / 2)
        if reason:  # no package lists yet (a fresh image has none), or stale ones: update, then again
            each = _APT_SECONDS / 4
            reason = _apt("update", deadline=each) or _apt(*install, deadline=each)
    return _browser(), reason or "apt-get installed chromium but no browser is on the PATH"


def chromium() -> str:
    """Chromium's path, installing Debian's package when root can."""
    path, reason = _chromium()
    if path is None:
        raise Unavailable(reason)
    return path


# --- npm packages ---------------------------------------------------------------------------


def _npm(args: list[str], cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise Unavailable("node and npm are not installed: the npm packages cannot run")
    command = ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def _once(root: Path, install: Callable[[], subprocess.CompletedProcess[str]], what: str) -> Path:
    """Run ``install`` into ``root`` unless a finished install is there (its ``installed`` mark),
    under ``root``'s lock."""
    root.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(root / ".lock"), timeout=900):
        if not (root / "installed").exists():
            done = install()
            if done.returncode != 0:
                raise Unavailable(f"npm could not install {what} (no registry?): {done.stderr[-400:]}")
            (root / "installed").write_text(what, encoding="utf-8")
    return root


#: The npm SDKs ``serve``'s node clients use, pinned: the install folder is named by them.
NPM_SDKS = ("openai@7.59.0", "@anthropic-ai/sdk@1.14.0")


def npm_sdks() -> Path:
    """A ``node_modules`` folder holding :data:`NPM_SDKS` (``$PROMPTVCR_NPM_CACHE`` to move it)."""
    key = "-".join(package.replace("/", "-") for package in NPM_SDKS)
    root = Path(os.environ.get("PROMPTVCR_NPM_CACHE", Path(tempfile.gettempdir()) / f"promptvcr-npm-{key}"))
    _once(root, lambda: _npm(["install", "--prefix", str(root), *NPM_SDKS], timeout=240), " ".join(NPM_SDKS))
    return root / "node_modules"


#: The TypeScript MCP SDK's release, pinned (a new release cannot change what the tests see).
MCP_NODE_SDK = "@modelcontextprotocol/sdk@1.32.2"


def mcp_node_sdk() -> Path:
    """The folder holding ``node_modules/@modelcontextprotocol/sdk`` (``$PROMPTVCR_NODE_CACHE``
    to move it); node resolves the SDK from a script copied into it."""
    root = Path(
        os.environ.get("PROMPTVCR_NODE_CACHE", Path.home() / ".cache" / "promptvcr-tests" / "node-mcp")
    ) / MCP_NODE_SDK.replace("/", "-")
    install = ["install", "--prefix", str(root), MCP_NODE_SDK]
    return _once(root, lambda: _npm(install, timeout=300), MCP_NODE_SDK)


#: The JavaScript package's test suite: its devDependencies, as its lock file pins them.
JS_SUITE = TESTS / "js" / "suite"


def js_suite_dependencies() -> Path:
    """A ``node_modules`` of the suite's devDependencies (``npm ci``: exact versions, transitive
    ones too), in a folder keyed by the lock; each session copies it by hard links."""
    lock = (JS_SUITE / "package-lock.json").read_bytes()
    key = hashlib.sha256(lock + (JS_SUITE / "package.json").read_bytes()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / f"promptvcr-npm-js-{key}"

    def install() -> subprocess.CompletedProcess[str]:
        shutil.copy(JS_SUITE / "package.json", root / "package.json")
        shutil.copy(JS_SUITE / "package-lock.json", root / "package-lock.json")
        return _npm(["ci", "--prefer-offline"], cwd=root)

    return _once(root, install, "the JavaScript suite's dependencies")


# --- started early ----------------------------------------------------------------------------

#: Each install, and the test folders or files that need it.
NEEDED_BY: dict[Callable[[], object], tuple[Path, ...]] = {
    chromium: (TESTS / "htmlreport",),
    npm_sdks: (TESTS / "server",),
    mcp_node_sdk: (TESTS / "mcp" / "test_mcp_wrapper.py",),
    js_suite_dependencies: (TESTS / "js",),
}


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def start_needed(paths: Iterable[Path]) -> list[threading.Thread]:
    """Start, each in a daemon thread, the installs that a run of ``paths`` needs (a failure
    is left for the test that needs it to report, as a skip saying why)."""
    chosen = [path.resolve() for path in paths]
    threads = []
    for install, users in NEEDED_BY.items():
        if any(_overlap(user, path) for user in users for path in chosen):
            thread = threading.Thread(target=_quietly, args=(install,), name=f"install {install.__name__}")
            thread.daemon = True
            thread.start()
            threads.append(thread)
    return threads


def _quietly(install: Callable[[], object]) -> None:
    # A failure is the test's to report: it tries again, and skips saying why.
    with contextlib.suppress(Unavailable, OSError, subprocess.SubprocessError, filelock.Timeout):
        install()

"""Run one page's examples as a reader would: record once against a provider, then replay offline.

A page is one example project, in a fresh folder (pytester's, the current directory while it
runs). Its blocks run in order, twice:

1. the record pass: ``PROMPTVCR_RECORD_MODE=record``, API keys set, and every SDK's base-URL
   variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ...) pointed at the loopback provider
   of ``tests/fake_provider.py``: the cassettes the page names are written there;
2. the replay pass: ``PROMPTVCR_RECORD_MODE=replay``, no API key, a fresh namespace, the same
   folder: everything must come from the cassettes, and the provider must see no request.

So an example passes only if it works the first time a user records it and every time after.
A ``python`` block runs in the page's namespace (blocks share it, like a notebook); a block with
a ``title`` is a file of the project, written there; a ``test_*.py`` file is run by pytest as
it is written, and a ``noxfile.py``'s sessions by nox at the end of the record pass (in this interpreter:
``--no-venv --no-install``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import Block
from fake_provider import FakeProvider

from promptvcr.pytest_plugin.guards.network import blocked

__all__ = ["PASSES", "run_page"]

PASSES = ("record", "replay")
#: The SDKs' API key variables: set for the record pass, removed for the replay pass.
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
#: Plugins inner pytest runs do not need (see tests/plugin_suites.py).
QUIET = ("-p", "no:hypothesispytest", "-p", "no:langsmith_plugin", "-p", "no:cacheprovider")


class ExampleFailed(Exception):
    """One block failed in one pass: the message is what the author needs to fix it."""


def _environment(monkeypatch: pytest.MonkeyPatch, provider: FakeProvider, mode: str) -> None:
    monkeypatch.setenv("PROMPTVCR_RECORD_MODE", mode)
    monkeypatch.setenv("OPENAI_BASE_URL", provider.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider.base_url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", provider.base_url)
    for key in KEYS:
        if mode == "record":
            monkeypatch.setenv(key, f"docs-example-{key.lower().replace('_', '-')}")
        else:
            monkeypatch.delenv(key, raising=False)


def _forget_project_modules(root: Path) -> None:
    """The project's modules (``app.py``) are imported anew by each pass.

    A module's file is under the project as the path was written (``root`` is on sys.path as
    it is) or as resolved; only such a file (or a relative one) is resolved to make sure. A
    suite worker holds thousands of modules: a path resolved for each cost about a second of
    CPU a pass, two passes a page."""
    under = root.resolve()
    prefixes = tuple({f"{root}{os.sep}", f"{under}{os.sep}"})
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if not file or (os.path.isabs(file) and not file.startswith(prefixes)):
            continue
        if Path(file).resolve().is_relative_to(under):
            del sys.modules[name]


def _failure(block: Block, mode: str, what: str) -> ExampleFailed:
    title = f" ({block.title})" if block.title else ""
    return ExampleFailed(
        f"{block.where}{title}, {mode} pass: {what}\n"
        f"The {mode} pass runs with PROMPTVCR_RECORD_MODE={mode}"
        + (
            ", API keys set and the SDKs' base URLs on a loopback provider"
            if mode == "record"
            else ", no API key: every answer must come from the cassettes the record pass wrote"
        )
        + ". See docs/contributing.md for what each kind of block must be."
    )


def _exec(block: Block, namespace: dict[str, Any], mode: str) -> None:
    # Padded so that a traceback names the line of the page, not of the block.
    code = compile("\n" * (block.line - 1) + block.code, str(block.page), "exec")
    try:
        exec(code, namespace)
    except BaseException as error:  # CassetteMiss is a BaseException, by design
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(block.page)]
        lines = "".join(f"  {block.page.name}:{f.lineno}: {f.line}\n" for f in frames)
        what = f"{type(error).__module__}.{type(error).__qualname__}: {error}\n{lines}"
        raise _failure(block, mode, what) from error


def _run_tests(block: Block, root: Path, pytester: pytest.Pytester, mode: str) -> None:
    result = pytester.runpytest(
        *QUIET, "-q", "-n", "0", "-o", "asyncio_default_fixture_loop_scope=function", block.title
    )
    counts = result.parseoutcomes()
    if result.ret != 0 or not counts.get("passed"):
        output = "\n".join(result.outlines[-60:])
        raise _failure(block, mode, f"pytest {block.title} did not pass ({counts}):\n{output}")


def _run_nox(block: Block, root: Path, mode: str) -> None:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "PYTEST_ADDOPTS": " ".join(QUIET)}
    command = [sys.executable, "-m", "nox", "--no-venv", "--no-install", "-f", block.title]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-6000:]
        raise _failure(block, mode, f"`nox --no-venv --no-install` failed ({done.returncode}):\n{output}")


def _write(block: Block, root: Path) -> Path:
    path = root / block.title
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.code, encoding="utf-8")
    return path


def run_page(
    blocks: list[Block], pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both passes over ``blocks`` (the runnable ones and the project's files) of one page.
    Nothing in them reaches past loopback: a block that would (a client with its own
    ``base_url``, an upstream of ``promptvcr serve``) fails at once, naming the host."""
    reason = (
        "the docs examples reach only the loopback provider, through the SDKs' base-URL variables "
        "(see docs/contributing.md)"
    )
    with blocked(reason=reason):
        _both_passes(blocks, pytester, provider, monkeypatch)


def _both_passes(
    blocks: list[Block], pytester: pytest.Pytester, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = pytester.path
    monkeypatch.syspath_prepend(str(root))
    for mode in PASSES:
        _environment(monkeypatch, provider, mode)
        _forget_project_modules(root)
        sent_before = len(provider.requests)
        namespace: dict[str, Any] = {"__name__": "__main__"}
        noxfile = None
        for block in blocks:
            if block.title:
                _write(block, root)
                name = Path(block.title).name
                if name.startswith("test_") and name.endswith(".py"):
                    _run_tests(block, root, pytester, mode)
                elif name == "noxfile.py":
                    noxfile = block
            elif block.language == "python":
                _exec(block, namespace, mode)
        if noxfile is not None and mode == "record":  # its sessions record: run once all tests are written
            _run_nox(noxfile, root, mode)
        if mode == "replay" and (sent := len(provider.requests) - sent_before):
            raise ExampleFailed(
                f"{blocks[0].page.name}, replay pass: {sent} request(s) reached the provider "
                f"({', '.join(r.path for r in provider.requests[sent_before:][:3])}): in replay mode "
                "the examples must need no network. Does a block set record_mode= itself?"
            )

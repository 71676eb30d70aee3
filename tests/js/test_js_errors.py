"""The npm package's errors when it cannot do its job say what is wrong and what to do: no
``promptvcr serve`` to run (which commands it tried, how to name one), a record mode that does
not exist, a ``PROMPTVCR_UPSTREAMS`` it cannot read, a test process with no server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "js" / "promptvcr"
START = """
require(process.argv[1]).startServer().then(
  async (server) => { console.log("started " + server.url); await server.stop(); },
  (error) => { console.log(error.message); process.exitCode = 3; },
);
"""

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _start(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTVCR_")}
    return subprocess.run(
        ["node", "-e", START, str(PACKAGE / "index.cjs")],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_no_server_command_names_what_was_tried_and_how_to_name_one() -> None:
    done = _start(PROMPTVCR_SERVE_COMMAND="promptvcr-no-such-command serve-it")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "tried `promptvcr-no-such-command serve-it`" in done.stdout
    assert "pip install 'promptvcr[serve]'" in done.stdout and "PROMPTVCR_SERVE_COMMAND" in done.stdout


def test_a_record_mode_that_does_not_exist_is_named_with_those_that_do() -> None:
    done = _start(PROMPTVCR_RECORD_MODE="sometimes")
    assert done.returncode == 3
    assert 'PROMPTVCR_RECORD_MODE="sometimes" is not a record mode' in done.stdout
    assert "replay, record, rewrite, passthrough, verify, once" in done.stdout


def test_an_upstream_list_it_cannot_read_shows_the_form() -> None:
    done = _start(PROMPTVCR_UPSTREAMS="gateway:4000", PROMPTVCR_RECORD_MODE="record")
    assert done.returncode == 3
    assert 'PROMPTVCR_UPSTREAMS has "gateway:4000"; give NAME=URL pairs' in done.stdout


def test_the_server_this_python_runs_starts_and_stops() -> None:
    done = _start(PROMPTVCR_SERVE_COMMAND=f"{sys.executable} -m promptvcr")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("started http://127.0.0.1:")


def test_a_test_process_without_a_server_says_which_set_up_to_add() -> None:
    code = "require(process.argv[1]).baseURL('openai')"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTVCR_")}
    command = ["node", "-e", code, str(PACKAGE / "index.cjs")]
    done = subprocess.run(command, env=clean, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "$PROMPTVCR_URL is unset" in done.stderr and "plugins: [promptvcr()]" in done.stderr

"""The README's first command, as a newcomer runs it and as the documented recording run does
(issue 46): ``python -m pytest examples`` in one process (no pytest-xdist workers to start:
1.3 s rather than 5.4-5.9 s), and the examples pass in record mode as they do in replay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_run_in_one_process_and_pass_in_record_mode(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "PROMPTVCR_RECORD_MODE")) and not key.endswith("_API_KEY")
    }
    env["PROMPTVCR_ALLOW_RECORD_IN_CI"] = "1"  # recording on purpose, on CI too (nothing is sent)
    command = [sys.executable, "-m", "pytest", "examples", "-q", "--record-mode=record"]
    # --rootdir: the run's usage record goes to tmp_path, not into the checkout.
    done = subprocess.run(
        [*command, f"--rootdir={tmp_path}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "2 passed" in output
    assert "requests: 3 replayed, 0 recorded, 0 missed" in output  # record mode replays what it holds
    assert "bringing up nodes" not in output and "created: " not in output, output  # no xdist worker

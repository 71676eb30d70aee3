"""The newest websockets release, installed for real: cassettes record and replay HTTP and
websocket traffic with it (issue 39: websockets 17 renamed the asyncio client's seam, and
because google-genai imports websockets, every cassette broke, plain HTTP ones too).

The suite's own environment resolves websockets to whatever its other packages allow, so this
builds a venv under a temp folder that sees every package of this one (and this promptvcr),
installs the websockets 17 release pinned in ``constraints/websockets-17.txt`` (what the suite
last passed with; ``nox -s lock`` moves it to the newest) into it from the package index with uv
(the installer of the README's command, in the test extra: a second to pip's several, and its
cache makes a second run download nothing), and runs the realtime and Gemini Live tests and a
google-genai HTTP record-and-replay there.
``nox -s compat`` covers the rest of the version matrix (docs/versions.md).
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_suites import QUIET

ROOT = Path(__file__).resolve().parents[2]

#: The websockets 17 release this test installs: pinned, so that a new release cannot turn the
#: suite red overnight (``nox -s "compat(uncapped-websockets)"`` tries the newest).
PINNED = ROOT / "constraints" / "websockets-17.txt"

#: The tests run with the newest websockets, each file with the part that needs it.
TESTS = (
    "tests/interceptors/test_websockets_realtime.py",
    "tests/interceptors/test_websockets_frames.py",
    # websockets 17's threaded reconnect, used directly (not collected by the suite's own run).
    "tests/interceptors/latest_websockets_reconnect.py",
    "tests/interceptors/test_seam_missing.py",  # the threaded client's seam broken too
    # google-genai imports websockets: its HTTP traffic is what broke for everyone.
    "tests/test_record_replay.py::test_sdk_traffic_replays_exactly_what_was_recorded[gemini-sync]",
    "tests/test_record_replay.py::test_sdk_traffic_replays_exactly_what_was_recorded[gemini-async]",
)

#: Fail fast when the index cannot be reached, rather than retrying for minutes.
INSTALL_ENV = {"UV_HTTP_TIMEOUT": "20", "UV_HTTP_RETRIES": "1"}

#: What uv prints when it cannot reach the package index (offline, no DNS, a proxy refusing).
UNREACHABLE = (
    "Failed to fetch",
    "dns error",
    "failed to lookup address",
    "Network is unreachable",
    "Could not connect",
    "error sending request",
)


def _venv_over_this_one(folder: Path) -> Path:
    """A venv in ``folder`` whose own packages come first, then this environment's: what it
    installs (a newer websockets) shadows the same package here and nothing else."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)], check=True
    )
    python = folder / "bin" / "python"
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # addsitedir, not a bare path: this environment's own .pth files (an editable promptvcr) apply too.
    outer = [path for path in site.getsitepackages() if Path(path).is_dir()]
    lines = "".join(f"import site; site.addsitedir({path!r})\n" for path in outer)
    Path(own, "_promptvcr_outer_env.pth").write_text(lines)
    return python


def _install(python: Path, requirement: str) -> None:
    from uv import find_uv_bin

    done = subprocess.run(
        [find_uv_bin(), "pip", "install", "--python", str(python), requirement],
        capture_output=True,
        text=True,
        env={**os.environ, **INSTALL_ENV},
    )
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if any(sign in output for sign in UNREACHABLE):
            pytest.skip(f"uv cannot reach the package index to install {requirement!r}: {output[-400:]}")
        raise AssertionError(f"uv pip install {requirement!r} failed:\n{output}")


def _pinned_requirement() -> str:
    """``websockets==17.x``: the one requirement line of :data:`PINNED`."""
    lines = [line.strip() for line in PINNED.read_text(encoding="utf-8").splitlines()]
    (requirement,) = [line for line in lines if line and not line.startswith("#")]
    assert requirement.startswith("websockets==17"), f"{PINNED} must pin a websockets 17 release"
    return requirement


def test_the_newest_websockets_records_and_replays_http_and_websocket_traffic(tmp_path: Path) -> None:
    python = _venv_over_this_one(tmp_path / "venv")
    _install(python, _pinned_requirement())
    version = subprocess.run(
        [str(python), "-c", "import websockets; print(websockets.__version__, websockets.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert int(version[0].split(".")[0]) >= 17, version
    assert Path(version[1]).is_relative_to(tmp_path), version  # the venv's, not this environment's

    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-n", "0", *QUIET, *TESTS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=600,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in summary and "skipped" not in summary and "deselected" not in summary, summary

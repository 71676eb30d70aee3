"""A spool that cannot be written is the recording's error, never a provider's cut (issue 54, scenario 5).

An 8 MiB stream is recorded past the spool threshold (4 MiB) while the temporary folder is
full: a 1 MiB tmpfs mounted as ``TMPDIR`` (ENOSPC, as root can mount one), or the process's
files limited to 1 MiB (``RLIMIT_FSIZE``, EFBIG, as a quota does). The application reads the
whole answer; the cassette raises :class:`~promptvcr.CassetteWriteError` at exit naming the
request, the folder and what to do; nothing is written as ``end: closed`` or ``disconnect``.
Through ``promptvcr serve`` (same limits on the server's process): the client gets the whole
answer, the server's report holds the error and it exits 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from spool_full_child import BODY, Handler

from promptvcr.server.launch import READY_PREFIX

CHILD = Path(__file__).with_name("spool_full_child.py")
LIMITED = ["fsize"] + (["tmpfs"] if os.geteuid() == 0 else [])


@contextlib.contextmanager
def _full_tmp(tmp_path: Path, how: str) -> Iterator[dict[str, str]]:
    """The environment of a process whose temporary folder is full (``tmpfs``) or not (``fsize``)."""
    env = {**os.environ, "PROMPTVCR_CACHE_DIR": "off"}
    if how != "tmpfs":
        yield env
        return
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(tiny)], check=True)
    try:
        yield {**env, "TMPDIR": str(tiny)}
    finally:
        subprocess.run(["umount", "-l", str(tiny)], check=False)


@pytest.mark.parametrize("how", LIMITED)
def test_in_process_the_app_gets_its_answer_and_the_cassette_the_error(tmp_path: Path, how: str) -> None:
    cassette = tmp_path / "full.yaml"
    with _full_tmp(tmp_path, how) as env:
        done = subprocess.run(
            [sys.executable, str(CHILD), str(cassette), how],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["read"] == seen["size"]  # the application read the whole live answer
    raised = seen["raised"]
    assert raised.startswith("CassetteWriteError") and "could not be recorded" in raised, raised
    assert str(cassette) in raised and "TMPDIR" in raised
    assert ("No space left on device" if how == "tmpfs" else "File too large") in raised
    assert "end: closed" not in seen["cassette"] and "end: disconnect" not in seen["cassette"]


_SERVE = """
import resource, signal, sys
if sys.argv[1] == "fsize":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
from promptvcr.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("how", LIMITED)
def test_serve_answers_in_full_reports_the_error_and_exits_1(tmp_path: Path, how: str) -> None:
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    cassette, report = tmp_path / "served.yaml", tmp_path / "report.json"
    try:
        with _full_tmp(tmp_path, how) as env:
            command = [
                sys.executable,
                "-c",
                _SERVE,
                how,
                "serve",
                str(cassette),
                "--record-mode",
                "record",
                "--upstream",
                f"big=http://127.0.0.1:{upstream.server_address[1]}",
                "--report",
                str(report),
            ]
            server = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            assert server.stdout is not None
            url = ""
            for line in server.stdout:
                if line.startswith(READY_PREFIX):
                    url = line[len(READY_PREFIX) :].strip()
                    break
            assert url, server.stderr.read() if server.stderr else ""
            with httpx2.Client(timeout=60) as client:
                with client.stream("POST", f"{url}/big/v1/chat/completions", json={"stream": True}) as answer:
                    status, got = answer.status_code, b"".join(answer.iter_bytes())
                client.post(f"{url}/_promptvcr/shutdown")
            code = server.wait(timeout=60)
            log = server.stderr.read() if server.stderr else ""
    finally:
        upstream.shutdown()
    assert status == 200 and got == BODY  # the client got the whole live answer
    assert code == 1, log
    errors = json.loads(report.read_text())["errors"]
    assert any("could not be recorded" in error for error in errors), errors
    text = cassette.read_text() if cassette.exists() else ""
    assert "end: closed" not in text and "end: disconnect" not in text

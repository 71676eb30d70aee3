"""``promptvcr.serve(...)``: start ``promptvcr serve`` for a block of a test, then stop it.

The server runs in its own process (``python -m promptvcr serve``), as in production use:
its cassettes are entered there, so the test process's own cassettes and clients are
untouched. While the block runs, the provider base-URL variables (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, ...) point at it, so child processes
started in the block reach it. Leaving stops it with ``POST /_promptvcr/shutdown`` (every
platform), which writes what was recorded; ``Served.report`` then says what it served.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .upstreams import base_url_environment

__all__ = ["READY_PREFIX", "Served", "serve"]

#: The line ``promptvcr serve`` prints, followed by its URL, once it accepts connections.
READY_PREFIX = "promptvcr serve: listening on "

_START_TIMEOUT = 30.0
#: Seconds a stopped server may take to write what it recorded and exit, before it is killed.
_STOP_TIMEOUT = 120.0


@dataclass
class Served:
    """A running server: its ``url``, the ``environment`` that points SDKs at it, its log."""

    url: str
    cassette: Path | None
    environment: dict[str, str]
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    """After the block: ``{"cassettes": [{"path", "mode", "outcomes", "missed", "unused"}], "errors"}``."""

    def env(self, cassette: str = "") -> dict[str, str]:
        """``os.environ`` with the base-URL variables for a folder cassette's ``cassette``."""
        return {**os.environ, **base_url_environment(self.url, cassette)}

    @property
    def log_text(self) -> str:
        return "".join(self.log)

    def live_report(self) -> dict[str, Any]:
        """What the server has served so far (``GET /_promptvcr/report``)."""
        with _opener.open(f"{self.url}/_promptvcr/report", timeout=10) as answer:
            data: dict[str, Any] = json.load(answer)
            return data

    def admin(self, action: str, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """``POST /_promptvcr/<action>`` with the JSON ``body``: (status, answer)."""
        call = urllib.request.Request(
            f"{self.url}/_promptvcr/{action}",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        try:
            with _opener.open(call, timeout=30) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)


_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy


def _command(
    cassette: Path | None,
    record_mode: str | None,
    upstreams: Mapping[str, str],
    port: int,
    report: Path,
    extra: Iterable[str],
) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "promptvcr",
        "serve",
        *([str(cassette)] if cassette else []),
        "--port",
        str(port),
    ]
    command += ["--report", str(report)]
    if record_mode is not None:
        command += ["--record-mode", record_mode]
    for name, url in upstreams.items():
        command += ["--upstream", f"{name}={url}"]
    return [*command, *extra]


def _drain(stream: IO[str], log: list[str]) -> None:
    for line in stream:
        log.append(line)


@contextmanager
def serve(
    cassette: str | os.PathLike[str] | None,
    *,
    record_mode: str | None = None,
    upstreams: Mapping[str, str] | None = None,
    port: int = 0,
    set_environment: bool = True,
    options: Iterable[str] = (),
    cwd: str | os.PathLike[str] | None = None,
) -> Iterator[Served]:
    """Run ``promptvcr serve cassette`` for the block (``options``: more command-line flags;
    ``cassette`` ``None``: only the cassettes started with :meth:`Served.admin`, which must lie
    in the server's working directory ``cwd``, by default this process's)."""
    with tempfile.TemporaryDirectory(prefix="promptvcr-serve-") as scratch:
        report_path = Path(scratch) / "report.json"
        path = Path(cassette) if cassette is not None else None
        command = _command(path, record_mode, upstreams or {}, port, report_path, options)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            encoding="utf-8",
            cwd=cwd,
        )
        assert process.stdout is not None and process.stderr is not None
        served = Served("", path, {}, process)
        threading.Thread(target=_drain, args=(process.stderr, served.log), daemon=True).start()
        served.url = _wait_ready(process, served.log)
        served.environment = base_url_environment(served.url)
        threading.Thread(target=_drain, args=(process.stdout, served.log), daemon=True).start()
        saved = {name: os.environ.get(name) for name in served.environment}
        if set_environment:
            os.environ.update(served.environment)
        try:
            yield served
        finally:
            if set_environment:
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
            _stop(served)
            if report_path.exists():
                served.report = json.loads(report_path.read_text(encoding="utf-8"))


def _wait_ready(process: subprocess.Popen[str], log: list[str]) -> str:
    assert process.stdout is not None
    timer = threading.Timer(_START_TIMEOUT, process.kill)
    timer.start()
    try:
        for line in process.stdout:
            if line.startswith(READY_PREFIX):
                return line[len(READY_PREFIX) :].strip()
            log.append(line)
    finally:
        timer.cancel()
    process.wait()
    raise RuntimeError(f"promptvcr serve did not start (exit {process.returncode}):\n{''.join(log)}")


def _stop(served: Served) -> None:
    """Ask the server to stop and wait for it: it writes what it is still recording first (a
    300 MB recording takes about ten seconds), so it is killed only after :data:`_STOP_TIMEOUT`."""
    try:
        with _opener.open(
            urllib.request.Request(f"{served.url}/_promptvcr/shutdown", method="POST"), timeout=10
        ):
            pass
        served.process.wait(timeout=_STOP_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        served.process.kill()
        served.process.wait()

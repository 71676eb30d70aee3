"""A cassette recorded on one machine replays on any other, and says nothing about the first.

Each machine is a child process with its own identity: HOME, the working directory (the
project, inside home), TMPDIR, the user name (USER, LOGNAME) and the host name, set through
the OS (``unshare --uts``) where the test runs as root, else by PROMPTVCR_HOSTNAME. Alice
records a coding agent's tool loop (real openai client, FakeProvider on 127.0.0.1); the
cassette moves with the project to Bob's machine, where replay must give the application
exactly what a live run on Bob's machine gives it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_provider import FakeProvider

CHILD = Path(__file__).with_name("agent_child.py")
CASSETTE = "cassettes/agent_loop.yaml"


def _can_set_hostname() -> bool:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    done = subprocess.run(
        ["unshare", "--uts", "hostname", "promptvcr-probe"], capture_output=True, check=False
    )
    return done.returncode == 0


class Machine:
    """One machine's identity, its folders made under ``root``."""

    def __init__(self, root: Path, user: str, host: str) -> None:
        self.user, self.host = user, host
        self.home = root / "home" / user
        self.project = self.home / "src" / "agent-app"
        self.tmp = root / f"scratch-{user}"
        for folder in (self.project, self.tmp):
            folder.mkdir(parents=True)
        (self.project / "notes.txt").write_text("remember the milk\n")

    def values(self) -> list[str]:
        return [str(self.home), str(self.project), str(self.tmp), self.user, self.host]

    def run(self, cassette: str, mode: str, base_url: str, *, os_hostname: bool) -> dict[str, object]:
        env = {
            **os.environ,
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "USER": self.user,
            "LOGNAME": self.user,
            "PROMPTVCR_CACHE_DIR": "off",
        }
        env.pop("PROMPTVCR_RECORD_MODE", None)
        command = [sys.executable, str(CHILD), cassette, mode, base_url]
        if os_hostname:  # the host name the OS gives, in a UTS namespace of its own
            env.pop("PROMPTVCR_HOSTNAME", None)
            command = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', self.host, *command]
        else:
            env["PROMPTVCR_HOSTNAME"] = self.host
        done = subprocess.run(command, env=env, cwd=self.project, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        result["stderr"] = done.stderr
        return result


@pytest.fixture(scope="module")
def os_hostname() -> bool:
    return _can_set_hostname()


def test_a_tool_loop_recorded_on_one_machine_replays_on_another(tmp_path: Path, os_hostname: bool) -> None:
    alice = Machine(tmp_path / "alice", "alicewonder", "alice-laptop")
    bob = Machine(tmp_path / "bob", "bobbuilder", "bob-desktop")
    with FakeProvider() as fake:
        recorded_url = fake.openai_base_url
        live_alice = alice.run(CASSETTE, "record", recorded_url, os_hostname=os_hostname)
    assert str(alice.project) in str(live_alice["final"])  # the loop did carry Alice's machine
    assert "MachineIdentityWarning" in str(live_alice["stderr"])  # the recording says what it replaced

    written = (alice.project / CASSETTE).read_text()
    leaked = [value for value in alice.values() if value in written]
    assert leaked == [], f"the cassette holds the recording machine's {leaked}"
    for placeholder in ("<project>", "<home>", "<tmp>", "<user>", "<host>"):
        assert placeholder in written

    (bob.project / "cassettes").mkdir()
    shutil.copy(alice.project / CASSETTE, bob.project / CASSETTE)  # the project moves, the server is gone
    replayed = bob.run(CASSETTE, "replay", recorded_url, os_hostname=os_hostname)
    with FakeProvider() as fake:  # Bob's own live run: what the application should see on his machine
        live_bob = bob.run("-", "record", fake.openai_base_url, os_hostname=os_hostname)
    for run in (replayed, live_bob):
        run.pop("stderr")
    assert replayed == live_bob
    assert str(bob.project) in str(replayed["final"]) and "bobbuilder" in json.dumps(replayed)
    assert (bob.project / CASSETTE).read_text() == written  # replay changed nothing in the file

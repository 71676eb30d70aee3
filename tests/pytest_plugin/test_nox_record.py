"""``nox -s record`` of the project's noxfile, against the loopback fake provider.

nox runs the session in this environment (``--no-venv --no-install``: no package index is
needed), and the recording run reaches only 127.0.0.1. The checks: the session passes the
API key variable through to the tests, records into the marker's cassette, keeps the key
out of it, and fails when a test wrote a secret into a cassette.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from fake_provider import FakeProvider

NOXFILE = Path(__file__).resolve().parents[2] / "noxfile.py"
KEY = "sk-test-nox-record-0123456789abcdef"

SUITE = """
import os

import openai
import pytest

BASE_URL = os.environ["FAKE_PROVIDER_URL"]


def ask(text):
    client = openai.OpenAI(base_url=BASE_URL, max_retries=0)  # the key comes from OPENAI_API_KEY
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content


@pytest.mark.promptvcr
def test_clean():
    assert ask("hello")


@pytest.mark.promptvcr
def test_leaky():
    assert ask("please remember my key: " + os.environ["OPENAI_API_KEY"])
"""


def test_nox_record_session_records_with_the_keys_and_fails_on_a_secret(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (tmp_path / "test_recorded.py").write_text(textwrap.dedent(SUITE))
    env = {
        **os.environ,
        "OPENAI_API_KEY": KEY,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("PROMPTVCR_RECORD_MODE", None)
    command = [sys.executable, "-m", "nox", "-f", str(NOXFILE), "-s", "record", "--no-venv", "--no-install"]
    pytest_args = ["--", str(tmp_path), "-p", "no:hypothesispytest", "-p", "no:langsmith_plugin"]
    with FakeProvider() as fake:
        env["FAKE_PROVIDER_URL"] = fake.openai_base_url
        done = subprocess.run(
            [*command, *pytest_args], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        received = list(fake.requests)
    output = done.stdout + done.stderr

    # Issue 16: the key sent as the credential is masked wherever else it appears, the prompt
    # included, before the write: the leaky test records safely instead of failing after it.
    assert done.returncode == 0, output
    assert "recording with OPENAI_API_KEY" in output
    assert "Session record was successful" in output
    assert "2 passed" in output
    assert "requests: 0 replayed, 2 recorded, 0 missed" in output
    assert KEY not in output

    assert [request.headers.get("authorization") for request in received] == [f"Bearer {KEY}"] * 2
    clean = (tmp_path / "cassettes/test_recorded/test_clean.yaml").read_text()
    assert "content: hello" in clean and "chat.completion" in clean
    assert KEY not in clean
    leaky = (tmp_path / "cassettes/test_recorded/test_leaky.yaml").read_text()
    assert KEY not in leaky and "please remember my key: <redacted:sent-credential>" in leaky

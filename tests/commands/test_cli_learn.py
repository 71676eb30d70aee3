"""``promptvcr learn``: two recordings of the same suite propose rules for what differs, with evidence.

The application sends, besides its question, a fresh uuid and the current time (through the
real openai SDK, to the loopback fake provider). Recorded twice, the two recordings differ in
exactly those two fields: ``learn`` proposes those two and nothing else, with the two values
seen. Nothing applies until the suite loads the file: before, a third run (a third uuid and
time) misses; with ``load_rules`` in ``conftest.py`` it replays.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fake_provider import FakeProvider
from plugin_suites import OFFLINE, run

from promptvcr import load_rules
from promptvcr.cli import main
from promptvcr.files import fileformat
from promptvcr.matching.key import request_key

APP = f'''
import datetime
import uuid

import openai

def ask(text, base_url="{OFFLINE}"):
    client = openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=base_url, max_retries=0)
    sent_at = datetime.datetime.now(datetime.timezone.utc).isoformat()
    reply = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{{"role": "user", "content": text}}],
        extra_body={{"request_id": str(uuid.uuid4()), "context": {{"sent_at": sent_at, "team": "search"}}}},
    )
    return reply.choices[0].message.content
'''

TESTS = """
import os
import pytest
from llm import ask

@pytest.mark.promptvcr
def test_asks():
    assert ask("hello", os.environ.get("UPSTREAM", "http://127.0.0.1:9/v1")).endswith("hello")
"""

CONFTEST = """
import promptvcr
import pytest

@pytest.fixture
def promptvcr_config():
    return {"rules": promptvcr.load_rules("promptvcr-rules.json")}
"""


def _sent(cassette: Path) -> dict[str, object]:
    (interaction,) = fileformat.loads(cassette.read_text(encoding="utf-8"), cassette)
    body: dict[str, object] = json.loads(interaction.request.content)
    return body


def test_two_recordings_propose_exactly_the_uuid_and_the_timestamp_and_the_third_run_replays(
    pytester: pytest.Pytester,
    provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(llm=APP, test_app=TESTS)
    monkeypatch.setenv("UPSTREAM", provider.openai_base_url)
    run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    first = pytester.path / "first"
    shutil.move(pytester.path / "cassettes", first)  # kept aside: the second recording starts afresh
    run(pytester, "--record-mode=record").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes/test_app/test_asks.yaml"
    one, two = _sent(first / "test_app/test_asks.yaml"), _sent(cassette)
    assert one["request_id"] != two["request_id"]

    capsys.readouterr()
    output = pytester.path / "promptvcr-rules.json"
    assert main(["learn", str(first), str(pytester.path / "cassettes"), "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    learned = json.loads(output.read_text(encoding="utf-8"))["learned"]
    assert sorted((entry["rule"], entry["field"], entry["looks_like"]) for entry in learned) == [
        ("drop_body_field", "context.sent_at", "timestamp"),
        ("drop_body_field", "request_id", "uuid"),
    ]
    by_field = {entry["field"]: entry for entry in learned}
    assert (by_field["request_id"]["first"], by_field["request_id"]["second"]) == (
        one["request_id"],
        two["request_id"],
    )
    assert by_field["context.sent_at"]["second"] == two["context"]["sent_at"]  # type: ignore[index]
    assert "interactions[0] POST /v1/chat/completions" in by_field["request_id"]["where"]
    assert "2 volatile field(s) proposed" in printed and "not proposed" not in printed
    assert 'promptvcr.load_rules("' in printed  # how to apply them: nothing is applied by learn

    monkeypatch.delenv("UPSTREAM")  # replay only, from now on: a third uuid and time
    run(pytester).assert_outcomes(failed=1)  # not applied silently: without the file it misses
    pytester.makeconftest(CONFTEST)
    run(pytester).assert_outcomes(passed=1)

    # Learning again with the file in place proposes nothing new: its rules leave both out.
    assert main(["learn", str(first), str(pytester.path / "cassettes"), "--output", str(output)]) == 0
    assert "1 already had the same key; 0 volatile field(s) proposed" in capsys.readouterr().out


def test_a_uuid_inside_the_prompt_is_masked_not_the_prompt_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def cassette(name: str, trace: str, seed: int) -> Path:
        path = tmp_path / name
        request = {
            "model": "m",
            "seed": seed,
            "messages": [{"role": "user", "content": f"trace {trace}: what is 2+2?"}],
        }
        interaction = {
            "request": {
                "method": "POST",
                "url": "https://api.openai.com/v1/chat/completions",
                "json": request,
            },
            "response": {"status": 200, "headers": {"content-type": "application/json"}, "json": {}},
        }
        path.write_text(fileformat.dumps([interaction], path), encoding="utf-8")
        return path

    first = cassette("a.yaml", "0b7c6a1e-35a1-4f6e-9d7b-1f0e8a9c2d11", 41)
    second = cassette("b.yaml", "9f1d2c3b-4a5e-4f60-8b7a-6c5d4e3f2a10", 97)
    output = tmp_path / "rules.json"
    assert main(["learn", str(first), str(second), "--output", str(output)]) == 0
    learned = json.loads(output.read_text(encoding="utf-8"))["learned"]
    assert sorted((entry["rule"], entry["field"], entry.get("kinds")) for entry in learned) == [
        ("drop_body_field", "seed", None),
        ("mask_in_field", "messages[0].content", ["uuid"]),
    ]
    rules = load_rules(output)
    (a,), (b,) = (fileformat.loads(path.read_text(encoding="utf-8"), path) for path in (first, second))
    assert request_key(a.request, rules) == request_key(b.request, rules)
    assert request_key(a.request) != request_key(b.request)
    capsys.readouterr()
    # A prompt that changed is never proposed: leaving it out would make two questions one.
    third = cassette("c.yaml", "0b7c6a1e-35a1-4f6e-9d7b-1f0e8a9c2d11", 41)
    third.write_text(third.read_text(encoding="utf-8").replace("2+2", "3+3"), encoding="utf-8")
    assert main(["learn", str(first), str(third), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "0 volatile field(s) proposed" in printed
    assert "not proposed (no rule explains it; check the test is deterministic)" in printed

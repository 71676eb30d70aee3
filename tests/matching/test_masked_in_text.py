"""A key the run sent, quoted inside a prompt, is masked inside that text
(``"check <redacted:sent-credential> for me"``), and the recording still replays: the
placeholder stands for any text there, whatever key the replaying test sends; the rest of
the text must still be the same."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr.errors import CassetteMiss

OFFLINE = "http://127.0.0.1:9/v1"


def _ask(key: str, base_url: str, prompt: str) -> str:
    client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return reply.choices[0].message.content or ""


@pytest.mark.parametrize(
    "key", ["plain-credential-ABCDEF12345", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk"]
)
def test_a_key_quoted_in_a_prompt_is_masked_and_the_recording_replays(
    tmp_path: Path, provider: FakeProvider, key: str
) -> None:
    path = tmp_path / "quoted.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        _ask(key, provider.openai_base_url, f"Is {key} a valid key?")
    stored = path.read_text(encoding="utf-8")
    assert key not in stored and "Is <redacted:sent-credential> a valid key?" in stored

    with promptvcr.use_cassette(path) as cassette:
        replayed = _ask(key, OFFLINE, f"Is {key} a valid key?")
    assert replayed == "echo 1: Is <redacted:sent-credential> a valid key?"
    assert [play.outcome for play in cassette.played] == ["replayed"]

    other = "test-key-for-replay-0123456789"  # the replaying test's own key
    with promptvcr.use_cassette(path) as cassette:
        assert _ask(other, OFFLINE, f"Is {other} a valid key?").startswith("echo 1:")
    assert [play.outcome for play in cassette.played] == ["replayed"]

    with pytest.raises(CassetteMiss), promptvcr.use_cassette(path):  # the text around it differs
        _ask(other, OFFLINE, f"Was {other} a valid key?")

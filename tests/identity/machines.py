"""A machine of the identity tests' own: this process made into ``user``'s machine through the
environment (HOME, USER, PROMPTVCR_HOSTNAME, PROMPTVCR_PROJECT_ROOT), read when a cassette is
entered, and a question asked through the real openai client of FakeProvider (which echoes
the last user message)."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider


def be(monkeypatch: pytest.MonkeyPatch, root: Path, user: str, host: str) -> Path:
    """Make this process the machine of ``user``: its home, project and names."""
    home = root / "home" / user
    (home / "app").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USER", user)
    monkeypatch.setenv("PROMPTVCR_HOSTNAME", host)
    monkeypatch.setenv("PROMPTVCR_PROJECT_ROOT", str(home / "app"))
    return home


def ask(fake: FakeProvider, text: str, *, stream: bool = False) -> str:
    client = openai.OpenAI(api_key="sk-test-identity", base_url=fake.openai_base_url, max_retries=0)
    messages = [{"role": "user", "content": text}]
    if not stream:
        return (
            client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message.content
            or ""
        )  # type: ignore[arg-type]
    chunks = client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)  # type: ignore[arg-type]
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)

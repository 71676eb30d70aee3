"""fuzzy matching, off by default: a prompt whose text changed a little replays the nearest
recorded answer with a warning that lists the diff; anything else still misses."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import sdk_calls

import promptvcr
from promptvcr import FuzzyMatchWarning

PROMPT = "Summarize the attached meeting notes in three bullet points, in plain English please."


def ask(prompt: str = PROMPT, model: str = "gpt-4o") -> str:
    client = sdk_calls.openai_client(sdk_calls.OFFLINE)
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content or ""


@pytest.fixture
def cassette(tmp_path: Path, provider: Any) -> tuple[Path, str]:
    path = tmp_path / "fuzzy.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        client = sdk_calls.openai_client(provider.base_url)
        reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": PROMPT}])
    return path, reply.choices[0].message.content or ""


def test_off_by_default_a_changed_prompt_misses(cassette: tuple[Path, str]) -> None:
    path, _ = cassette
    with pytest.raises(promptvcr.CassetteMiss), promptvcr.use_cassette(path):
        ask(PROMPT.replace("three", "four"))


def test_a_small_text_change_replays_and_warns_with_the_diff(cassette: tuple[Path, str]) -> None:
    path, recorded_answer = cassette
    with promptvcr.use_cassette(path, fuzzy=True) as used, pytest.warns(FuzzyMatchWarning) as caught:
        answer = ask(PROMPT.replace("three", "four"))
    assert answer == recorded_answer
    assert [p.outcome for p in used.played] == ["replayed"] and used.unplayed == []
    message = str(caught[0].message)
    assert message.startswith(
        f"promptvcr: fuzzy match in {path}: POST http://127.0.0.1:9/v1/chat/completions "
    )
    assert "replaying interactions[0], whose message text is 9" in message
    assert (
        "    messages[0].content: Summarize the attached meeting notes in [-three-]{+four+} bullet points, "
        "in plain English please." in message
    )


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"model": "gpt-4o-mini"}, "a changed model is not message text"),
        ({"prompt": "Translate this sentence into German."}, "too different"),
    ],
)
def test_anything_but_close_message_text_still_misses(
    cassette: tuple[Path, str], change: dict[str, str], why: str
) -> None:
    path, _ = cassette
    with warnings.catch_warnings():
        warnings.simplefilter("error", FuzzyMatchWarning)
        with pytest.raises(promptvcr.CassetteMiss), promptvcr.use_cassette(path, fuzzy=True):
            ask(**change)


def test_the_threshold_is_a_value(cassette: tuple[Path, str]) -> None:
    path, _ = cassette
    with pytest.raises(promptvcr.CassetteMiss), promptvcr.use_cassette(path, fuzzy=0.999):
        ask(PROMPT.replace("three", "four"))
    with pytest.raises(ValueError, match="similarity threshold in"):
        promptvcr.use_cassette(path, fuzzy=1.5)


def test_a_fuzzy_answer_is_used_once(cassette: tuple[Path, str]) -> None:
    path, _ = cassette
    caught = pytest.raises(promptvcr.CassetteMiss, match="caught this CassetteMiss")  # raised again on exit
    with caught, promptvcr.use_cassette(path, fuzzy=True), pytest.warns(FuzzyMatchWarning):
        ask(PROMPT.replace("three", "four"))
        with pytest.raises(promptvcr.CassetteMiss):
            ask(PROMPT.replace("three", "five"))

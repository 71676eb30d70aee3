"""Miss messages read like a code review: exact expected text for the four everyday causes
(a changed prompt, an added tool, a changed model, a changed URL), each through the real
openai SDK replaying a cassette recorded from the loopback provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sdk_calls

import promptvcr
from promptvcr.matching.diffs import word_diff

PROMPT = (
    "You are a travel assistant. Using only the attached notes, answer briefly: what is the capital "
    "of France, and which river runs through it? Reply in one sentence."
)
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a city up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    },
}
SEARCH = {**TOOL, "function": {**TOOL["function"], "name": "search"}}


def chat(client: Any, *, prompt: str = PROMPT, model: str = "gpt-4o", tools: list[Any] | None = None) -> None:
    client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": prompt}], tools=tools or [TOOL], temperature=0
    )


@pytest.fixture
def cassette(tmp_path: Path, provider: Any) -> Path:
    path = tmp_path / "review.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        client = sdk_calls.openai_client(provider.base_url)
        chat(client)
        chat(client, prompt="Say hello.", model="gpt-4o-mini")
    return path


def miss(path: Path, base_url: str = sdk_calls.OFFLINE, **call: Any) -> str:
    with pytest.raises(promptvcr.CassetteMiss) as raised, promptvcr.use_cassette(path):
        chat(sdk_calls.openai_client(base_url), **call)
    return str(raised.value)


def head(path: Path, body: str) -> str:
    return (
        f"promptvcr: no recorded request in {path} matches this one (record mode: replay).\n"
        f"  request: POST {sdk_calls.OFFLINE}/v1/chat/completions\n"
        f"  body:    {body}\n"
    )


TAIL = "To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: --record-mode=record)."


SUMMARY = (
    '1 messages, last: {"role": "user", "content": "You are a travel assistant. '
    "Using only the attached notes,..."
)


def test_a_changed_prompt_shows_a_word_diff_at_its_json_path(cassette: Path, provider: Any) -> None:
    changed = PROMPT.replace("capital of France", "capital of Spain")
    text = miss(cassette, prompt=changed)
    recorded_url = f"{provider.base_url}/v1/chat/completions"
    assert text == (
        head(cassette, f"model=gpt-4o, {SUMMARY}")
        + "Why it missed: the prompt changed (system, user or assistant text): messages[0].content\n"
        + f"Nearest recorded request: interactions[0] POST {recorded_url}\n"
        "  differs at (recorded -> sent):\n"
        "    messages[0].content: ...briefly: what is the capital of [-France,-]{+Spain,+} "
        "and which river runs through it?...\n"
        "Other recorded requests to this endpoint (differing fields):\n"
        "  interactions[1]: messages[0].content, model\n" + TAIL
    )


def test_an_added_tool_is_named_by_its_path(cassette: Path, provider: Any) -> None:
    text = miss(cassette, tools=[TOOL, SEARCH])
    assert (
        "  differs at (recorded -> sent):\n"
        '    tools[1]: (absent) -> {"type": "function", "function": {"name": "search", "description": ...\n'
        "Other recorded requests to this endpoint (differing fields):\n"
        "  interactions[1]: messages[0].content, model, tools[1]\n"
    ) in text
    assert f"Nearest recorded request: interactions[0] POST {provider.base_url}/v1/chat/completions\n" in text


def test_a_changed_model_is_one_field(cassette: Path, provider: Any) -> None:
    text = miss(cassette, model="gpt-4.1")
    assert text == (
        head(cassette, f"model=gpt-4.1, {SUMMARY}")
        + "Why it missed: parameters changed: model\n"
        + f"Nearest recorded request: interactions[0] POST {provider.base_url}/v1/chat/completions\n"
        "  differs at (recorded -> sent):\n"
        '    model: "gpt-4o" -> "gpt-4.1"\n'
        "Other recorded requests to this endpoint (differing fields):\n"
        "  interactions[1]: messages[0].content, model\n" + TAIL
    )


def test_a_changed_url_names_the_path(cassette: Path, provider: Any) -> None:
    text = miss(cassette, base_url=f"{sdk_calls.OFFLINE}/proxy")
    assert "  request: POST http://127.0.0.1:9/proxy/v1/chat/completions\n" in text
    assert (
        f"Nearest recorded request: interactions[0] POST {provider.base_url}/v1/chat/completions\n"
        "  differs at (recorded -> sent):\n"
        '    path: "/v1/chat/completions" -> "/proxy/v1/chat/completions"\n'
        "To record it"
    ) in text


def test_word_diff_keeps_a_few_words_of_context() -> None:
    assert word_diff("a b c d e f g h i j k l m n", "a b c d e f g X i j k l m n") == (
        "...b c d e f g [-h-]{+X+} i j k l m n"
    )
    assert word_diff("one two", "one two three") == "one two{+ three+}"

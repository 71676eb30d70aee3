"""``promptvcr explain``: each interaction's key input, the rules that shaped it, and the
interactions that share its key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cli import main
from promptvcr.commands.viewing.explain import explain
from promptvcr.files import fileformat


def _write(path: Path, bodies: list[dict[str, object]]) -> None:
    interactions = [
        Interaction(
            Request(
                "POST",
                "https://api.anthropic.com/v1/messages?beta=true",
                {"content-type": "application/json"},
                json.dumps(body).encode(),
            ),
            Response(200, {"content-type": "application/json"}, [b'{"ok": true}']),
        )
        for body in bodies
    ]
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in interactions], path))


def tool_turn(tool_id: str, text: str = "weather?") -> dict[str, object]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "w", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "sunny"}],
            },
        ],
    }


def test_explain_shows_rules_family_shared_keys_and_the_key_input(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    _write(path, [tool_turn("toolu_01A"), tool_turn("toolu_99Z"), tool_turn("toolu_01A", "rain?")])
    text = explain(path)
    blocks = text.split("\n\n")
    assert len(blocks) == 3
    first = blocks[0].splitlines()
    assert first[0] == "interactions[0] POST https://api.anthropic.com/v1/messages?beta=true"
    assert first[1].endswith("(provider family: anthropic)")
    # empty_defaults: the tool_use block's "input": {} (an empty value matches its absence)
    rules = "empty_defaults, anthropic_beta_query, single_text_part, tool_call_ids"
    assert first[2] == f"  rules that changed it: {rules}"
    assert first[3] == "  same key as interactions[1]: they replay in recorded order"
    assert '"tool_use_id": "<tool-call-1>"' in blocks[0] and '"content": "weather?"' in blocks[0]
    assert "same key as" not in blocks[2] and '"content": "rain?"' in blocks[2]
    assert first[1].split()[1] == blocks[1].splitlines()[1].split()[1] != blocks[2].splitlines()[1].split()[1]


def test_long_strings_are_shortened_unless_full(tmp_path: Path) -> None:
    path = tmp_path / "long.yaml"
    _write(path, [tool_turn("t1", "lorem ipsum " * 50)])
    assert "... (600 characters)" in explain(path)
    assert "lorem ipsum " * 49 in explain(path, full=True)


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    _write(path, [tool_turn("a")])
    assert main(["explain", str(path)]) == 0
    assert capsys.readouterr().out.startswith("interactions[0] POST https://api.anthropic.com/v1/messages")
    assert main(["explain", str(tmp_path / "nope.yaml")]) == 1
    assert "does not exist" in capsys.readouterr().out

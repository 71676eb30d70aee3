"""``promptvcr learn`` proposes a rule only for the exact field that changed (issue 54, scenario 3).

When only the user message carries a fresh uuid, the rule names ``messages[1].content``: the
system prompt (``messages[0]``) still counts, so a rewritten system prompt misses instead of
replaying the old answer. Each proposal shows its effect (the recorded requests it makes
equal), and a rule that would make two recorded requests with different prompts equal is
refused. The property test: whatever the suite, the learned rules never give two different
questions one key, and always give the two recordings of one question the same key.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr import load_rules
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cli import main
from promptvcr.files import fileformat
from promptvcr.matching.key import request_key
from promptvcr.matching.rules import default_rules
from promptvcr.matching.rules.learned import rules_of
from promptvcr.matching.volatile import propose

URL = "https://api.openai.com/v1/chat/completions"


def _body(system: str, user: str, **extra: object) -> dict[str, object]:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        **extra,
    }


def _write(path: Path, bodies: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [
        {
            "request": {"method": "POST", "url": URL, "json": body},
            "response": {"status": 200, "headers": {"content-type": "application/json"}, "json": {"n": n}},
        }
        for n, body in enumerate(bodies)
    ]
    path.write_text(fileformat.dumps(items, path), encoding="utf-8")
    return path


def _request(body: dict[str, object]) -> Request:
    return Request("POST", URL, {"content-type": "application/json"}, json.dumps(body).encode())


def test_a_fresh_uuid_in_the_user_message_drops_that_message_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path / "first.yaml", [_body("You are terse.", str(uuid.uuid4()))])
    second = _write(tmp_path / "second.yaml", [_body("You are terse.", str(uuid.uuid4()))])
    output = tmp_path / "rules.json"
    assert main(["learn", str(first), str(second), "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    learned = json.loads(output.read_text())["learned"]
    assert [(e["rule"], e["field"]) for e in learned] == [("drop_body_field", "messages[1].content")]
    effect = f"{first} interactions[0] = {second} interactions[0]"
    assert learned[0]["makes_equal"] == [effect] and f"makes equal: {effect}" in printed
    rules = load_rules(output)
    third = _request(_body("You are terse.", str(uuid.uuid4())))
    rewritten = _request(_body("You are verbose and rude.", str(uuid.uuid4())))
    (recorded,) = fileformat.loads(first.read_text(), first)
    assert request_key(third, rules) == request_key(recorded.request, rules)  # a third uuid replays
    assert request_key(rewritten, rules) != request_key(recorded.request, rules)  # a new system prompt misses


def test_a_rule_that_would_make_different_prompts_equal_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for run in ("first", "second"):
        _write(tmp_path / run / "test_trace.yaml", [_body("Be brief.", str(uuid.uuid4()))])
        _write(tmp_path / run / "test_math.yaml", [_body("Be brief.", "What is 2+2?")])
        _write(tmp_path / run / "test_more.yaml", [_body("Be brief.", "What is 3+3?")])
    output = tmp_path / "rules.json"
    assert main(["learn", str(tmp_path / "first"), str(tmp_path / "second"), "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "refused" in printed and "messages[1].content" in printed and "different prompts" in printed
    assert "test_math.yaml interactions[0] = " in printed and "test_more.yaml" in printed
    assert not output.exists()  # nothing proposed, nothing written


QUESTIONS = st.lists(
    st.text(alphabet="abcdefgh ?", min_size=3, max_size=12).filter(lambda t: " " in t.strip()),
    min_size=1,
    max_size=5,
    unique=True,
)
PLACES = st.sampled_from(["request_id", "user", "inside", "system-id", "none"])


def _asked(question: str, place: str, fresh: str) -> dict[str, object]:
    if place == "request_id":
        return _body("Be brief.", question, request_id=fresh)
    if place == "user":  # the question is asked in a second user message; the first is an id
        body = _body("Be brief.", fresh)
        body["messages"].append({"role": "user", "content": question})  # type: ignore[attr-defined]
        return body
    if place == "inside":
        return _body("Be brief.", f"{question} (trace {fresh})")
    if place == "system-id":
        return _body(f"session {fresh}", question)
    return _body("Be brief.", question)


@property_settings(100)
@given(questions=QUESTIONS, places=st.lists(PLACES, min_size=5, max_size=5), data=st.data())
def test_learned_rules_never_make_two_questions_one(
    questions: list[str], places: list[str], data: st.DataObject
) -> None:
    recorded, pairs = [], []
    for n, question in enumerate(questions):
        place = places[n]
        one = _request(_asked(question, place, str(uuid.UUID(int=data.draw(st.integers(0, 2**64))))))
        two = _request(_asked(question, place, str(uuid.UUID(int=data.draw(st.integers(0, 2**64))))))
        pairs.append(
            (
                f"t{n}",
                Interaction(one, Response(200, {}, [b"{}"])),
                Interaction(two, Response(200, {}, [b"{}"])),
            )
        )
        recorded += [(f"first t{n}", one), (f"second t{n}", two)]
    learned = propose(pairs, default_rules(), recorded)
    rules = (*default_rules(), *rules_of([p.to_data() for p in learned.proposals]))
    keys = {}
    for n, (_, one, two) in enumerate(pairs):
        keys[n] = request_key(one.request, rules)
        if not learned.refused and not learned.unexplained:
            assert request_key(two.request, rules) == keys[n]  # the two recordings of a question: one key
    by_key: dict[str, set[str]] = {}
    for n, key in keys.items():
        by_key.setdefault(key, set()).add(questions[n])
    assert all(len(asked) == 1 for asked in by_key.values()), by_key  # never two questions one key

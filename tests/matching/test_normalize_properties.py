"""Property tests of the key: what a request means decides it, how it is written never does.

Bodies are generated in the shapes real clients send (OpenAI chat with tools and tool
results, Gemini contents with function calls), then rewritten the ways real clients and
serializers differ (key order, whitespace, number spelling, Unicode form, fresh
client-generated ids), which must keep the key; and changed in what they ask (a message
text, the model, a tool schema, the temperature, the response format), which must not.
"""

from __future__ import annotations

import json
import random
import unicodedata
import uuid
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from promptvcr import Request
from promptvcr.matching.key import request_key

EXAMPLES = 300
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPENAI = "https://api.openai.com/v1/chat/completions"
GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"

texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
types = st.sampled_from(["string", "integer", "number", "boolean"])
schemas = st.dictionaries(names, types.map(lambda t: {"type": t}), min_size=1, max_size=4).map(
    lambda props: {"type": "object", "properties": props, "required": sorted(props)[:1]}
)
numbers = st.one_of(st.integers(-1000, 1000), st.floats(-10, 10, allow_nan=False, allow_infinity=False))


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    tool_names = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    tools = [
        {"type": "function", "function": {"name": n, "description": draw(texts), "parameters": draw(schemas)}}
        for n in tool_names
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": draw(texts)},
        {"role": "user", "content": draw(texts)},
    ]
    for _ in range(draw(st.integers(0, 2))):
        calls = [
            {
                "id": f"call_{uuid.UUID(int=draw(st.integers(0, 2**64))).hex[:24]}",
                "type": "function",
                "function": {
                    "name": draw(st.sampled_from(tool_names)),
                    "arguments": json.dumps({"q": draw(texts)}),
                },
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls)
        messages.append({"role": "user", "content": draw(texts)})
    body: dict[str, Any] = {
        "model": draw(st.sampled_from(["gpt-4o", "gpt-4o-mini", "gpt-5", "o3"])),
        "messages": messages,
        "tools": tools,
        "temperature": draw(st.floats(0, 2, allow_nan=False).map(lambda t: round(t, 3))),
        "max_tokens": draw(st.integers(1, 4096)),
    }
    if draw(st.booleans()):
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "out", "schema": draw(schemas)},
        }
    return body


@st.composite
def gemini_bodies(draw: st.DrawFn) -> dict[str, Any]:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": draw(texts)}]}]
    for _ in range(draw(st.integers(0, 2))):
        call_id = f"pyd_ai_{uuid.UUID(int=draw(st.integers(0, 2**64))).hex}"
        name = draw(names)
        contents.append(
            {
                "role": "model",
                "parts": [{"functionCall": {"id": call_id, "name": name, "args": {"q": draw(texts)}}}],
            }
        )
        contents.append(
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": call_id, "name": name, "response": {"r": draw(texts)}}}
                ],
            }
        )
    return {
        "contents": contents,
        "systemInstruction": {"role": "user", "parts": [{"text": draw(texts)}]},
        "generationConfig": {
            "temperature": draw(st.floats(0, 2, allow_nan=False).map(lambda t: round(t, 3))),
            "maxOutputTokens": draw(st.integers(1, 8192)),
        },
    }


# Meaningless rewrites ---------------------------------------------------------------------


def shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def unicode_form(value: Any, form: str) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize(form, value)  # type: ignore[arg-type]
    if isinstance(value, dict):
        return {k: unicode_form(v, form) for k, v in value.items()}
    if isinstance(value, list):
        return [unicode_form(v, form) for v in value]
    return value


def spelled(value: Any, rng: random.Random) -> str:
    """JSON text with random whitespace and numbers spelled differently (1 / 1.0 / 1e0)."""
    space = rng.choice(["", " ", "\n  ", "\t"])
    if isinstance(value, dict):
        inner = f",{space}".join(f"{json.dumps(k)}{space}:{space}{spelled(v, rng)}" for k, v in value.items())
        return "{" + space + inner + space + "}"
    if isinstance(value, list):
        return "[" + f",{space}".join(spelled(v, rng) for v in value) + "]"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=rng.random() < 0.5)
    if isinstance(value, int) or float(value).is_integer():
        return rng.choice([str(int(value)), f"{int(value)}.0", f"{int(value)}e0", f"{int(value)}.000"])
    return rng.choice(
        [repr(value), f"{value:.17g}", f"{value:e}" if float(f"{value:e}") == value else repr(value)]
    )


def fresh_ids(body: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    text = json.dumps(body)
    ids = _ids(body)
    for old in ids:
        prefix = "pyd_ai_" if old.startswith("pyd_ai_") else "call_"
        text = text.replace(json.dumps(old), json.dumps(prefix + uuid.UUID(int=rng.getrandbits(128)).hex))
    return json.loads(text)  # type: ignore[no-any-return]


def _ids(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("id", "tool_call_id") and isinstance(v, str) and v.startswith(("call_", "pyd_ai_")):
                found.add(v)
            found |= _ids(v)
    elif isinstance(value, list):
        for v in value:
            found |= _ids(v)
    return found


def key(url: str, text: str | bytes) -> str:
    content = text.encode() if isinstance(text, str) else text
    return request_key(Request("POST", url, {"content-type": "application/json"}, content))


def rewritten(body: dict[str, Any], seed: int, form: str) -> str:
    rng = random.Random(seed)
    return spelled(shuffled(unicode_form(fresh_ids(body, rng), form), rng), rng)


@SETTINGS
@given(chat_bodies(), st.integers(0, 2**32), st.sampled_from(["NFC", "NFD"]))
def test_chat_rewrites_never_change_the_key(body: dict[str, Any], seed: int, form: str) -> None:
    assert key(OPENAI, rewritten(body, seed, form)) == key(OPENAI, json.dumps(body))


@SETTINGS
@given(gemini_bodies(), st.integers(0, 2**32), st.sampled_from(["NFC", "NFD"]))
def test_gemini_rewrites_never_change_the_key(body: dict[str, Any], seed: int, form: str) -> None:
    assert key(GEMINI, rewritten(body, seed, form)) == key(GEMINI, json.dumps(body))


# Meaningful changes ---------------------------------------------------------------------


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@SETTINGS
@given(chat_bodies(), st.data())
def test_changing_any_message_text_changes_the_key(body: dict[str, Any], data: st.DataObject) -> None:
    spots = [i for i, m in enumerate(body["messages"]) if isinstance(m.get("content"), str)]
    i = data.draw(st.sampled_from(spots))
    new = data.draw(texts)
    assume(_nfc(new) != _nfc(body["messages"][i]["content"]))
    changed = json.loads(json.dumps(body))
    changed["messages"][i]["content"] = new
    assert key(OPENAI, json.dumps(changed)) != key(OPENAI, json.dumps(body))


@SETTINGS
@given(chat_bodies(), st.data())
def test_changing_model_temperature_tools_or_format_changes_the_key(
    body: dict[str, Any], data: st.DataObject
) -> None:
    changed = json.loads(json.dumps(body))
    what = data.draw(
        st.sampled_from(["model", "temperature", "tool_schema", "tool_added", "response_format"])
    )
    if what == "model":
        changed["model"] = data.draw(st.sampled_from(["gpt-4.1", "claude-sonnet-4-5", body["model"] + "-2"]))
    elif what == "temperature":
        changed["temperature"] = data.draw(
            st.floats(0, 2, allow_nan=False).filter(lambda t: t != body["temperature"])
        )
    elif what == "tool_schema":
        props = changed["tools"][0]["function"]["parameters"]["properties"]
        prop = data.draw(st.sampled_from(sorted(props)))
        props[prop]["type"] = data.draw(types.filter(lambda t: t != props[prop]["type"]))
    elif what == "tool_added":
        changed["tools"].append(
            {"type": "function", "function": {"name": "extra_tool", "parameters": data.draw(schemas)}}
        )
    else:
        old = body.get("response_format")
        changed["response_format"] = data.draw(
            st.one_of(
                st.just({"type": "json_object"}),
                schemas.map(lambda s: {"type": "json_schema", "json_schema": {"name": "o", "schema": s}}),
            ).filter(lambda f: f != old)
        )
    assert key(OPENAI, json.dumps(changed)) != key(OPENAI, json.dumps(body))


@SETTINGS
@given(gemini_bodies(), st.data())
def test_changing_gemini_text_or_function_arguments_changes_the_key(
    body: dict[str, Any], data: st.DataObject
) -> None:
    changed = json.loads(json.dumps(body))
    part = changed["contents"][data.draw(st.integers(0, len(changed["contents"]) - 1))]["parts"][0]
    new = data.draw(texts)
    if "text" in part:
        assume(_nfc(new) != _nfc(part["text"]))
        part["text"] = new
    elif "functionCall" in part:
        assume(_nfc(new) != _nfc(part["functionCall"]["args"]["q"]))
        part["functionCall"]["args"]["q"] = new
    else:
        assume(_nfc(new) != _nfc(part["functionResponse"]["response"]["r"]))
        part["functionResponse"]["response"]["r"] = new
    assert key(GEMINI, json.dumps(changed)) != key(GEMINI, json.dumps(body))

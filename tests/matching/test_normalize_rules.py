"""Every default rule, each on a real corpus interaction: the meaningless variant a real
client sends keeps the key, a meaningful change of the same request changes it."""

from __future__ import annotations

import base64
import json
import re
import unicodedata
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from promptvcr import DEFAULT_RULES, Request, drop_seed
from promptvcr.importers import convert_vcr_file
from promptvcr.matching.key import request_key
from promptvcr.matching.rules import edit_rules, family_of, rule_name

CORPUS = Path(__file__).parents[1] / "corpus" / "pydantic-ai"


@cache
def recorded(path: str, index: int) -> Request:
    report = convert_vcr_file(CORPUS / path)
    assert report.error is None, report.error
    return report.interactions[index].request


def body_of(request: Request) -> Any:
    return json.loads(request.content)


def json_requests() -> list[tuple[str, int, Request]]:
    """Every request of the subset whose body is a JSON object."""
    found = []
    for path in sorted(CORPUS.glob("*/*.yaml")):
        for index, interaction in enumerate(convert_vcr_file(path).interactions):
            try:
                body = json.loads(interaction.request.content)
            except ValueError:
                continue
            if isinstance(body, dict):
                found.append((str(path.relative_to(CORPUS)), index, interaction.request))
    return found


def with_body(request: Request, body: Any) -> Request:
    return Request(request.method, request.url, dict(request.headers), json.dumps(body).encode())


def same(a: Request, b: Request) -> bool:
    return request_key(a) == request_key(b)


def without(rule: str) -> tuple[Any, ...]:
    return edit_rules(DEFAULT_RULES, remove=[rule])


def test_anthropic_beta_query_is_not_part_of_the_key() -> None:
    sent = recorded("anthropic/test_anthropic_cache_count_tokens.yaml", 1)
    assert "beta=true" in sent.url
    new_sdk = Request(sent.method, sent.url.replace("?beta=true", ""), sent.headers, sent.content)
    assert same(sent, new_sdk)
    assert request_key(sent, without("anthropic_beta_query")) != request_key(
        new_sdk, without("anthropic_beta_query")
    )
    body = body_of(sent)
    body["max_tokens"] += 1
    assert not same(sent, with_body(new_sdk, body))


def test_vertex_project_and_location_are_not_part_of_the_key() -> None:
    sent = recorded(
        "google-vertex/test_multimodal_tool_return_matrix[direct-url-image-google_vertex].yaml", 0
    )
    moved = sent.url.replace(
        "projects/gen-lang-client-0498264908/locations/global", "projects/ci-proj/locations/us-east5"
    )
    assert moved != sent.url
    assert same(sent, Request(sent.method, moved, sent.headers, sent.content))
    other_model = sent.url.replace("gemini-3-flash-preview", "gemini-2.5-pro")
    assert not same(sent, Request(sent.method, other_model, sent.headers, sent.content))


def test_mistral_tools_without_type_are_function_tools() -> None:
    sent = recorded("mistral/test_tool_choice_matrix[auto-mistral].yaml", 0)
    body = body_of(sent)
    assert all("type" not in tool for tool in body["tools"])
    sdk = {**body, "tools": [{"type": "function", **tool} for tool in body["tools"]]}
    assert same(sent, with_body(sent, sdk))
    renamed = json.loads(json.dumps(body))
    renamed["tools"][0]["function"]["name"] += "_v2"
    assert not same(sent, with_body(sent, renamed))


def _single_text_part_messages() -> list[tuple[str, int, int]]:
    found = []
    for path, index, request in json_requests():
        for position, message in enumerate(body_of(request).get("messages") or []):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list) and len(content) == 1 and set(content[0]) == {"type", "text"}:
                found.append((path, index, position))
    return found


def test_a_single_text_part_is_the_same_as_the_string() -> None:
    cases = _single_text_part_messages()
    assert len(cases) >= 3  # anthropic, openai and groq bodies carry this form
    for path, index, position in cases:
        sent = recorded(path, index)
        body = body_of(sent)
        as_string = json.loads(json.dumps(body))
        as_string["messages"][position]["content"] = body["messages"][position]["content"][0]["text"]
        assert same(sent, with_body(sent, as_string)), path
        changed = json.loads(json.dumps(as_string))
        changed["messages"][position]["content"] += " (changed)"
        assert not same(sent, with_body(sent, changed)), path


def test_client_generated_tool_call_ids_are_placeholders() -> None:
    sent = recorded("google-gla/test_tool_choice_matrix[auto-google].yaml", 1)
    text = sent.content.decode()
    ids = sorted(set(re.findall(r"pyd_ai_[0-9a-f]{32}", text)))
    assert ids  # pydantic-ai invents these on every run
    rerun = text
    for old in ids:
        rerun = rerun.replace(old, f"pyd_ai_{uuid.uuid4().hex}")
    assert same(sent, Request(sent.method, sent.url, sent.headers, rerun.encode()))
    # A result that no longer answers the call it answered is a different conversation.
    body = body_of(sent)
    for content in body["contents"]:
        for part in content["parts"]:
            if "functionResponse" in part:
                part["functionResponse"]["id"] = "pyd_ai_unrelated"
    assert not same(sent, with_body(sent, body))


def test_openai_tool_call_ids_keep_their_links() -> None:
    for path in sorted(CORPUS.glob("*/*.yaml")):
        for index, interaction in enumerate(convert_vcr_file(path).interactions):
            if b'"tool_call_id"' not in interaction.request.content:
                continue
            sent = interaction.request
            text = sent.content.decode()
            ids = set(re.findall(r'"tool_call_id": "([^"]+)"', text))
            rerun = text
            for old in ids:
                rerun = rerun.replace(f'"{old}"', f'"call_{uuid.uuid4().hex[:24]}"')
            assert same(sent, Request(sent.method, sent.url, sent.headers, rerun.encode())), (path, index)
            return
    pytest.fail("no chat request with a tool result in the corpus subset")


def test_base64_payloads_are_keyed_by_their_decoded_bytes() -> None:
    sent = recorded("openai/test_document_url_input.yaml", 1)
    text = sent.content.decode()
    match = re.search(r"data:application/pdf;base64,([A-Za-z0-9+/=]+)", text)
    assert match is not None and len(match.group(1)) > 1000
    payload = match.group(1)
    raw = base64.b64decode(payload)
    url_safe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert same(sent, Request(sent.method, sent.url, sent.headers, text.replace(payload, url_safe).encode()))
    other = base64.b64encode(raw[:-1] + bytes([raw[-1] ^ 1])).decode()
    assert not same(sent, Request(sent.method, sent.url, sent.headers, text.replace(payload, other).encode()))


def _nfd(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFD", value)
    if isinstance(value, list):
        return [_nfd(v) for v in value]
    if isinstance(value, dict):
        return {k: _nfd(v) for k, v in value.items()}
    return value


def test_text_is_compared_in_nfc() -> None:
    checked = 0
    for path, _, sent in json_requests():
        body = body_of(sent)
        decomposed = _nfd(body)
        if decomposed == body:
            continue
        checked += 1
        assert same(sent, with_body(sent, decomposed)), path
        strict = without("nfc_text")
        assert request_key(sent, strict) != request_key(with_body(sent, decomposed), strict)
    assert checked >= 1


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _snake_keys(value: Any, parent: str = "") -> Any:
    if isinstance(value, list):
        return [_snake_keys(v, parent) for v in value]
    if not isinstance(value, dict):
        return value
    if _snake(parent) in ("args", "response", "properties", "parameters_json_schema", "response_json_schema"):
        return value if parent != "properties" else {k: _snake_keys(v) for k, v in value.items()}
    return {_snake(k): _snake_keys(v, k) for k, v in value.items()}


def test_google_field_names_in_snake_and_camel_case_are_the_same() -> None:
    sent = recorded("google-gla/test_tool_choice_matrix[auto-google].yaml", 1)
    body = body_of(sent)
    snake = _snake_keys(body)
    assert "function_declarations" in json.dumps(snake) and "functionDeclarations" in json.dumps(body)
    assert same(sent, with_body(sent, snake))
    renamed = json.loads(
        json.dumps(body).replace('"functionCall": {"args": {', '"functionCall": {"args": {"extra": 1, ', 1)
    )
    assert renamed != body and not same(sent, with_body(sent, renamed))


def test_google_empty_generation_config_is_no_config() -> None:
    sent = recorded("google-gla/test_tool_choice_matrix[auto-google].yaml", 0)
    body = body_of(sent)
    body.pop("generationConfig", None)
    assert same(with_body(sent, {**body, "generationConfig": {}}), with_body(sent, body))
    assert not same(with_body(sent, {**body, "generationConfig": {"temperature": 0}}), with_body(sent, body))


def test_google_schema_types_are_case_insensitive_and_one_tool_object_is_a_list() -> None:
    # An older pydantic-ai sent one tools object with lower-case OpenAPI types;
    # google-genai sends a list with STRING/OBJECT for the same tool.
    sent = recorded("google-gla/test_multiple_agent_tool_calls.yaml", 0)
    body = body_of(sent)
    assert isinstance(body["tools"], dict) and '"type": "string"' in json.dumps(body)
    text = json.dumps({**body, "tools": [body["tools"]]})
    sdk = json.loads(re.sub(r'"type": "([a-z]+)"', lambda m: f'"type": "{m.group(1).upper()}"', text))
    assert same(sent, with_body(sent, sdk))
    retyped = json.loads(json.dumps(body).replace('"type": "string"', '"type": "integer"', 1))
    assert not same(sent, with_body(sent, retyped))


def test_multipart_boundaries_do_not_matter_but_parts_do() -> None:
    sent = recorded("openai/test_answer_webrtc_offer.yaml", 0)
    boundary = sent.headers["content-type"].split("boundary=")[1]
    fresh = uuid.uuid4().hex
    headers = {**sent.headers, "content-type": f"multipart/form-data; boundary={fresh}"}
    rebuilt = Request(sent.method, sent.url, headers, sent.content.replace(boundary.encode(), fresh.encode()))
    assert same(sent, rebuilt)
    reworded = rebuilt.content.replace(b"Answer in two words.", b"Answer in three words.")
    assert not same(sent, Request(sent.method, sent.url, headers, reworded))
    # The JSON part compares by meaning too: whitespace and key order are free.
    compact = rebuilt.content.replace(
        b'{"model": "gpt-realtime", "type": "realtime",', b'{"type":"realtime","model":"gpt-realtime",'
    )
    assert compact != rebuilt.content and same(sent, Request(sent.method, sent.url, headers, compact))
    # ...and so does the same JSON sent as a plain form field (openai's SDK sends it so).
    plain = rebuilt.content.replace(
        b'name="session"\r\nContent-Type: application/json\r\n', b'name="session"\r\n'
    )
    assert plain != rebuilt.content and same(sent, Request(sent.method, sent.url, headers, plain))


def test_every_default_rule_is_named_and_documented_with_its_real_case() -> None:
    names = [rule_name(rule) for rule in DEFAULT_RULES]
    assert len(set(names)) == len(names)
    for rule in DEFAULT_RULES[2:]:
        assert rule.__doc__ and "Real case" in rule.__doc__, rule_name(rule)


def test_provider_family_selection_by_host_then_path() -> None:
    assert family_of("api.anthropic.com", "/v1/messages") == "anthropic"
    assert family_of("localhost:8787", "/anthropic/v1/messages") == "anthropic"
    assert family_of("127.0.0.1:5000", "/v1beta/models/gemini-2.5-flash:generateContent") == "google"
    assert family_of("api.openai.com", "/v1/chat/completions") == "openai"
    assert family_of("example.com", "/v1/chat/completions") == ""
    # An anthropic-only rule leaves other providers' query alone.
    a = Request("POST", "https://api.openai.com/v1/responses?beta=true", {}, b"{}")
    b = Request("POST", "https://api.openai.com/v1/responses", {}, b"{}")
    assert not same(a, b)


def test_the_cheap_gates_never_skip_what_the_rules_must_see() -> None:
    # %-escaped NFD and NFC in a form body are the same text.
    form = {"content-type": "application/x-www-form-urlencoded"}
    nfd = Request("POST", "https://x/v1/t", form, b"q=cafe%CC%81")
    nfc = Request("POST", "https://x/v1/t", form, b"q=caf%C3%A9")
    assert same(nfd, nfc)
    # \\u-escaped JSON text is non-ASCII text even when the bytes are ASCII.
    a = with_body(nfd, {"messages": [{"role": "user", "content": "cafe\u0301"}]})
    b = Request("POST", "https://x/v1/t", {}, '{"messages":[{"role":"user","content":"caf\u00e9"}]}'.encode())
    assert a.content.isascii() and same(a, b)
    # Parts built by hand carry no bytes: every rule walks them.
    from promptvcr import KeyParts
    from promptvcr.matching.rules import nfc_text, tool_call_ids

    parts = KeyParts(
        "POST", "/v1/t", (), {"messages": [{"role": "tool", "tool_call_id": "x", "content": "e\u0301"}]}
    )
    assert tool_call_ids(nfc_text(parts)).body == {
        "messages": [{"role": "tool", "tool_call_id": "<tool-call-1>", "content": "\u00e9"}]
    }


def test_credentials_and_caller_ids_are_not_part_of_the_key_but_a_seed_is() -> None:
    sent = recorded("groq/test_groq_prompted_output.yaml", 0)
    body = body_of(sent)
    framework = {**body, "user": "user-8f3a", "metadata": {"user_id": "u-1"}, "safety_identifier": "s-9"}
    assert same(sent, with_body(sent, framework))
    keyed = Request(sent.method, sent.url + "?api_key=gsk-live-123", sent.headers, sent.content)
    assert same(sent, keyed)
    seeded = [with_body(sent, {**body, "seed": n}) for n in (1, 2)]
    assert not same(*seeded)  # a seed changes the answer: part of the key by default
    loose = edit_rules(DEFAULT_RULES, add=[drop_seed])
    assert request_key(seeded[0], loose) == request_key(seeded[1], loose)

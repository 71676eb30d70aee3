"""Every scripted rendering compared with real recorded traffic of the same kind, from the
pydantic-ai corpus (vcrpy cassettes, converted by ``import_vcr``): the same field set and, for a
stream, the same sequence of events, so the rendering cannot drift from the real wire format.

Each case renders a reply that says what the recording says, for the recorded request itself,
and compares the two. The differences that remain are listed case by case with their reason,
and must be exactly those: a new field on either side fails the test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from shapes import body, events, field_paths, kind, recorded, sequence

from promptvcr import reply
from promptvcr.cassettes.models import Response
from promptvcr.scripted import Reply
from promptvcr.scripted.scripts import Script


def render(answer: Reply, request: Any) -> Response:
    script = Script([answer])
    response = script.answer(request, script.cassette())
    assert response is not None
    return response


@dataclasses.dataclass(frozen=True)
class Case:
    file: str
    position: int
    answer: Reply
    #: Fields only the recording has, and only the rendering has (kind -> paths; "" for a JSON body).
    real_only: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    ours_only: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    #: Event kinds of the recording that this reply cannot say (a server tool, a file search).
    unsaid: tuple[str, ...] = ()
    #: Event kinds whose fields are another API's (an OpenAI-compatible clone), not compared.
    foreign: tuple[str, ...] = ()
    request_changes: dict[str, Any] = dataclasses.field(default_factory=dict)


ANNOTATIONS = {"annotations[].file_id", "annotations[].filename", "annotations[].index", "annotations[].type"}
FILE_SEARCH_TOOL = {
    f"response.tools[].{name}"
    for name in (
        "filters",
        "max_num_results",
        "ranking_options",
        "ranking_options.ranker",
        "ranking_options.score_threshold",
    )
}

SLA_METRICS = {"sla_metrics", "sla_metrics.ts_us", "sla_metrics.ttft_ms"}
#: What OpenAI sends in every chunk and the compatible API does not.
OPENAI_CHUNK = {"service_tier", "choices[].logprobs"}

CASES = {
    "openai chat, tool call": Case(
        "google-gla/test_multiple_agent_tool_calls.yaml",
        2,
        reply(tool_calls=[("get_capital", {"country": "England"})]),
    ),
    "openai chat, text": Case(
        "openai/test_document_url_input.yaml", 1, reply("The document is a dummy PDF.")
    ),
    # The corpus holds no chat stream from api.openai.com: an OpenAI-compatible one is the
    # reference, without the fields only OpenAI sends (service_tier, logprobs, the refusal and
    # empty content of the first delta, usage: null) and with its own (sla_metrics). It always
    # sends the usage chunk; OpenAI only when asked, so the request asks.
    "openai chat stream": Case(
        "huggingface/test_cancel_recorded_provider_stream[huggingface].yaml",
        1,
        reply("Paris"),
        real_only={k: SLA_METRICS for k in ("chunk:role", "chunk:content", "chunk:finish", "chunk:usage")},
        ours_only={
            "chunk:role": OPENAI_CHUNK | {"usage", "choices[].delta.content", "choices[].delta.refusal"},
            "chunk:content": OPENAI_CHUNK | {"usage"},
            "chunk:finish": OPENAI_CHUNK | {"usage"},
            "chunk:usage": {"service_tier"}
            | {f"usage.completion_tokens_details.{n}" for n in ("accepted_prediction_tokens", "audio_tokens")}
            | {
                f"usage.completion_tokens_details.{n}"
                for n in ("reasoning_tokens", "rejected_prediction_tokens")
            }
            | {"usage.prompt_tokens_details.audio_tokens", "usage.prompt_tokens_details.cached_tokens"},
        },
        request_changes={"stream_options": {"include_usage": True}},
    ),
    # Reasoning is encrypted_content only when the request includes it; billing is per account.
    # The recording's summary is empty (not asked for), ours holds the thinking.
    "openai responses, reasoning and tool call": Case(
        "openai/test_thinking_with_tool_calls_from_other_model.yaml",
        0,
        reply(tool_calls=[("get_country", {})], thinking="The user asks for the country."),
        real_only={"": {"billing", "billing.payer", "output[].encrypted_content"}},
        ours_only={"": {"output[].summary[].text", "output[].summary[].type"}},
    ),
    "openai responses stream, text": Case(
        "openai/test_openai_responses_model_file_search_tool_stream.yaml",
        3,
        reply("The capital of France is Paris."),
        real_only={
            "response.created": FILE_SEARCH_TOOL,
            "response.in_progress": FILE_SEARCH_TOOL,
            "response.output_text.delta": {"obfuscation"},  # random padding against side channels
            "response.content_part.done:output_text": {f"part.{p}" for p in ANNOTATIONS},
            "response.output_item.done:message": {f"item.content[].{p}" for p in ANNOTATIONS},
            "response.completed": FILE_SEARCH_TOOL
            | {f"response.output[].content[].{p}" for p in ANNOTATIONS}
            | {"response.output[].queries", "response.output[].results"},
        },
        unsaid=(
            "response.output_item.added:file_search_call",
            "response.file_search_call.in_progress",
            "response.file_search_call.searching",
            "response.file_search_call.completed",
            "response.output_item.done:file_search_call",
            "response.output_text.annotation.added",
        ),
    ),
    # DeepSeek's Responses API streams a function call as OpenAI does; its reasoning items
    # and its response object are its own, so only the function call's events are compared.
    "openai responses stream, tool call": Case(
        "deepseek/test_deepseek_responses[function_tool_stream].yaml",
        0,
        reply(tool_calls=[("get_temperature", {"city": "Tokyo"})]),
        unsaid=(
            "response.output_item.added:reasoning",
            "response.content_part.added:reasoning_text",
            "response.reasoning_text.delta",
            "response.reasoning_text.done",
            "response.content_part.done:reasoning_text",
            "response.output_item.done:reasoning",
        ),
        foreign=("response.created", "response.in_progress", "response.completed"),
    ),
    "anthropic, text": Case("anthropic/test_text_document_url_input.yaml", 1, reply("The file says hello.")),
    # The newest models add a tool caller, stop details and the inference region.
    "anthropic, text and tool use (newest model)": Case(
        "anthropic/test_live_fallback_failover_capability_load_and_recovery.yaml",
        1,
        reply(
            "I'll look up the refund policy.",
            tool_calls=[("lookup_refund_policy", {"order_id": "order-123"})],
        ),
        real_only={
            "": {
                "content[].caller",
                "content[].caller.type",
                "stop_details",
                "usage.inference_geo",
                "usage.output_tokens_details",
                "usage.output_tokens_details.thinking_tokens",
            }
        },
    ),
    "anthropic stream, thinking and text": Case(
        "anthropic/test_anthropic_web_fetch_tool_stream.yaml",
        0,
        reply("Pydantic AI is a Python agent framework.", thinking="The user wants me to fetch the page."),
        real_only={
            "message_delta": {
                "usage.server_tool_use",
                "usage.server_tool_use.web_fetch_requests",
                "usage.server_tool_use.web_search_requests",
            }
        },
        unsaid=("content_block_start:server_tool_use", "content_block_start:web_fetch_tool_result"),
    ),
    "gemini, function call": Case(
        "google-gla/test_multiple_agent_tool_calls.yaml",
        0,
        reply(tool_calls=[("get_capital", {"country": "France"})]),
        real_only={"": {"candidates[].avgLogprobs"}},  # gemini-2.0 only
        ours_only={"": {"responseId"}},  # sent by every newer model
    ),
    "gemini stream, text": Case(
        "google-gla/test_google_model_stream.yaml", 0, reply("The capital of France is Paris.")
    ),
}


def _changed(request: Any, changes: dict[str, Any]) -> Any:
    if not changes:
        return request
    content = json.dumps({**json.loads(request.content), **changes}).encode()
    return dataclasses.replace(request, content=content)


def _fields_by_kind(stream: list[dict[str, Any]]) -> dict[str, set[str]]:
    fields: dict[str, set[str]] = {}
    for event in stream:
        fields.setdefault(kind(event), set()).update(field_paths(event.get("data")))
    return fields


def _without_pings(kinds: list[str]) -> list[str]:
    """Anthropic's keep-alive ``ping`` comes wherever the server sends it; the sequence without it."""
    return sequence([{"event": k, "data": {}} for k in kinds if k != "ping"])


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_the_rendering_has_the_shape_of_real_traffic(converted_corpus: Path, case: Case) -> None:
    interaction = recorded(converted_corpus, case.file, case.position)
    real = interaction.response
    ours = render(case.answer, _changed(interaction.request, case.request_changes))
    assert (ours.status, real.status) == (200, 200)
    assert ours.is_event_stream == real.is_event_stream
    if not real.is_event_stream:
        assert ours.content_type == real.content_type
        real_fields, our_fields = field_paths(body(real)), field_paths(body(ours))
        assert real_fields - our_fields == case.real_only.get("", set())
        assert our_fields - real_fields == case.ours_only.get("", set())
        return

    real_events = [e for e in events(real) if kind(e) not in case.unsaid]
    our_events = events(ours)
    if case.unsaid and any(k.startswith("content_block_start") for k in case.unsaid):
        real_events = _drop_anthropic_blocks(events(real), case.unsaid)
    # The same events in the same order (a run of deltas counted once).
    assert _without_pings([kind(e) for e in our_events]) == _without_pings([kind(e) for e in real_events])
    real_fields, our_fields = _fields_by_kind(real_events), _fields_by_kind(our_events)
    for name in our_fields:
        if name in case.foreign:
            continue
        assert real_fields[name] - our_fields[name] == case.real_only.get(name, set()), name
        assert our_fields[name] - real_fields[name] == case.ours_only.get(name, set()), name


def _drop_anthropic_blocks(stream: list[dict[str, Any]], unsaid: tuple[str, ...]) -> list[dict[str, Any]]:
    """The stream without the content blocks (start, deltas, stop) of the kinds in ``unsaid``."""
    dropped = {e["data"]["index"] for e in stream if kind(e) in unsaid}
    return [e for e in stream if not (isinstance(e["data"], dict) and e["data"].get("index") in dropped)]


def test_every_endpoint_and_both_forms_are_compared() -> None:
    """The table covers chat, Responses, Anthropic and Gemini, each as JSON and as a stream."""
    covered = {(case.file.split("/")[0], "stream" in name) for name, case in CASES.items()}
    families = {name.split(",")[0].removesuffix(" stream") for name in CASES}
    assert families >= {"openai chat", "openai responses", "anthropic", "gemini"}
    assert {stream for _, stream in covered} == {True, False}
    for family in ("openai chat", "openai responses", "anthropic", "gemini"):
        forms = {"stream" in name for name in CASES if name.startswith(family)}
        assert forms == {True, False}, family

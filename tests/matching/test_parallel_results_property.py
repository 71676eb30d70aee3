"""Property: the results of one turn's parallel tool calls are a set keyed by call id.

Turns shaped as the four APIs send them (OpenAI chat ``role: tool`` messages, Responses
``function_call_output`` items, Anthropic ``tool_result`` blocks, Gemini ``functionResponse``
parts), with fresh client ids each time: sending the results in any order keeps the key;
sending two different results under each other's call ids changes it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr import Request
from promptvcr.matching.key import request_key

URLS = {
    "chat": "https://api.openai.com/v1/chat/completions",
    "responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
}
names = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10)
outputs = st.text(min_size=0, max_size=30)


def body(api: str, calls: list[tuple[str, str, str]], order: list[int]) -> dict[str, Any]:
    """A turn answering ``calls`` (id, tool, output), its results sent in ``order``."""
    if api == "chat":
        assistant = {
            "role": "assistant",
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": "{}"}} for i, n, _ in calls
            ],
        }
        results = [{"role": "tool", "tool_call_id": calls[k][0], "content": calls[k][2]} for k in order]
        return {"model": "m", "messages": [{"role": "user", "content": "go"}, assistant, *results]}
    if api == "responses":
        made = [{"type": "function_call", "call_id": i, "name": n, "arguments": "{}"} for i, n, _ in calls]
        results = [
            {"type": "function_call_output", "call_id": calls[k][0], "output": calls[k][2]} for k in order
        ]
        return {"model": "m", "input": [{"role": "user", "content": "go"}, *made, *results]}
    if api == "anthropic":
        uses = [{"type": "tool_use", "id": i, "name": n, "input": {}} for i, n, _ in calls]
        results = [{"type": "tool_result", "tool_use_id": calls[k][0], "content": calls[k][2]} for k in order]
        turns = [{"role": "user", "content": "go"}, {"role": "assistant", "content": uses}]
        return {"model": "m", "max_tokens": 9, "messages": [*turns, {"role": "user", "content": results}]}
    made = [{"functionCall": {"id": i, "name": n, "args": {}}} for i, n, _ in calls]
    results = [{"functionResponse": {"id": calls[k][0], "name": calls[k][1], "response": {"r": calls[k][2]}}}
               for k in order]  # fmt: skip
    turns = [{"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": made}]
    return {"contents": [*turns, {"role": "user", "parts": results}]}


def key(api: str, data: dict[str, Any]) -> str:
    return request_key(
        Request("POST", URLS[api], {"content-type": "application/json"}, json.dumps(data).encode())
    )


@given(
    api=st.sampled_from(sorted(URLS)),
    tools=st.lists(st.tuples(names, outputs), min_size=2, max_size=4),
    order=st.randoms(use_true_random=False),
)
@property_settings(80)
def test_any_order_of_the_results_is_the_same_key_and_a_swapped_pairing_is_not(
    api: str, tools: list[tuple[str, str]], order: Any
) -> None:
    def calls() -> list[tuple[str, str, str]]:  # ids a client invents afresh on every run
        return [(f"call_{uuid.uuid4().hex[:8]}", name, output) for name, output in tools]

    in_order = key(api, body(api, calls(), list(range(len(tools)))))
    shuffled = list(range(len(tools)))
    order.shuffle(shuffled)
    assert key(api, body(api, calls(), shuffled)) == in_order

    if tools[0][1] != tools[1][1]:  # two different results under each other's ids
        swapped = calls()
        swapped[0], swapped[1] = (
            (swapped[0][0], swapped[0][1], tools[1][1]),
            (swapped[1][0], swapped[1][1], tools[0][1]),
        )
        assert key(api, body(api, swapped, list(range(len(tools))))) != in_order

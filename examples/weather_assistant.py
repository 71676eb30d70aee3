"""An assistant that answers weather questions, calling a tool through OpenAI chat completions.

The loop is the usual one: send the conversation with the tool's schema; when the model
asks for the tool, run it, append its result and ask again; stop at the first plain answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

MODEL = "gpt-5-mini"
MAX_TURNS = 4

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def get_weather(city: str) -> str:
    """A stand-in weather service: the tool the model calls."""
    return f"Sunny, 22C in {city}"


TOOLS: dict[str, Callable[..., str]] = {"get_weather": get_weather}


@dataclass
class Answer:
    text: str
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Each tool the model called, with its arguments, in order."""


@dataclass
class WeatherAssistant:
    client: openai.OpenAI
    model: str = MODEL

    def ask(self, question: str) -> Answer:
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        calls: list[tuple[str, dict[str, Any]]] = []
        for _ in range(MAX_TURNS):
            completion = self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                tools=[WEATHER_TOOL],  # type: ignore[list-item]
                tool_choice="auto",
                stream=False,
            )
            message = completion.choices[0].message
            if not message.tool_calls:
                return Answer(message.content or "", calls)
            messages.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        call.model_dump(include={"id", "type", "function"}) for call in message.tool_calls
                    ],
                }
            )
            for call in message.tool_calls:
                arguments = json.loads(call.function.arguments)  # type: ignore[union-attr]
                calls.append((call.function.name, arguments))  # type: ignore[union-attr]
                result = TOOLS[call.function.name](**arguments)  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise RuntimeError(f"No answer after {MAX_TURNS} turns of tool calls.")

"""An assistant that streams its answer from Anthropic, thinking first, as the text arrives.

``on_text`` sees each piece of the answer as soon as the model sends it. The call goes to
the beta messages endpoint with ``?beta=true``, as the SDK that made the recording in
``cassettes/`` sent it, so that today's SDK sends the very request that was recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anthropic

MODEL = "claude-sonnet-4-0"
MAX_TOKENS = 4096
THINKING_BUDGET = 1024


@dataclass
class StreamedAnswer:
    thinking: str
    text: str
    pieces: int
    """How many text deltas the answer arrived in."""
    output_tokens: int


async def stream_answer(
    client: anthropic.AsyncAnthropic, question: str, on_text: Callable[[str], None] = lambda _: None
) -> StreamedAnswer:
    thinking: list[str] = []
    text: list[str] = []
    async with client.beta.messages.stream(
        model=MODEL,
        max_tokens=MAX_TOKENS,
        thinking={"type": "enabled", "budget_tokens": THINKING_BUDGET},
        messages=[{"role": "user", "content": [{"type": "text", "text": question}]}],
        extra_query={"beta": "true"},
    ) as stream:
        async for event in stream:
            if event.type == "thinking":
                thinking.append(event.thinking)
            elif event.type == "text":
                text.append(event.text)
                on_text(event.text)
        final = await stream.get_final_message()
    return StreamedAnswer("".join(thinking), "".join(text), len(text), final.usage.output_tokens)

"""One scripted answer, described by what it means rather than by any provider's wire format.

:func:`reply` builds a :class:`Reply`: the text, the tool calls (``(name, args)`` pairs), the
thinking, a refusal, why it finished and the token usage. The renderers of
:mod:`promptvcr.scripted` turn it into the JSON body or the SSE events of the endpoint that
the request hits; nothing here knows any provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["FINISHES", "Finish", "Reply", "ToolCall", "Usage", "reply"]

#: Why an answer ended, in one vocabulary; each renderer maps it to its provider's word
#: (``length`` is OpenAI's ``length``, Anthropic's ``max_tokens``, Gemini's ``MAX_TOKENS``).
Finish = Literal["stop", "length", "tool_calls", "content_filter", "refusal"]
FINISHES: tuple[str, ...] = ("stop", "length", "tool_calls", "content_filter", "refusal")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call of the tool ``name`` with the JSON object ``args``."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def arguments(self) -> str:
        """The arguments as the JSON text OpenAI and Anthropic stream (compact, as they send it)."""
        return json.dumps(dict(self.args), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens: read from the prompt, written in the answer, of those spent thinking, read from cache."""

    input: int
    output: int
    thinking: int = 0
    cached: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer. Build it with :func:`reply`; see there for the meaning of each field."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: str | None = None
    refusal: str | None = None
    finish: str | None = None
    usage: Usage | None = None
    model: str | None = None
    delay: float = 0.0
    gap: float = 0.0

    @property
    def finish_reason(self) -> str:
        """The finish given, else ``tool_calls`` for an answer that calls tools, ``refusal`` for a
        refusal, ``stop`` otherwise."""
        if self.finish is not None:
            return self.finish
        if self.tool_calls:
            return "tool_calls"
        return "refusal" if self.refusal is not None else "stop"

    def usage_for(self, prompt: bytes) -> Usage:
        """The usage given, else an estimate that is the same on every run: a token per four
        bytes of the request body, a token per word written or thought."""
        if self.usage is not None:
            return self.usage
        written = " ".join(
            part for part in (self.text, self.refusal, *(c.arguments for c in self.tool_calls)) if part
        )
        thinking = len(self.thinking.split()) if self.thinking else 0
        return Usage(max(1, len(prompt) // 4), max(1, len(written.split())) + thinking, thinking)


def _tool_call(call: ToolCall | tuple[str, Mapping[str, Any]] | Any) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if (
        isinstance(call, tuple)
        and len(call) == 2
        and isinstance(call[0], str)
        and isinstance(call[1], Mapping)
    ):
        return ToolCall(call[0], dict(call[1]))
    raise TypeError(f"a tool call is a (name, args) pair with args a mapping, not {call!r}")


def _usage(usage: Usage | Mapping[str, int] | tuple[int, int] | None) -> Usage | None:
    if usage is None or isinstance(usage, Usage):
        return usage
    if isinstance(usage, tuple):
        return Usage(*usage)
    if isinstance(usage, Mapping):
        return Usage(**usage)
    raise TypeError(f"usage is a Usage, an (input, output) pair or a mapping, not {usage!r}")


def reply(
    text: str | None = None,
    tool_calls: Iterable[tuple[str, Mapping[str, Any]] | ToolCall] = (),
    thinking: str | None = None,
    refusal: str | None = None,
    finish: str | None = None,
    usage: Usage | Mapping[str, int] | tuple[int, int] | None = None,
    *,
    model: str | None = None,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Reply:
    """One answer of a :func:`~promptvcr.script`, rendered for whichever endpoint the request hits.

    ``text`` is the answer's text; ``tool_calls`` the tools it calls, as ``(name, args)`` pairs
    (``args`` a JSON object); ``thinking`` its reasoning (a thinking block for Anthropic, a
    thought part for Gemini, a reasoning summary for OpenAI Responses, ``reasoning_content`` in
    chat completions); ``refusal`` a refusal (OpenAI's refusal field; the text, with
    ``stop_reason: refusal``, for Anthropic; the text for Gemini). ``finish`` is ``stop``,
    ``length``, ``tool_calls``, ``content_filter`` or ``refusal`` in every provider's own word
    (another value is sent as it is); by default ``tool_calls`` when it calls tools, else
    ``stop``. ``usage`` is a :class:`Usage`, an ``(input, output)`` pair or a mapping of its
    fields; by default a deterministic estimate. ``model`` defaults to the request's model.

    ``delay`` (seconds before the headers) and ``gap`` (between events of a stream) make a slow
    answer: they are its timing, scaled by the ``timing=`` option of the script or cassette.
    """
    calls = tuple(_tool_call(call) for call in tool_calls)
    if text is None and not calls and thinking is None and refusal is None:
        text = ""
    if delay < 0 or gap < 0:
        raise ValueError("delay and gap are seconds, zero or more")
    return Reply(text, calls, thinking, refusal, finish, _usage(usage), model, float(delay), float(gap))

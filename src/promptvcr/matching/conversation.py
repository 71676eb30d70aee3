"""Where each provider's API keeps the parts of a conversation: a table, read by everything else.

A model request of an agent is a conversation (system prompt, user, assistant turns), the
results of the tools the application ran, the tool definitions offered, and parameters
(model, temperature, ...). Where each lives is a fact of the API, written here once as data
(:data:`APIS`), never guessed from a field's name elsewhere: the miss diagnostics
(:mod:`.whymissed`) say which of them changed, the parallel tool-result rule
(:mod:`.rules.toolresults`) orders the results of one turn, and the prompt-cache readout
compares prompts by them.

Each API is recognized by its path (a proxy or a test server on 127.0.0.1 keeps the path,
not the host). A tool result is either an item of the conversation itself (an OpenAI chat
``role: tool`` message, a Responses ``function_call_output`` item) or a block inside an
item's list (an Anthropic ``tool_result`` block in ``content``, a Gemini ``functionResponse``
part in ``parts``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "APIS",
    "RESULT_PLACEHOLDER",
    "Api",
    "ResultShape",
    "ToolResult",
    "api_for",
    "call_names",
    "tool_results",
    "without_results",
]


@dataclass(frozen=True, slots=True)
class ResultShape:
    """How one tool result looks: a dict with ``marker`` (field, value), or holding ``wrapper``."""

    #: ``None``: the result is an item of the conversation; else the list of an item holding it.
    inside: str | None
    #: (field, value) that marks a result (``("role", "tool")``); ``None`` with ``wrapper``.
    marker: tuple[str, str] | None
    #: A field whose dict is the result (Gemini's ``functionResponse``); ``None`` when the dict is.
    wrapper: str | None
    call_id: str
    value: str
    #: The field naming the tool on the result itself (Gemini); else the call names it.
    name: str | None = None


@dataclass(frozen=True, slots=True)
class CallShape:
    """How the model's call of a tool names it: a dict marked like a result, its id and name.
    With neither ``marker`` nor ``wrapper``, every entry of the list ``inside`` is a call
    (OpenAI's ``tool_calls``)."""

    inside: str | None
    marker: tuple[str, str] | None
    wrapper: str | None
    call_id: str
    #: A dotted path to the tool's name within the call (``function.name``).
    name: str


@dataclass(frozen=True, slots=True)
class Api:
    """One API's layout: what in its body is the prompt, the tool results, the tools, the rest."""

    name: str
    #: Path fragments that recognize it.
    paths: tuple[str, ...]
    #: The top-level field holding the conversation.
    conversation: str
    #: Top-level fields of the prompt besides the conversation (system text, instructions).
    prompt: tuple[str, ...]
    #: Top-level fields holding the tool definitions.
    tools: tuple[str, ...]
    results: tuple[ResultShape, ...]
    calls: tuple[CallShape, ...]
    #: Roles of the conversation's items that are a system prompt (OpenAI keeps it there).
    system_roles: tuple[str, ...] = ()


#: Every API whose conversations promptvcr reads, by what its documentation says.
APIS: tuple[Api, ...] = (
    Api(
        name="openai-chat",
        paths=("/chat/completions",),
        conversation="messages",
        prompt=(),
        tools=("tools", "functions"),
        results=(ResultShape(None, ("role", "tool"), None, "tool_call_id", "content"),),
        calls=(CallShape("tool_calls", None, None, "id", "function.name"),),
        system_roles=("system", "developer"),
    ),
    Api(
        name="openai-responses",
        paths=("/responses",),
        conversation="input",
        prompt=("instructions",),
        tools=("tools",),
        results=(ResultShape(None, ("type", "function_call_output"), None, "call_id", "output"),),
        calls=(CallShape(None, ("type", "function_call"), None, "call_id", "name"),),
        system_roles=("system", "developer"),
    ),
    Api(
        name="anthropic-messages",
        paths=("/messages",),
        conversation="messages",
        prompt=("system",),
        tools=("tools",),
        results=(
            ResultShape("content", ("type", "tool_result"), None, "tool_use_id", "content"),
            ResultShape("content", ("type", "mcp_tool_result"), None, "tool_use_id", "content"),
        ),
        calls=(
            CallShape("content", ("type", "tool_use"), None, "id", "name"),
            CallShape("content", ("type", "mcp_tool_use"), None, "id", "name"),
        ),
    ),
    Api(
        name="gemini",
        paths=(":generateContent", ":streamGenerateContent"),
        conversation="contents",
        prompt=("systemInstruction", "system_instruction"),
        tools=("tools", "toolConfig", "tool_config"),
        results=(ResultShape("parts", None, "functionResponse", "id", "response", name="name"),),
        calls=(CallShape("parts", None, "functionCall", "id", "name"),),
    ),
)


def api_for(path: str) -> Api | None:
    """The API a request to ``path`` speaks, by :data:`APIS`; ``None`` when none is known."""
    for api in APIS:
        if any(fragment in path for fragment in api.paths):
            return api
    return None


def _is(item: Any, marker: tuple[str, str] | None, wrapper: str | None) -> dict[str, Any] | None:
    """The dict the shape describes in ``item``, or ``None`` when ``item`` is not one."""
    if not isinstance(item, dict):
        return None
    if wrapper is not None:
        inner = item.get(wrapper)
        return inner if isinstance(inner, dict) else None
    if marker is not None and item.get(marker[0]) == marker[1]:
        return item
    return None


def _dicts(conversation: Any, inside: str | None) -> Iterator[tuple[int, int | None, Any]]:
    """Each (item index, block index or None, dict) a shape with ``inside`` may describe."""
    if not isinstance(conversation, list):
        return
    for index, item in enumerate(conversation):
        if inside is None:
            yield index, None, item
        elif isinstance(item, dict) and isinstance(item.get(inside), list):
            for block, value in enumerate(item[inside]):
                yield index, block, value


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result of a request: where it is, the call it answers, what it holds."""

    item: int
    block: int | None
    call_id: str
    name: str
    value: Any


def _dotted(value: Any, path: str) -> Any:
    for step in path.split("."):
        value = value.get(step) if isinstance(value, dict) else None
    return value


def call_names(api: Api, body: Any) -> dict[str, str]:
    """Each tool call's id -> the tool's name, from the model's calls in the conversation."""
    names: dict[str, str] = {}
    conversation = body.get(api.conversation) if isinstance(body, dict) else None
    for shape in api.calls:
        for _, _, candidate in _dicts(conversation, shape.inside):
            if shape.inside is not None and shape.marker is None and shape.wrapper is None:
                # a list of calls (OpenAI's tool_calls): each entry is a call
                found: dict[str, Any] | None = candidate if isinstance(candidate, dict) else None
            else:
                found = _is(candidate, shape.marker, shape.wrapper)
            if found is not None and isinstance(call_id := found.get(shape.call_id), str):
                name = _dotted(found, shape.name)
                names[call_id] = name if isinstance(name, str) else "?"
    return names


def tool_results(api: Api, body: Any) -> list[ToolResult]:
    """Every tool result in ``body``'s conversation, in the order sent, named by its call."""
    if not isinstance(body, dict):
        return []
    conversation = body.get(api.conversation)
    names = call_names(api, body)
    found: list[ToolResult] = []
    for shape in api.results:
        for item, block, candidate in _dicts(conversation, shape.inside):
            result = _is(candidate, shape.marker, shape.wrapper)
            if result is None:
                continue
            call_id = result.get(shape.call_id)
            call_id = call_id if isinstance(call_id, str) else ""
            name = result.get(shape.name) if shape.name else names.get(call_id)
            found.append(ToolResult(item, block, call_id, name if isinstance(name, str) else "?",
                                    result.get(shape.value)))  # fmt: skip
    return sorted(found, key=lambda r: (r.item, -1 if r.block is None else r.block))


#: What a tool result's value is replaced by in :func:`without_results`.
RESULT_PLACEHOLDER = "<tool result>"


def without_results(api: Api, body: Any) -> Any:
    """``body`` with the value of every tool result replaced by :data:`RESULT_PLACEHOLDER`:
    two requests equal this way differ, if at all, only in what their tools returned."""
    if not isinstance(body, dict) or not isinstance(conversation := body.get(api.conversation), list):
        return body
    items = list(conversation)
    for shape in api.results:
        for index, item in enumerate(items):
            if shape.inside is None:
                items[index] = _blanked(item, shape)
            elif isinstance(item, dict) and isinstance(item.get(shape.inside), list):
                items[index] = {
                    **item,
                    shape.inside: [_blanked(block, shape) for block in item[shape.inside]],
                }
    return {**body, api.conversation: items}


def _blanked(item: Any, shape: ResultShape) -> Any:
    result = _is(item, shape.marker, shape.wrapper)
    if result is None or shape.value not in result:
        return item
    blank = {**result, shape.value: RESULT_PLACEHOLDER}
    return {**item, shape.wrapper: blank} if shape.wrapper is not None else blank

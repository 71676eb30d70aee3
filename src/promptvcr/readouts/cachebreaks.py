"""Where a prompt cache breaks: per conversation in a cassette, what each request shares with the last.

Providers bill a prompt prefix they have seen at a fraction of the price, and one byte that
changes early in a prompt (a timestamp in the system prompt, a uuid, tools in another order,
a dict serialized with its keys in another order) silently turns that off for everything
after it. Every cassette holds what is needed to see it: the requests as sent, and the
cached-token counts the provider answered.

A conversation is the requests to one endpoint with one model that open with the same first
turn (the system prompt aside), in recorded order: an agent loop, each request the last one
plus the new turns. Two questions asked under one system prompt are two conversations.
Each request's prompt is read in the order the providers document their cache (tools, then
the system prompt, then the conversation; :data:`promptvcr.matching.conversation.APIS` says
where each lives), every part as the JSON bytes it was sent as (key order included: it breaks
a cache too), without ``cache_control`` markers, which move from turn to turn and are no part
of the prefix.

What should have been cached: for Anthropic, the previous request's prompt up to its last
``cache_control`` breakpoint (nothing, without one); for the others, which cache a prefix
automatically, the previous request's whole prompt. A request that differs from it inside
that part is a break, reported at its byte, with what changed there. A value that stays the
same from turn to turn (today's date, said each turn) is no break: only a change is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.models import Interaction, Request
from ..cassettes.providers import provider_label
from ..cassettes.tokens import CacheTokens, cache_tokens_of
from ..matching.conversation import Api, api_for
from ..matching.whymissed import volatile_kinds

__all__ = [
    "CacheTurn",
    "Conversation",
    "Pricer",
    "PromptPart",
    "conversations",
    "prompt_parts",
    "report_lines",
]

_MARKER = "cache_control"
_SHOWN = 40


@dataclass(frozen=True, slots=True)
class PromptPart:
    """One part of a prompt in cache order: its name (``system``, ``tools[1]``, ``messages[3]``),
    its value without cache markers, its bytes as sent, and whether it carried a breakpoint."""

    name: str
    value: Any
    text: bytes
    breakpoint: bool


@dataclass(frozen=True)
class CacheTurn:
    """One request of a conversation, against the one before it."""

    position: int
    #: Bytes of the prompt, and of it shared with the previous request's prompt.
    size: int
    shared: int
    #: Bytes of the previous prompt that should have been read from the cache.
    cacheable: int
    cache: CacheTokens
    #: Where a break is: the byte, the part and field, what changed there; ``None``: no break.
    break_at: int | None = None
    where: str = ""
    change: str = ""

    @property
    def broke(self) -> bool:
        return self.break_at is not None

    @property
    def break_text(self) -> str:
        """The break, as every front end says it: the byte, the field, what changed, the counts."""
        read = "-" if self.cache.read is None else f"{self.cache.read:,}"
        return (
            f"at byte {self.break_at or 0:,} of the {self.cacheable:,} B that should have been cached: "
            f"{self.where}: {self.change} (cached tokens read: {read})"
        )


@dataclass
class Conversation:
    """The requests to one endpoint with one model, in recorded order."""

    endpoint: str
    provider: str
    model: str
    cached_by: str
    turns: list[CacheTurn] = field(default_factory=list)

    @property
    def breaks(self) -> list[CacheTurn]:
        return [turn for turn in self.turns if turn.broke]


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != _MARKER}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _has_marker(value: Any) -> bool:
    if isinstance(value, dict):
        return _MARKER in value or any(_has_marker(v) for v in value.values())
    return isinstance(value, list) and any(_has_marker(v) for v in value)


def _part(name: str, value: Any) -> PromptPart:
    bare = _without_markers(value)
    text = json.dumps(bare, ensure_ascii=False, separators=(",", ":")).encode()
    return PromptPart(name, bare, text, _has_marker(value))


def prompt_parts(api: Api, body: dict[str, Any]) -> list[PromptPart]:
    """The prompt of a request in cache order: each tool, the system prompt, each turn."""
    parts: list[PromptPart] = []
    for name in (*api.tools, *api.prompt, api.conversation):
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, list):
            parts.extend(_part(f"{name}[{i}]", item) for i, item in enumerate(value))
        else:
            parts.append(_part(name, value))
    return parts


def _body(request: Request) -> dict[str, Any] | None:
    try:
        body = json.loads(request.content) if request.content[:1] == b"{" else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


def _window(text: str, start: int) -> str:
    """The text from ``start``, a few words of it, marked where it is cut."""
    shown = text[start : start + _SHOWN]
    return repr(("..." if start else "") + shown + ("..." if start + _SHOWN < len(text) else ""))


def _first_change(path: str, old: Any, new: Any) -> tuple[str, str]:
    """The first field (in the order sent) where ``new`` differs from ``old``, and what changed."""
    if isinstance(old, dict) and isinstance(new, dict):
        if old == new:  # equal as values: only the order of their keys differs
            return path, f"the same keys in another order: {list(old)} -> {list(new)}"
        for key in old:
            if key not in new:
                return f"{path}.{key}", f"removed: {_shown(old[key])}"
            if old[key] != new[key]:
                return _first_change(f"{path}.{key}", old[key], new[key])
        added = next(key for key in new if key not in old)
        return f"{path}.{added}", f"added: {_shown(new[added])}"
    if isinstance(old, list) and isinstance(new, list):
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            if a != b:
                return _first_change(f"{path}[{index}]", a, b)
        return path, f"{len(old)} items -> {len(new)} items"
    if isinstance(old, str) and isinstance(new, str):
        at = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
        )
        kinds = volatile_kinds(old, new)
        what = f"a {' and a '.join(kinds)} changed" if kinds else "the text changed"
        start = max(0, at - _SHOWN // 2)
        return f"{path}, character {at}", f"{what}: {_window(old, start)} -> {_window(new, start)}"
    return path, f"{_shown(old)} -> {_shown(new)}"


def _common(a: bytes, b: bytes) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


def _compare(api: Api, before: list[PromptPart], after: list[PromptPart]) -> tuple[int, int, str, str]:
    """Bytes shared, bytes that should have been cached, and where and what the first change is."""
    if api.name == "anthropic-messages":  # up to and with the last breakpoint, nothing without one
        marked = [i for i, part in enumerate(before) if part.breakpoint]
        cacheable = sum(len(part.text) for part in before[: marked[-1] + 1]) if marked else 0
    else:
        cacheable = sum(len(part.text) for part in before)
    shared = 0
    for index, old in enumerate(before):
        new = after[index] if index < len(after) else None
        if new is not None and old.text == new.text:
            shared += len(old.text)
            continue
        if new is None:
            return shared, cacheable, old.name, "the request ends before it"
        shared += _common(old.text, new.text)
        family = old.name.split("[", 1)[0]
        olds = sorted(p.text for p in before if p.name.split("[", 1)[0] == family)
        news = sorted(p.text for p in after if p.name.split("[", 1)[0] == family)
        if family in api.tools and olds == news:
            return shared, cacheable, family, f"the same {family} in another order"
        if old.name.split("[", 1)[0] != new.name.split("[", 1)[0]:
            return shared, cacheable, old.name, f"{old.name} is now {new.name}"
        where, what = _first_change(old.name, old.value, new.value)
        return shared, cacheable, where, what
    return shared, cacheable, "", ""


def _opening(api: Api, body: dict[str, Any]) -> str:
    """What tells one conversation from another of the same model: its first turn that is not
    a system prompt (two tests asking two questions under one system prompt are two)."""
    items = body.get(api.conversation)
    if not isinstance(items, list):
        return json.dumps(_without_markers(items), sort_keys=True)
    system = [item for item in items if isinstance(item, dict) and item.get("role") in api.system_roles]
    first = next((item for item in items if not any(item is s for s in system)), None)
    return json.dumps(_without_markers(first), sort_keys=True)


def conversations(interactions: Sequence[Interaction]) -> list[Conversation]:
    """Every conversation of a cassette and, per request, where its prompt cache breaks."""
    found: dict[tuple[str, str, str, str], Conversation] = {}
    last: dict[tuple[str, str, str, str], list[PromptPart]] = {}
    for position, interaction in enumerate(interactions):
        request = interaction.request
        path = urlsplit(request.url).path
        api, body = api_for(path), _body(request)
        if api is None or body is None:
            continue
        model = str(body.get("model") or path.rsplit("/", 1)[-1].split(":", 1)[0])
        key = (request.method, path, model, _opening(api, body))
        if key not in found:
            cached_by = (
                "cache_control breakpoints" if api.name == "anthropic-messages" else "the previous prompt"
            )
            provider = provider_label(request.url, request.headers, request.content)
            found[key] = Conversation(f"{request.method} {path}", provider, model, cached_by)
        parts = prompt_parts(api, body)
        size = sum(len(part.text) for part in parts)
        cache = cache_tokens_of(interaction.response)
        before = last.get(key)
        last[key] = parts
        if before is None:
            found[key].turns.append(CacheTurn(position, size, 0, 0, cache))
            continue
        shared, cacheable, where, what = _compare(api, before, parts)
        broke = shared < cacheable
        turn = CacheTurn(position, size, shared, cacheable, cache, shared if broke else None, where, what)
        found[key].turns.append(turn)
    return list(found.values())


#: ``(provider, model, tokens read, tokens written) -> dollars or None``: the front end's prices.
Pricer = Callable[[str, str, int, int], "float | None"]


def _cache_text(turn: CacheTurn, conversation: Conversation, price: Pricer | None) -> str:
    cache = turn.cache
    if cache.read is None and cache.written is None:
        return "no cached-token count in the answer"
    counts = [f"{cache.read or 0:,} read"] + (
        [f"{cache.written:,} written"] if cache.written is not None else []
    )
    text = f"cached tokens: {', '.join(counts)} of {cache.prompt:,}"
    cost = (
        None
        if price is None
        else price(conversation.provider, conversation.model, cache.read or 0, cache.written or 0)
    )
    return text if cost is None else f"{text} (${cost:.6f} at the cache's prices)"


def report_lines(shown: str, found: Sequence[Conversation], price: Pricer | None = None) -> list[str]:
    """The readout of one cassette, for a person: per conversation, per request, where it breaks."""
    lines = [shown]
    if not found:
        return [*lines, "  no model conversation (OpenAI, Anthropic or Gemini requests) in it"]
    for conversation in found:
        lines.append(
            f"  {conversation.endpoint}  {conversation.model} ({conversation.provider}), "
            f"cached by {conversation.cached_by}"
        )
        for turn in conversation.turns:
            head = f"    interactions[{turn.position}]  prompt {turn.size:,} B"
            if turn is not conversation.turns[0]:
                head += f", {turn.shared:,} B shared with the previous request"
            lines.append(f"{head}; {_cache_text(turn, conversation, price)}")
            if turn.broke:
                lines.append(f"      CACHE BREAK {turn.break_text}")
        breaks = len(conversation.breaks)
        lines.append(f"    {breaks} cache break(s) in {len(conversation.turns)} request(s)")
    return lines

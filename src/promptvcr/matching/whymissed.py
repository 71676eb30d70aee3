"""Why a conversation's request missed, in one class, before the field diff.

An agent's requests differ from their recordings for a few reasons that each call for a
different fix, and a field diff of a long conversation does not say which: the prompt
changed (system, user or assistant text: re-record), only what a tool returned changed
("tool drift": the application's tool, not the prompt; replay it with
``on_tool_drift="replay"``), tool results were paired with other calls (a bug in running
parallel calls), the tool definitions changed, parameters changed (model, temperature, ...),
or a value that changes on every run (a date, a uuid: a rule absorbs it). Where each part
of a body lives is :data:`.conversation.APIS`; the requests are compared after the rules, as
their keys are. Built only on a miss.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cassettes.models import Interaction, Request
from .conversation import ToolResult, api_for, tool_results, without_results
from .diffs import candidates, show
from .key import apply_rules
from .parts import KeyParts, Rule, key_parts
from .rules.ids import call_placeholders
from .rules.learned import PATTERNS

__all__ = ["ToolChange", "Why", "drifted_tools", "volatile_kinds", "why_missed"]

_VOLATILE = {kind: re.compile(pattern) for kind, pattern in PATTERNS.items()}
_SHOWN = 80


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One tool result that differs: the tool, the call id as sent, both values."""

    tool: str
    call_id: str
    recorded: Any
    sent: Any

    def line(self) -> str:
        return (
            f"{self.tool} (call {self.call_id}): {show(self.recorded, _SHOWN)} -> {show(self.sent, _SHOWN)}"
        )


@dataclass
class Why:
    """The classes of one difference, most telling first, each with what it names."""

    #: ``prompt``, ``tools``, ``parameters``, ``volatile``, ``tool pairing``, ``tool drift``.
    classes: list[str] = field(default_factory=list)
    prompt: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)
    #: ``(path, kinds)``: a string that differs only in values of these kinds.
    volatile: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    changes: list[ToolChange] = field(default_factory=list)

    @property
    def only_tool_drift(self) -> bool:
        return self.classes == ["tool drift"]

    def lines(self) -> list[str]:
        out = []
        for kind in self.classes:
            if kind == "tool drift":
                out.append(
                    "Why it missed: tool drift: only tool results changed; the prompt, the tools and the "
                    'parameters are as recorded (replay it anyway with on_tool_drift="replay"):'
                )
                out.extend(f"  {change.line()}" for change in self.changes)
            elif kind == "tool pairing":
                out.append("Why it missed: tool results were sent under other calls' ids (a wrong pairing):")
                out.extend(f"  {change.line()}" for change in self.changes)
            elif kind == "prompt":
                out.append(
                    f"Why it missed: the prompt changed (system, user or assistant text): {_few(self.prompt)}"
                )
            elif kind == "tools":
                out.append(f"Why it missed: the tool definitions changed: {_few(self.tools)}")
            elif kind == "parameters":
                out.append(f"Why it missed: parameters changed: {_few(self.parameters)}")
            elif kind == "volatile":
                out.extend(_volatile_line(path, kinds) for path, kinds in self.volatile)
        return out


def _volatile_line(path: str, kinds: tuple[str, ...]) -> str:
    rule = f"mask_in_field({path!r}, {list(kinds)!r})"
    return (
        f"Why it missed: a volatile value ({', '.join(kinds)}) changed at {path}; a rule absorbs it: "
        f"rules=[*default_rules(), {rule}] (mask_in_field: promptvcr.matching.rules.learned)"
    )


def _few(paths: list[str]) -> str:
    return ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")


def _masked(text: str) -> str:
    for kind, pattern in _VOLATILE.items():
        text = pattern.sub(f"<{kind}>", text)
    return text


def volatile_kinds(left: Any, right: Any) -> tuple[str, ...] | None:
    """The kinds of volatile value (a uuid, a timestamp, ...) that are all that differs between
    two strings; ``None`` when they differ in anything else (or are not both strings)."""
    if not (isinstance(left, str) and isinstance(right, str)) or _masked(left) != _masked(right):
        return None
    return tuple(kind for kind, p in _VOLATILE.items() if p.findall(left) != p.findall(right)) or None


def _top(path: str) -> str:
    """The top-level field of a diff's path (``messages`` of ``messages[2].content``)."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def why_missed(recorded: Request, sent: Request, rules: Sequence[Rule]) -> Why | None:
    """Why ``sent`` is not ``recorded``, by class; ``None`` when the two are not one API's
    conversation requests to the same endpoint (the field diff then says it all)."""
    left, right = apply_rules(recorded, rules), apply_rules(sent, rules)
    api = api_for(right.path)
    if api is None or (left.method, left.path) != (right.method, right.path):
        return None
    lbody, rbody = left.body, right.body
    if not isinstance(lbody, dict) or not isinstance(rbody, dict):
        return None
    from .diffs import differences  # the same walk the field diff makes

    why = Why()
    diffs = differences(recorded, sent, rules)
    talk = api.conversation
    blanked_equal = _canonical(without_results(api, lbody).get(talk)) == _canonical(
        without_results(api, rbody).get(talk)
    )
    # What a tool returned is tool drift even when it is a time or an id (a clock is a tool).
    results_only = blanked_equal and lbody.get(talk) != rbody.get(talk)
    volatile = {
        d.path: kinds
        for d in diffs
        if (kinds := volatile_kinds(d.recorded, d.sent)) is not None
        and not (results_only and _top(d.path) == talk)
    }
    for d in diffs:
        top = _top(d.path)
        if d.path in volatile:
            why.volatile.append((d.path, volatile[d.path]))
        elif top in api.tools:
            why.tools.append(d.path)
        elif top in api.prompt or (top == talk and not blanked_equal):
            why.prompt.append(d.path)
        elif top != talk:
            why.parameters.append(d.path)
    if results_only:
        _tool_changes(why, api, left, right, sent)
    for kind, found in (("prompt", why.prompt), ("tools", why.tools), ("parameters", why.parameters)):
        if found:
            why.classes.append(kind)
    if why.volatile and not why.prompt:
        why.classes.append("volatile")
    if why.changes and not why.classes:
        pairing = "tool pairing" if _paired_otherwise(api, lbody, rbody) else "tool drift"
        why.classes.append(pairing)
    return why if why.classes else None


def _paired_otherwise(api: Any, left: Any, right: Any) -> bool:
    """The same result values, under other call ids: a wrong pairing, not a tool that changed."""
    recorded = Counter(_canonical(r.value) for r in tool_results(api, left))
    return recorded == Counter(_canonical(r.value) for r in tool_results(api, right))


def _by_call(results: list[ToolResult]) -> dict[str, ToolResult]:
    """Results by call id (a result without one, as Gemini may send, by its place)."""
    return {result.call_id or f"#{n}": result for n, result in enumerate(results)}


def _tool_changes(why: Why, api: Any, left: KeyParts, right: KeyParts, sent: Request) -> None:
    """The tool results that differ, paired by call id, named by the tool and the id as sent."""
    recorded = _by_call(tool_results(api, left.body))
    as_sent = {placeholder: raw for raw, placeholder in call_placeholders(key_parts(sent).body).items()}
    for call_id, result in _by_call(tool_results(api, right.body)).items():
        before = recorded.get(call_id)
        if before is None or _canonical(before.value) != _canonical(result.value):
            shown = as_sent.get(result.call_id, result.call_id) or "(no id)"
            why.changes.append(
                ToolChange(result.name, shown, None if before is None else before.value, result.value)
            )


def drifted_tools(
    sent: Request, interactions: Sequence[Interaction], rules: Sequence[Rule], skip: Any = ()
) -> tuple[int, Why] | None:
    """The nearest recorded request (not in ``skip``) that ``sent`` differs from only in what
    its tools returned: its position and why; ``None`` when none does."""
    for candidate in candidates(sent, interactions, rules):
        if candidate.position in skip or not candidate.same_endpoint or not candidate.diffs:
            continue
        why = why_missed(candidate.interaction.request, sent, rules)
        if why is not None and why.only_tool_drift:
            return candidate.position, why
    return None

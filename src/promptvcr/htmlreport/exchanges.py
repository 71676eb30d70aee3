"""One request and its answer as the report shows them: masked, as turns, with tokens and price.

Nothing reaches the report that a cassette would not hold: each request and answer goes
through the cassette's own redaction first (:func:`promptvcr.files.redaction.redact`:
credential headers, parameters and fields by name, every value the request sent as a
credential wherever else it appears, secret-shaped values and ``$*_API_KEY`` values of
the environment). A request redaction would refuse to write is not shown at all.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cassettes.bodyfiles import described
from ..cassettes.models import Interaction, Request, Response
from ..cassettes.providers import provider_label
from ..matching.diffs import MISSING, candidates
from ..readouts.inventory import summarize_interaction
from ..readouts.transcript import Turn, answer_turns, request_turns
from .model import DriftLine, Exchange, FieldDiff, Miss, TurnView
from .pricing import Prices
from .sessionturns import jsonrpc_answer, jsonrpc_request, session_model, session_turns

__all__ = ["drift_line", "exchanges", "masked", "miss"]

_WORDS = re.compile(r"\S+|\s+")
#: What stands in for the answer of a request nothing answered, for redaction (then dropped).
_NO_RESPONSE = Response(status=204)
_REFUSED = "promptvcr left this request out: it holds a value shaped like a credential."


def masked(pairs: Sequence[tuple[Request, Response | None]]) -> list[Interaction | None]:
    """Each ``(request, response)`` as a cassette would store it; ``None`` for one whose request
    redaction refuses (a credential in a place it cannot mask without changing the request).

    One redaction for all: what it sets up (the environment's credentials) is done once. A body
    file beside the cassette is shown by its reference alone (see :func:`.transcript.answer_turns`):
    it is put back after redaction rather than read through it (``promptvcr scan`` reads it)."""
    from ..files import reading, redaction

    label = "report"
    answers = [response or _NO_RESPONSE for _, response in pairs]
    unread = [replace(a, chunks=[], timing=None) if described(a.chunks) else a for a in answers]
    redacted = redaction.redact(
        [Interaction(request, answer) for (request, _), answer in zip(pairs, unread, strict=True)],
        environ=os.environ,
        label=label,
    )
    refused = {int(where[len(label) + 1 : -1]) for where, _, _ in redacted.refused}
    kept = iter(redacted.data)
    shown: list[Interaction | None] = []
    for index, answer in enumerate(answers):
        if index in refused:
            shown.append(None)
            continue
        interaction = reading.interaction_from_data(next(kept), Path(label), index)
        if described(answer.chunks):
            interaction.response.chunks = answer.chunks
        shown.append(interaction)
    return shown


def _views(turns: Sequence[Turn]) -> list[TurnView]:
    return [TurnView(turn.role, turn.text, turn.image) for turn in turns]


def _request_views(request: Request) -> list[TurnView]:
    return _views(jsonrpc_request(request) or request_turns(request))


def _answer_views(response: Response) -> list[TurnView]:
    if response.websocket is not None:
        return _views(session_turns(response.websocket))
    return _views(jsonrpc_answer(response) or answer_turns(response))


def exchanges(
    pairs: Sequence[tuple[Request, Response | None]], outcomes: Sequence[str], prices: Prices
) -> list[Exchange]:
    """The exchanges of ``pairs`` (a ``None`` response: a request nothing answered), masked."""
    shown = masked(pairs)
    return [
        _exchange(request, masked_pair, response is not None, outcome, prices)
        for (request, response), masked_pair, outcome in zip(pairs, shown, outcomes, strict=True)
    ]


def _exchange(
    request: Request, shown: Interaction | None, answered: bool, outcome: str, prices: Prices
) -> Exchange:
    provider = provider_label(request.url, request.headers, request.content)
    if shown is None:
        view = TurnView("refused", _REFUSED)
        return Exchange(outcome, request.method, "(not shown)", provider, "", None, False, [view], [])
    summary = summarize_interaction(shown)
    tokens = summary.tokens
    model = summary.model or session_model(shown.request, shown.response)
    return Exchange(
        outcome=outcome,
        method=shown.request.method,
        url=shown.request.url,
        provider=provider,
        model=model,
        status=shown.response.status if answered else None,
        streamed=summary.streamed if answered else False,
        request=_request_views(shown.request),
        answer=_answer_views(shown.response) if answered else [],
        tokens_in=tokens.input,
        tokens_out=tokens.output,
        price=prices.price(provider, model, tokens.input, tokens.output),
    )


def _text(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1, default=repr)


def _pieces(recorded: str, sent: str) -> tuple[list[tuple[bool, str]], list[tuple[bool, str]]]:
    """Both texts cut into word runs, each marked changed or not, for a side-by-side view."""
    left, right = _WORDS.findall(recorded), _WORDS.findall(sent)
    if len(left) * len(right) > 4_000_000:  # two long texts: mark them changed as a whole
        return [(True, recorded)], [(True, sent)]
    old: list[tuple[bool, str]] = []
    new: list[tuple[bool, str]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            old.append((tag != "equal", "".join(left[i1:i2])))
        if j2 > j1:
            new.append((tag != "equal", "".join(right[j1:j2])))
    return old, new


def miss(request: Request, interactions: Sequence[Interaction], rules: Sequence[Any], why: str) -> Miss:
    """A request no recording matched, with the fields in which the nearest one differs.

    The diff is taken on the masked request, so a credential sent in the body never shows."""
    shown = masked([(request, None)])[0]
    provider = provider_label(request.url, request.headers, request.content)
    if shown is None:
        return Miss(request.method, "(not shown)", "", [], [TurnView("refused", _REFUSED)], why, provider)
    sent = shown.request
    found = candidates(sent, interactions, rules)
    nearest, diffs = "", []
    if found:
        best = found[0]
        recorded = best.interaction.request
        nearest = f"interactions[{best.position}] {recorded.method} {recorded.url}"
        for difference in best.diffs:
            old, new = _pieces(_text(difference.recorded), _text(difference.sent))
            diffs.append(FieldDiff(difference.path, old, new))
    model = summarize_interaction(shown).model
    return Miss(sent.method, sent.url, nearest, diffs, _request_views(sent), why, provider, model)


def drift_line(where: str, text: str) -> DriftLine:
    """A line of ``RecordMode.verify``'s drift with its severity: ``added`` for a new field (code
    that ignores it still works), ``changed`` for a finish reason, ``breaking`` for the rest (a
    field gone, a type, status, content type, stream events or tool calls changed)."""
    if ": new field " in text:
        severity = "added"
    elif text.startswith("finish reason:"):
        severity = "changed"
    else:
        severity = "breaking"
    return DriftLine(where, severity, text)

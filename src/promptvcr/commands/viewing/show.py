"""``promptvcr show PATH``: a cassette's conversations as a person reads them.

Each interaction shows what was sent (messages, tools offered, tool results) and what came
back, a streamed answer reassembled from its events; a websocket or MCP session its messages
in order, and MCP over HTTP its calls and results (:mod:`.sessionview`); ``--raw`` adds the
events, body or messages as recorded, for when the reassembly is the thing in doubt.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ...cassettes.bodyfiles import described
from ...cassettes.eventstream import decode_frames, is_event_stream
from ...cassettes.models import Interaction, Response
from ...cassettes.sse import parse_events
from ...cassettes.tokens import tokens_of
from ...cassettes.wsframes import session_to_data
from ...errors import CassetteError
from ...files import guarded
from ...readouts.inventory import summarize_interaction
from ...readouts.transcript import Turn, answer_turns, request_turns
from .. import _output
from .sessionview import exchange_turns, session_turns

_STYLES = {
    "user": "cyan",
    "assistant": "green",
    "thinking": "dim",
    "tool call": "yellow",
    "tool result": "yellow",
    "→": "cyan",
    "←": "green",
}


def _turn(turn: Turn) -> Text:
    text = Text("  ")
    label = f"{turn.role} " if turn.role in ("→", "←") else f"{turn.role}: "  # a session's direction
    text.append(label, style=f"bold {_STYLES.get(turn.role, '')}".strip())
    text.append(turn.text)
    return text


def _events(response: Response) -> list[object]:
    """The pieces of a streamed answer: SSE events, or AWS event-stream frames decoded (Bedrock)."""
    if is_event_stream(response.content_type):
        return list(decode_frames(response.content) or ())
    return list(parse_events(response.content.decode("utf-8", "replace")))


def _raw(interaction: Interaction, streamed: bool) -> list[str]:
    response = interaction.response
    if (body_file := described(response.chunks)) is not None:
        return [f"    {body_file}"]
    if streamed:
        return [f"    {json.dumps(event, ensure_ascii=False)}" for event in _events(response)]
    return [f"    {response.content.decode('utf-8', 'replace')}"]


def _render_session(out: Console, response: Response, *, raw: bool) -> None:
    """A websocket or MCP stdio session: its messages in order (see :mod:`.sessionview`)."""
    session = response.websocket
    assert session is not None
    sent = sum(1 for f in session.frames if f.sender == "client" and f.kind not in ("close", "eof"))
    received = sum(1 for f in session.frames if f.sender == "server" and f.kind not in ("close", "eof"))
    figures = [f"{len(session.frames)} messages ({sent} sent, {received} received)"]
    if session.transport == "stdio":
        figures.insert(0, "MCP stdio session")
    else:
        tokens = tokens_of(response)
        figures = ["websocket session", f"status {response.status}", *figures]
        figures.append(_output.tokens(tokens, int(tokens.total == 0)))
    out.print("  " + " | ".join(figures))
    for turn in session_turns(session):
        out.print(_turn(turn))
    if raw:
        out.print("  --- raw messages ---")
        for frame in session_to_data(session, lambda value: value)["frames"]:  # redacted when written
            out.print(f"    {json.dumps(frame, ensure_ascii=False)}", markup=False, soft_wrap=True)


def render(out: Console, position: int, interaction: Interaction, *, raw: bool) -> None:
    request, response = interaction.request, interaction.response
    out.print(Text(f"interactions[{position}] {request.method} {request.url}", style="bold"))
    if response.websocket is not None:
        _render_session(out, response, raw=raw)
        return
    summary = summarize_interaction(interaction)
    body_file = described(response.chunks)  # named, never read
    if summary.streamed and body_file is None:
        streamed = f"streamed, {len(_events(response))} events"
    else:
        streamed = "streamed" if summary.streamed else "not streamed"
    exchange = exchange_turns(request, response)  # MCP over HTTP: calls and results
    figures = [summary.provider, summary.model or "-", f"status {response.status}", streamed]
    figures.append(_output.tokens(summary.tokens, int(summary.tokens.total == 0)))
    if exchange is not None:
        figures = ["MCP over HTTP", f"status {response.status}", streamed]
    out.print("  " + " | ".join(figures))
    if exchange is not None:
        for turn in exchange:
            out.print(_turn(turn))
    else:
        for turn in request_turns(request):
            out.print(_turn(turn))
        out.print("  --- answer ---")
        for turn in answer_turns(response):
            out.print(_turn(turn))
    if raw:
        out.print("  --- raw " + ("events ---" if summary.streamed else "body ---"))
        for line in _raw(interaction, summary.streamed):
            out.print(line, markup=False, soft_wrap=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="cassette file")
    parser.add_argument("--interaction", "-i", type=int, metavar="N", help="show only interactions[N]")
    parser.add_argument(
        "--raw", action="store_true", help="also print the response as recorded (events or body)"
    )


def run(args: argparse.Namespace) -> int:
    out = _output.console()
    try:
        interactions = guarded.read_interactions(args.path)
        if interactions is None:
            raise guarded.missing(args.path)
    except CassetteError as error:
        out.print(str(error), markup=False)
        return 1
    chosen = list(enumerate(interactions))
    if args.interaction is not None:
        if not 0 <= args.interaction < len(interactions):
            out.print(
                f"promptvcr show: {args.path} has {len(interactions)} interaction(s), "
                f"numbered 0 to {len(interactions) - 1}; there is no interactions[{args.interaction}]."
            )
            return 1
        chosen = [chosen[args.interaction]]
    for number, (position, interaction) in enumerate(chosen):
        if number:
            out.print()
        render(out, position, interaction, raw=args.raw)
    return 0

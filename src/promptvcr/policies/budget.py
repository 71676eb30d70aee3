"""A recording budget: no request goes to a provider to be recorded once the run has spent its limit.

``$PROMPTVCR_MAX_RECORD_TOKENS`` and ``$PROMPTVCR_MAX_RECORD_REQUESTS`` (the pytest options
``--max-record-tokens`` / ``--max-record-requests`` set them) cap what a run spends
recording, over every cassette and every process of the run (pytest-xdist workers, the
processes tests start, ``promptvcr serve``): the requests sent to be recorded (or verified),
websocket sessions opened live included, and the tokens their answers reported (a realtime
session's as each ``response.done`` arrives). A request is refused *before* it is sent once
either is reached, with :class:`RecordBudgetSpent`: the answer that crosses the token limit
completes (its cost is known only when it arrives), and nothing is sent after it.

The processes share the count through a ledger file (:mod:`.ledger`) named in
``$PROMPTVCR_BUDGET_DIR``: the pytest plugin makes it for each run; a process outside pytest
that sends live with a limit set and no ledger makes its own, which the processes it starts
then share. MCP sessions (stdio servers, JSON-RPC over HTTP) are neither counted nor refused:
they are the test's own tool servers, not a provider, and report no tokens; a budget counts
what the provider bills.

The refusal is a :class:`~promptvcr.CassetteMiss`: like a miss it escapes the SDK's retries
and reaches the test as itself, and the pytest plugin then stops the run. Nothing here runs
on the replay path: the ledger is read and written only for a request about to go live with
a budget set.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..credentials.byname import redact_url
from ..errors import CassetteMiss
from .ledger import Ledger, LedgerGone, Spent
from .modes import ENV_BUDGET_DIR, ENV_MAX_RECORD_REQUESTS, ENV_MAX_RECORD_TOKENS

if TYPE_CHECKING:  # cassette.py imports this module: replay loads no token counting
    from ..cassettes.models import Request, Response
    from ..cassettes.tokens import Tokens
    from ..cassettes.wsframes import Frame

__all__ = [
    "ENV_BUDGET_DIR",
    "ENV_MAX_RECORD_REQUESTS",
    "ENV_MAX_RECORD_TOKENS",
    "RecordBudgetSpent",
    "Spent",
    "admit",
    "counting",
    "limits",
    "refused",
    "reset",
    "spend",
    "spend_frame",
    "spent",
    "start_run",
]


class RecordBudgetSpent(CassetteMiss):
    """A request not sent: the run's recording budget is spent."""


_lock = threading.Lock()
#: Requests this process was refused since :func:`reset` (the plugin stops the run on one).
_refused = 0
#: The ledger this process made itself (no run named one), removed by :func:`reset` and at exit.
_own: Ledger | None = None


def _limit(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        limit = int(value.replace("_", ""))
    except ValueError:
        raise ValueError(f"${name}={value!r} is not a whole number (give e.g. 50000, or unset it).") from None
    if limit < 0:
        raise ValueError(f"${name}={value!r} is negative; give 0 or more.")
    return limit


def limits() -> tuple[int | None, int | None]:
    """``(max tokens, max requests)`` from the environment; ``None`` for no limit."""
    return _limit(ENV_MAX_RECORD_TOKENS), _limit(ENV_MAX_RECORD_REQUESTS)


def counting() -> bool:
    """Whether a budget is set: what a live session asks once, not at each message."""
    return limits() != (None, None)


def start_run(workers: int = 0) -> Ledger:
    """A new ledger for a run (the pytest plugin's main process): the caller names it in
    ``$PROMPTVCR_BUDGET_DIR`` for the run's processes and removes it when the run ends."""
    reset()
    return Ledger.create(workers)


def _ledger() -> Ledger:
    """The run's ledger, from the environment; else this process's own, made now and named in
    the environment so that the processes it starts from now on share it."""
    global _own
    if folder := os.environ.get(ENV_BUDGET_DIR):
        return Ledger(Path(folder))
    with _lock:
        if _own is None:
            _own = Ledger.create()
            atexit.register(_own.remove)
        os.environ[ENV_BUDGET_DIR] = str(_own.folder)
        return _own


def reset() -> None:
    """Count from zero: this process's refusals, and the ledger it made itself (a run's ledger
    belongs to the run)."""
    global _refused, _own
    with _lock:
        _refused = 0
        if _own is not None:
            if os.environ.get(ENV_BUDGET_DIR) == str(_own.folder):
                del os.environ[ENV_BUDGET_DIR]
            _own.remove()
            _own = None


def spent() -> Spent:
    """What the run spent so far, over all its processes (nothing yet: no ledger)."""
    folder = os.environ.get(ENV_BUDGET_DIR)
    if not folder:
        return Spent()
    try:
        return Ledger(Path(folder)).read()
    except LedgerGone:
        return Spent()


def refused() -> int:
    """Requests this process was refused since :func:`reset`: read after every test, so it is
    this process's count in memory, not the ledger (each process stops at its own refusal)."""
    return _refused


def _tool_session(request: Request) -> bool:
    """An MCP server's traffic: a stdio server, or JSON-RPC over HTTP (its messages, and the
    session's GET stream and DELETE, which carry ``Mcp-Session-Id``)."""
    if request.method == "SPAWN" or "mcp-session-id" in request.headers:
        return True
    content = request.content
    if b'"jsonrpc"' not in content:  # one search: a provider's body never parses here
        return False
    try:
        message = json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    first = message[0] if isinstance(message, list) and message else message
    return isinstance(first, dict) and "jsonrpc" in first


def admit(path: Path, request: Request, missed: list[Request], misses: list[CassetteMiss]) -> None:
    """Count ``request`` as about to be sent live, or raise :class:`RecordBudgetSpent` when the
    run's budget is spent, after adding it to the cassette's ``missed`` and ``misses`` (a
    refusal is a miss: one the code under test swallows still fails the test as it exits)."""
    max_tokens, max_requests = limits()
    if (max_tokens is None and max_requests is None) or _tool_session(request):
        return

    def over_limits(spent: Spent) -> list[str]:
        over = []
        if max_requests is not None and spent.requests >= max_requests:
            over.append(
                f"{spent.requests:,} request(s) sent, the limit is {max_requests:,} (--max-record-requests)"
            )
        if max_tokens is not None and spent.tokens.total >= max_tokens:
            over.append(
                f"{spent.tokens.total:,} tokens spent (input {spent.input:,}, output "
                f"{spent.output:,}), the limit is {max_tokens:,} (--max-record-tokens)"
            )
        return over

    try:
        spent, over = _ledger().reserve(over_limits)
    except LedgerGone as gone:
        _refuse(
            path,
            request,
            missed,
            misses,
            f"promptvcr: the run's recording budget cannot be read ({gone}): the run that set it may "
            f"have ended. {request.method} {redact_url(request.url)} was not sent (for {path}).\n"
            f"Unset ${ENV_BUDGET_DIR} to give this process a budget of its own.",
        )
    if over:
        _refuse(
            path,
            request,
            missed,
            misses,
            f"promptvcr: the recording budget is spent: {'; '.join(over)}{_shared(spent)}. "
            f"{request.method} {redact_url(request.url)} was not sent (for {path}).\n"
            f"To spend more, raise the limit (--max-record-tokens / --max-record-requests, or "
            f"${ENV_MAX_RECORD_TOKENS} / ${ENV_MAX_RECORD_REQUESTS}) or record fewer tests at a time.",
        )


def _refuse(
    path: Path, request: Request, missed: list[Request], misses: list[CassetteMiss], message: str
) -> NoReturn:
    global _refused
    with _lock:
        _refused += 1
    error = RecordBudgetSpent(message, cassette=path)
    missed.append(request)
    misses.append(error)
    raise error


def _shared(spent: Spent) -> str:
    """The budget is the run's, not this process's: said when several processes share it."""
    if spent.processes < 2:
        return ""
    return (
        f", the run's total across {spent.processes} processes (pytest-xdist workers, the processes "
        f"tests start and promptvcr serve share one budget)"
    )


def spend(response: Response) -> None:
    """Add the tokens an answer received live reported (a budget set: else nothing is read)."""
    if not counting():
        return
    from ..cassettes.tokens import tokens_of

    if (tokens := tokens_of(response)).total:
        _add(tokens)


def spend_frame(frame: Frame) -> None:
    """A message of a live websocket session: the tokens it reports (a realtime ``response.done``,
    Gemini Live's ``usageMetadata``), counted as it arrives. Callers ask :func:`counting` once
    per session; a message that does not say ``"usage`` is not parsed."""
    if frame.sender != "server" or b'"usage' not in frame.data:
        return
    from ..cassettes.tokens import frame_tokens

    if (tokens := frame_tokens(frame)).total:
        _add(tokens)


def _add(tokens: Tokens) -> None:
    try:
        _ledger().add(tokens)
    except LedgerGone as gone:  # the run ended first: say so; the answer itself is recorded
        print(
            f"promptvcr: {tokens.total:,} tokens not counted in the recording budget: {gone}", file=sys.stderr
        )

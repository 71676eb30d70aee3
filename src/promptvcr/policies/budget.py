"""A recording budget: no request goes to a provider to be recorded once the run has spent its limit.

``$PROMPTVCR_MAX_RECORD_TOKENS`` and ``$PROMPTVCR_MAX_RECORD_REQUESTS`` (the pytest options
``--max-record-tokens`` / ``--max-record-requests`` set them) cap what one process spends
recording, over every cassette: the requests sent to be recorded (or verified) and the tokens
their answers reported. A request is refused *before* it is sent once either is reached, with
:class:`RecordBudgetSpent`: the answer that crosses the token limit completes (its cost is
known only when it arrives), and nothing is sent after it.

The refusal is a :class:`~promptvcr.CassetteMiss`: like a miss it escapes the SDK's retries
and reaches the test as itself, and the pytest plugin then stops the run. Counting starts
anew with :func:`reset` (each pytest run) and is read from the environment at each request
sent live, never on the replay path.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..credentials.byname import redact_url
from ..errors import CassetteMiss
from .modes import ENV_MAX_RECORD_REQUESTS, ENV_MAX_RECORD_TOKENS

if TYPE_CHECKING:  # cassette.py imports this module: replay loads no token counting
    from ..cassettes.models import Request, Response
    from ..cassettes.tokens import Tokens

__all__ = [
    "ENV_MAX_RECORD_REQUESTS",
    "ENV_MAX_RECORD_TOKENS",
    "RecordBudgetSpent",
    "Spent",
    "admit",
    "limits",
    "refused",
    "reset",
    "spend",
    "spent",
]


class RecordBudgetSpent(CassetteMiss):
    """A request not sent: the run's recording budget is spent."""


@dataclass
class Spent:
    requests: int = 0
    input: int = 0
    output: int = 0
    #: Requests refused once the budget was spent.
    refused: int = 0

    @property
    def tokens(self) -> Tokens:
        from ..cassettes.tokens import Tokens

        return Tokens(self.input, self.output)


_lock = threading.Lock()
_spent = Spent()


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


def reset() -> None:
    global _spent
    with _lock:
        _spent = Spent()


def spent() -> Spent:
    with _lock:
        return Spent(_spent.requests, _spent.input, _spent.output, _spent.refused)


def refused() -> int:
    """Requests refused since :func:`reset`: read after every test, so no copy is made."""
    return _spent.refused


def admit(path: Path, request: Request, missed: list[Request], misses: list[CassetteMiss]) -> None:
    """Count ``request`` as sent live, or raise :class:`RecordBudgetSpent` when the budget is
    spent, after adding it to the cassette's ``missed`` and ``misses`` (a refusal is a miss:
    one the code under test swallows still fails the test as the cassette exits)."""
    max_tokens, max_requests = limits()
    with _lock:
        over = []
        if max_requests is not None and _spent.requests >= max_requests:
            over.append(
                f"{_spent.requests:,} request(s) sent, the limit is {max_requests:,} (--max-record-requests)"
            )
        if max_tokens is not None and _spent.tokens.total >= max_tokens:
            over.append(
                f"{_spent.tokens.total:,} tokens spent (input {_spent.tokens.input:,}, output "
                f"{_spent.tokens.output:,}), the limit is {max_tokens:,} (--max-record-tokens)"
            )
        if not over:
            _spent.requests += 1
            return
        _spent.refused += 1
    refused = RecordBudgetSpent(
        f"promptvcr: the recording budget is spent: {'; '.join(over)}. "
        f"{request.method} {redact_url(request.url)} was not sent (for {path}).\n"
        f"To spend more, raise the limit (--max-record-tokens / --max-record-requests, or "
        f"${ENV_MAX_RECORD_TOKENS} / ${ENV_MAX_RECORD_REQUESTS}) or record fewer tests at a time.",
        cassette=path,
    )
    missed.append(request)
    misses.append(refused)
    raise refused


def spend(response: Response) -> None:
    """Add the tokens an answer received live reported."""
    from ..cassettes.tokens import tokens_of

    tokens = tokens_of(response)
    if tokens.total:
        with _lock:
            _spent.input += tokens.input
            _spent.output += tokens.output

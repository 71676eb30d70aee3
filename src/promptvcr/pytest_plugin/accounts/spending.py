"""``--max-record-tokens`` / ``--max-record-requests``: a recording run that stops at its budget.

The options set ``$PROMPTVCR_MAX_RECORD_TOKENS`` / ``$PROMPTVCR_MAX_RECORD_REQUESTS`` for the
run, so that every cassette sees them, ``use_cassette(...)`` in a test and ``promptvcr serve``
subprocesses included (see :mod:`promptvcr.policies.budget`). The budget is the run's: pytest's
main process makes the ledger its workers and their children share (``$PROMPTVCR_BUDGET_DIR``,
:mod:`promptvcr.policies.ledger`), so ``-n 4`` spends one budget, not four, and the summary
shows the run's total. The first request a process is refused fails its test with the
budget's message and stops the run: the tests after it would only be refused too.

What tokens cost, when genai-prices is installed (``pip install promptvcr[report]``): the
summary prices what the run spent and what replaying saved (see :func:`priced`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pytest

from ...policies.modes import ENV_BUDGET_DIR, ENV_MAX_RECORD_REQUESTS, ENV_MAX_RECORD_TOKENS
from ..settings import export_env

if TYPE_CHECKING:
    from ...cassettes.tokens import Tokens

__all__ = [
    "add_model_tokens",
    "add_options",
    "budget_lines",
    "configure",
    "price_line",
    "pricing_installed",
    "stop_if_spent",
]


def _count(text: str) -> str:
    value = text.replace("_", "").replace(",", "")
    if not value.isdigit():
        raise pytest.UsageError(f"a recording budget is a whole number of tokens or requests, not {text!r}")
    return value


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--max-record-tokens",
        type=_count,
        default=None,
        metavar="N",
        help=f"stop recording once the run's live answers reported N tokens (sets ${ENV_MAX_RECORD_TOKENS}).",
    )
    group.addoption(
        "--max-record-requests",
        type=_count,
        default=None,
        metavar="N",
        help=f"stop recording once N requests went to providers (sets ${ENV_MAX_RECORD_REQUESTS}).",
    )


_BUDGET = "promptvcr.policies.budget"


def _budget_in_use() -> bool:
    """Whether a budget is set or was loaded: a run with neither loads no cassette machinery
    (tests/pytest_plugin/test_plugin_load.py), and then nothing was refused."""
    names = (ENV_MAX_RECORD_TOKENS, ENV_MAX_RECORD_REQUESTS)
    return _BUDGET in sys.modules or any(os.environ.get(name) for name in names)


def configure(config: pytest.Config) -> None:
    """Export the limits and count from zero: each pytest run has its own budget, one ledger
    that its xdist workers (they inherit ``$PROMPTVCR_BUDGET_DIR``) and their children share."""
    for option, name in (
        ("--max-record-tokens", ENV_MAX_RECORD_TOKENS),
        ("--max-record-requests", ENV_MAX_RECORD_REQUESTS),
    ):
        if (value := config.getoption(option)) is not None:
            export_env(config, name, value)
    if not _budget_in_use():
        return
    from ...policies import budget

    try:
        limited = budget.counting()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    budget.reset()
    config.add_cleanup(budget.reset)  # a pytest run inside a test (pytester) leaves none behind
    if not limited or hasattr(config, "workerinput"):  # a worker counts in its main process's ledger
        return
    ledger = budget.start_run(_workers(config))
    config.add_cleanup(ledger.remove)
    export_env(config, ENV_BUDGET_DIR, str(ledger.folder))


def _workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers the run starts (0 without xdist): the budget they share
    is named as the run's in its messages even before each has sent."""
    if config.getoption("dist", "no") == "no":
        return 0
    return len(config.getoption("tx", None) or ())


def stop_if_spent(item: pytest.Item) -> None:
    """After a test: a refusal stops the run (each test after it would be refused too)."""
    if _BUDGET not in sys.modules:
        return
    from ...policies import budget

    if budget.refused() and not item.session.shouldstop:
        item.session.shouldstop = "promptvcr: the recording budget is spent (--max-record-tokens/-requests)"


def budget_lines() -> list[str]:
    """The summary's line about the budget, when one was set."""
    if not _budget_in_use():
        return []
    from ...policies import budget

    max_tokens, max_requests = budget.limits()
    if max_tokens is None and max_requests is None:
        return []
    spent = budget.spent()
    limits = [f"{max_tokens:,} tokens" for _ in [0] if max_tokens is not None]
    limits += [f"{max_requests:,} requests" for _ in [0] if max_requests is not None]
    line = (
        f"recording budget: {spent.tokens.total:,} tokens in {spent.requests:,} live request(s), "
        f"of {' and '.join(limits)}"
    )
    if spent.processes > 1:
        line += f" (the run's total across {spent.processes} processes)"
    if spent.refused:
        line += (
            f"; spent: {spent.refused:,} request(s) refused and the run stopped (raise the limit to go on)"
        )
    return [line]


@functools.cache
def pricing_installed() -> bool:
    """Whether genai-prices is there to price tokens (looked for once, not imported)."""
    import importlib.util

    return importlib.util.find_spec("genai_prices") is not None


def price_line(
    replayed: list[tuple[str, str, int, int]], recorded: list[tuple[str, str, int, int]]
) -> list[str]:
    """What the tokens cost at list prices, ``(provider, model, input, output)`` each; no line
    when no model's price is known, or genai-prices is not installed (the summary shows tokens)."""
    parts = []
    for label, tokens in (("spent on this run", recorded), ("not spent (replayed)", replayed)):
        price = _priced(tokens) if any(t_in or t_out for _, _, t_in, t_out in tokens) else None
        if price is not None:
            parts.append(f"{_dollars(price)} {label}")
    return [f"tokens priced: {'; '.join(parts)} (list prices, genai-prices)"] if parts else []


def _dollars(price: float) -> str:
    return f"${price:,.2f}" if price >= 0.01 else f"${price:.6f}"


def _priced(tokens: Iterable[tuple[str, str, int, int]]) -> float | None:
    from ...htmlreport.pricing import Prices  # genai-prices loads here, at the end of a run

    prices = Prices()
    total, known = 0.0, False
    for provider, model, tokens_in, tokens_out in tokens:
        price = prices.price(provider, model, tokens_in, tokens_out)
        if price is not None:
            total, known = total + price, True
    return total if known else None


#: A JSON body's ``"model": "name"``, found without parsing the body (one per replayed answer).
_MODEL = re.compile(rb'"model"\s*:\s*"([^"\\]{1,200})"')


def add_model_tokens(found: dict[str, list[int]], play: Any, tokens: Tokens) -> None:
    """Add one answer's ``tokens`` to ``found``: ``provider<TAB>model`` -> replayed input,
    output, then recorded input, output. Only with genai-prices installed (see ``use_of``)."""
    from urllib.parse import urlsplit

    from ...cassettes.models import Interaction
    from ...matching.select import family_of
    from ...readouts.inventory import model_of

    url = urlsplit(play.request.url)
    provider = family_of(url.hostname or "", url.path) or (url.hostname or "unknown")
    counts = found.setdefault(
        f"{provider}\t{model_of(Interaction(play.request, play.response))}", [0, 0, 0, 0]
    )
    at = 0 if play.outcome == "replayed" else 2
    counts[at] += tokens.input
    counts[at + 1] += tokens.output

"""The command line of keeping cassettes honest: ``--max-age``, ``--on-stale``, ``--allow-record-in-ci``.

``--max-age`` and ``--on-stale`` win over a marker's and ``promptvcr_config``'s (like
``--record-mode``), and reach a ``use_cassette(...)`` a test calls itself as
``$PROMPTVCR_MAX_AGE`` / ``$PROMPTVCR_ON_STALE`` (an argument written in code still wins).
``--allow-record-in-ci`` sets ``$PROMPTVCR_ALLOW_RECORD_IN_CI`` for the run: with ``$CI`` set,
recording, rewriting and verifying refuse without it (see :func:`promptvcr.policies.modes.check_ci`).
What ``RecordMode.verify`` found is summed up in :func:`drift_lines`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from ..policies.modes import ENV_ALLOW_IN_CI, ENV_MAX_AGE, ENV_ON_STALE, ON_STALE
from .settings import export_env

__all__ = ["add_options", "configure", "drift_lines", "overrides"]

_SHOWN = 5


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--max-age",
        default=None,
        metavar="AGE",
        help="cassettes holding interactions recorded longer ago than AGE (30d, 12h, 90m) are stale: "
        "see --on-stale. Interactions without a recorded date count as stale.",
    )
    group.addoption(
        "--on-stale",
        choices=ON_STALE,
        default=None,
        help="what a stale cassette gets: warn (default), fail, or rewrite (recorded anew).",
    )
    group.addoption(
        "--allow-record-in-ci",
        action="store_true",
        default=False,
        help=f"let record, rewrite and verify run although $CI is set (sets ${ENV_ALLOW_IN_CI}=1).",
    )


def configure(config: pytest.Config) -> None:
    """Check ``--max-age`` and export the options to every cassette of the run."""
    max_age = config.getoption("--max-age")
    if max_age:
        from ..policies.staleness import parse_max_age  # the cassette machinery loads when used

        try:
            parse_max_age(max_age)
        except ValueError as error:
            raise pytest.UsageError(f"--max-age: {error}") from None
        export_env(config, ENV_MAX_AGE, max_age)
    if on_stale := config.getoption("--on-stale"):
        export_env(config, ENV_ON_STALE, on_stale)
    if config.getoption("--allow-record-in-ci"):
        export_env(config, ENV_ALLOW_IN_CI, "1")


def overrides(config: pytest.Config) -> dict[str, Any]:
    """The cassette options the command line sets, for the marker's and the fixture's cassettes."""
    given = {"max_age": config.getoption("--max-age"), "on_stale": config.getoption("--on-stale")}
    return {name: value for name, value in given.items() if value}


def drift_lines(drift: Iterable[tuple[str, str, list[str]]]) -> list[str]:
    """The summary of what verify found: ``(cassette, where, differences)`` per drifted answer."""
    found = sorted(drift)
    if not found:
        return []
    cassettes = {path for path, _, _ in found}
    lines = [
        f"verify drift: {len(found)} answer(s) in {len(cassettes)} cassette(s) differ from the recording"
    ]
    for path, where, differences in found[:_SHOWN]:
        lines.append(f"  {path}: {where}")
        lines.extend(f"    {line}" for line in differences[:3])
        if len(differences) > 3:
            lines.append(f"    and {len(differences) - 3} more")
    if len(found) > _SHOWN:
        lines.append(f"  and {len(found) - _SHOWN} more (--drift-report FILE lists them all)")
    return lines

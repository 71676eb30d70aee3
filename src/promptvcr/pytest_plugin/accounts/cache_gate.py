"""``--fail-on-cache-break``: a run fails when a conversation its tests sent breaks a prompt cache.

A prompt that changes early (a timestamp in the system prompt, tools in another order) turns
off the provider's prompt cache for everything after it, and nothing fails: the bill grows.
In a replaying run the requests the code sends are what it would send live, and the recorded
answers hold the cached-token counts the provider gave; so a CI run that replays catches it.
Each cassette is read as it exits, for what it played (:mod:`promptvcr.readouts.cachebreaks`);
the run ends with exit status 1 and one line per break (the test, the cassette, the request,
the byte, what changed). Under pytest-xdist the workers send theirs to the controller, as
``--fail-on-drift`` does (:class:`.drift_gate.DriftGate`, whose collecting this gate shares).

Registered only when the option is given: a run without it pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .drift_gate import DriftGate

if TYPE_CHECKING:
    from ...cassette import Cassette

__all__ = ["NAME", "CacheGate", "add_options", "configure"]

NAME = "promptvcr-cache-gate"


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--fail-on-cache-break",
        action="store_true",
        default=False,
        help="end the run with exit status 1 when a conversation a test sent breaks its prompt cache "
        "(a request differs from the one before inside what should have been cached), naming the byte "
        "and what changed; works in replay runs (see `promptvcr cache`).",
    )


def configure(config: pytest.Config) -> None:
    if config.getoption("--fail-on-cache-break"):
        config.pluginmanager.register(CacheGate(config), NAME)


class CacheGate(DriftGate):
    """Collects ``(test, cassette, break, 1)`` of every cache break of the run."""

    output_key = "promptvcr_cache_gate"

    def _seen(self, cassette: Cassette) -> None:
        from ...cassettes.models import Interaction
        from ...readouts.cachebreaks import conversations
        from ...readouts.drift import shown_path

        played = [Interaction(p.request, p.response) for p in cassette.played if p.response is not None]
        found = [(c, turn) for c in conversations(played) for turn in c.breaks]
        if not found:
            return
        shown = shown_path(cassette.path, self.config.rootpath)
        for conversation, turn in found:
            request = f"{conversation.endpoint} ({conversation.model}), request {turn.position + 1}"
            where = f"{request}: {turn.break_text}"
            self.found.append((self._nodeid, shown, where, 1))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput") or not self.found:
            return
        terminalreporter.write_sep("=", "promptvcr --fail-on-cache-break", red=True)
        terminalreporter.write_line(f"FAILED: {len(self.found)} request(s) break their prompt cache:")
        by_test: dict[tuple[str, str], list[str]] = {}
        for nodeid, cassette, where, _ in sorted(self.found):
            by_test.setdefault((nodeid, cassette), []).append(where)
        for (nodeid, cassette), breaks in by_test.items():
            terminalreporter.write_line(f"  {nodeid or '(outside a test)'}  cassette {cassette}")
            for where in breaks:
                terminalreporter.write_line(f"    {where}")
        terminalreporter.write_line(
            "Keep what changes each request (a time, an id) out of the prompt's start, or after the last "
            "cache breakpoint; `promptvcr cache CASSETTE` shows every request."
        )

"""No false hits over real traffic: a changed prompt, model, temperature or tool list never
gets the key of a recorded request of its cassette (the stale-cassette drift)."""

from __future__ import annotations

from pathlib import Path

from conformance.drift import run_drift
from promptvcr import DEFAULT_RULES, drop_body_fields

SUBSET = Path(__file__).parents[1] / "corpus" / "pydantic-ai"


def test_no_changed_request_of_the_corpus_subset_replays_a_recording() -> None:
    tried, hits, lines = run_drift(SUBSET)
    assert lines == [] and sum(hits.values()) == 0
    assert tried["message text"] >= 100 and tried["model"] >= 40 and tried["tools"] >= 30


def test_the_check_catches_a_key_that_ignores_the_prompt() -> None:
    too_loose = (*DEFAULT_RULES, drop_body_fields({"messages", "contents", "input"}))
    _, hits, lines = run_drift(SUBSET, too_loose)
    assert hits["message text"] > 0 and lines[0].startswith("FALSE HIT ")

"""No false hits over real traffic: a changed prompt, model, temperature or tool list never
gets the key of a recorded request of its cassette (the stale-cassette drift)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from network_guard import no_network

from conformance import run_cassette
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


def test_a_cassette_whose_calls_miss_is_a_row_of_the_table_not_a_crash(tmp_path: Path) -> None:
    """Issue 53: the run catches each miss as a result; the cassette raising it again at its
    exit must not end the run (``python -m conformance`` stopped with a traceback)."""
    from itertools import count

    from promptvcr.matching.parts import KeyParts

    fresh = count()

    def never_the_same(parts: KeyParts) -> KeyParts:  # every key differs: every request misses
        return dataclasses.replace(parts, path=f"{parts.path}/{next(fresh)}")

    source = SUBSET / "openai" / sorted(p.name for p in (SUBSET / "openai").iterdir())[0]
    with pytest.MonkeyPatch.context() as patch, no_network(patch):
        outcomes = run_cassette(source, "openai", tmp_path, rules=[never_the_same])
    assert outcomes and all(o.status == "failed" for o in outcomes if o.status != "skipped"), outcomes

"""The conformance run over the committed corpus subset: real provider traffic, replayed
through the real provider SDKs, must come back equal to what the SDK makes of the
recorded bytes. Runs the same code as ``python -m conformance``; the full
shared corpus is run with ``python -m conformance ../shared/corpus/pydantic-ai``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from network_guard import no_network

from conformance import Outcome, failure_lines, provider_table, run_corpus

SUBSET = Path(__file__).parents[1] / "corpus" / "pydantic-ai"

#: Providers whose every interaction must replay equal (the bar of issue 4).
STRICT = {
    "openai",
    "anthropic",
    "google-gla",
    "google-vertex",
    "groq",
    "mistral",
    "cohere",
    "openrouter",
    "deepseek",
    "azure-openai",
    "huggingface",
    "bedrock",
    "voyageai",
}


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    # Both passes stay off the network: the reference is served from each client's own hook
    # (an httpx mock transport, botocore's before-send, a requests adapter), replay by promptvcr.
    with pytest.MonkeyPatch.context() as patch, no_network(patch) as attempts:
        done = run_corpus(SUBSET)
    assert attempts == []
    return done


def test_every_interaction_of_the_subset_is_imported_and_judged(outcomes: list[Outcome]) -> None:
    manifest = (SUBSET.parent / "MANIFEST.tsv").read_text().splitlines()[1:]
    expected = sum(int(line.split("\t")[7]) for line in manifest)
    assert len(outcomes) == expected
    assert not [o for o in outcomes if o.status == "not-imported"]


def test_every_driven_interaction_replays_equal(outcomes: list[Outcome]) -> None:
    failed = [o for o in outcomes if o.status == "failed"]
    assert not failed, "\n" + provider_table(outcomes) + "\n" + "\n".join(failure_lines(failed))
    driven = Counter(o.provider for o in outcomes if o.status == "equal")
    assert set(driven) >= STRICT  # each provider really went through its SDK
    assert sum(driven.values()) >= 80


def test_no_interaction_of_the_subset_is_skipped(outcomes: list[Outcome]) -> None:
    assert [o for o in outcomes if o.status == "skipped"] == []


def test_bedrock_replays_through_boto3_for_every_operation_of_the_subset(outcomes: list[Outcome]) -> None:
    rows = [line.split("\t") for line in (SUBSET.parent / "MANIFEST.tsv").read_text().splitlines()[1:]]
    endpoints = {row[0].split("/")[-1]: row[6] for row in rows}
    by_operation: Counter[str] = Counter()
    for o in outcomes:
        if o.sdk == "boto3" and o.status == "equal":
            by_operation[endpoints[o.cassette].rsplit("/", 1)[-1]] += 1
    # converse, converse-stream, invoke (invoke_model) and count-tokens, each through boto3
    assert set(by_operation) >= {"converse", "converse-stream", "invoke", "count-tokens"}, by_operation
    assert sum(by_operation.values()) >= 20
    equal_sdks = {o.sdk for o in outcomes if o.status == "equal"}
    assert {"boto3", "anthropic-bedrock", "voyageai"} <= equal_sdks


def test_streams_replay_through_each_sdks_stream_api(outcomes: list[Outcome]) -> None:
    streamed = {
        line.split("\t")[0].split("/")[-1]
        for line in (SUBSET.parent / "MANIFEST.tsv").read_text().splitlines()[1:]
        if line.split("\t")[8] == "y"
    }
    equal_streams = {o.cassette for o in outcomes if o.status == "equal" and o.cassette in streamed}
    assert len(equal_streams) >= 8, equal_streams

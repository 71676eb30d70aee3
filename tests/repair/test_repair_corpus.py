"""The whole repair corpus (tests/repair/data, copied from the shared corpus with its README)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from repair_corpus import CASES_FILE, load_cases, same, tags_for

from promptvcr.repair import RepairError, parse

CASES = load_cases()
EXPECTED_PASSES = 300


def outcome(case: dict[str, Any]) -> Any:
    try:
        return parse(case["input"], schema=case["schema"], tags=tags_for(case))
    except RepairError as error:
        return error


def test_equality_helper_follows_the_readme() -> None:
    assert same({"a": 1, "b": [1.0]}, {"b": [1], "a": 1.0})
    assert not same({"a": True}, {"a": 1})
    assert not same([1, 2], [2, 1])
    assert not same("a ", "a")


def test_corpus_pass_count() -> None:
    failures = [case["id"] for case in CASES if not same(outcome(case), case["expected"])]
    passed = len(CASES) - len(failures)
    assert (passed, failures) == (EXPECTED_PASSES, []), f"{passed}/{len(CASES)} pass; failing: {failures}"


def test_every_category_passes() -> None:
    totals = Counter(case["category"] for case in CASES)
    passes = Counter(case["category"] for case in CASES if same(outcome(case), case["expected"]))
    assert {category: passes[category] for category in totals} == dict(totals)


@pytest.mark.parametrize("case", [c for c in CASES if c["category"] == "valid_json"], ids=lambda c: c["id"])
def test_valid_json_comes_back_exactly_as_json_loads_reads_it(case: dict[str, Any]) -> None:
    value = parse(case["input"])
    assert json.dumps(value, sort_keys=True) == json.dumps(json.loads(case["input"]), sort_keys=True)


def test_corpus_licence_notice_travels_with_the_data() -> None:
    readme = (CASES_FILE.parent / "README.md").read_text(encoding="utf-8")
    assert "MIT License, Copyright (c) 2024 Chenglin Wu" in readme
    assert "MIT License, Copyright (c) 2023 Stefano Baccianella" in readme

"""Rules for the ``promptvcr.repair`` package itself (issue 14) and its promises (issue 21)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import promptvcr.repair as repair_package
from promptvcr.repair import parse, repair

PACKAGE = Path(repair_package.__file__).parent
SOURCE = PACKAGE.parent
MODULES = sorted(PACKAGE.glob("*.py"))


def test_imports_nothing_else_of_promptvcr() -> None:
    for module in MODULES:
        text = module.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(?:from|import)\s+(?:promptvcr\b|\.\.)", text, re.M), module.name


def test_no_module_name_repeats_one_used_elsewhere_in_the_package() -> None:
    elsewhere = {path.name for path in SOURCE.rglob("*.py") if PACKAGE not in path.parents}
    assert sorted({m.name for m in MODULES} - {"__init__.py"} & elsewhere) == []


def test_modules_stay_small() -> None:
    assert {m.name: n for m in MODULES if (n := len(m.read_text(encoding="utf-8").splitlines())) > 400} == {}


def test_public_names_are_unchanged() -> None:
    assert repair_package.__all__ == [
        "DEFAULT_STEPS", "DEFAULT_TAGS", "NOTHING", "Candidate", "Job", "RepairError", "Step", "choose",
        "coerce_types", "decode_valid", "extract", "parse", "repair", "repair_keys", "repair_syntax", "run",
    ]  # fmt: skip


def test_without_json_repair_the_import_says_how_to_install_it() -> None:
    code = "import sys; sys.modules['json_repair'] = None; import promptvcr.repair"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "pip install 'promptvcr[repair]'" in result.stderr


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN, "b": Infinity, "c": -Infinity}', '{"a": NaN, "b": [Infinity,]}', "[NaN, 1", "{'a': NaN}"],
)
def test_repair_always_emits_valid_json(text: str) -> None:
    out = repair(text)
    assert json.loads(out, parse_constant=lambda word: pytest.fail(f"{word} in {out}")) is not None
    assert "null" in out


def test_non_finite_numbers_become_null_in_parse_too() -> None:
    value = parse("[NaN, -Infinity, 1.5]")
    assert value == [None, None, 1.5]
    assert not any(isinstance(x, float) and not math.isfinite(x) for x in value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":"x}``` [1,2]","b":"y"}', {"a": "x}``` [1,2]", "b": "y"}),
        ('{"key": "```json"', {"key": "```json"}),
        ('{"a": "```json {}```", "b": 1,}', {"a": "```json {}```", "b": 1}),
        ('Here:\n```json\n{"a": "use ``` fences"}\n```', {"a": "use ``` fences"}),
    ],
)
def test_fences_are_recognised_only_outside_json_strings(text: str, expected: object) -> None:
    assert parse(text) == expected


def test_a_reasoning_draft_gives_way_to_the_answer_after_it() -> None:
    text = '<think>Draft: {"answer": 41}... let me check.</think>\n\n{"answer": 42}'
    assert parse(text) == {"answer": 42}
    assert parse('<think>only a draft: {"answer": 41}</think>') == {"answer": 41}


def test_what_json_repair_keeps_is_kept() -> None:
    assert parse('{"key": "value"}, "key2" "value2"}') == {"key": "value", "key2": "value2"}
    assert parse('{"key:value}') == {"key": "value"}
    text = '{"Changes": [\n // object a\n {"A": "1"},\n // object b ]\n {"A": "2"}\n]}'
    assert parse(text) == {"Changes": [{"A": "1"}, {"A": "2"}]}


def test_a_large_document_with_one_slip_stays_fast() -> None:
    items = ", ".join(f'{{"id": {i}, "name": "n{i}", "tags": ["a", "b"]}}' for i in range(20000))
    text = '{"items": [' + items + "],}"
    assert len(parse(text)["items"]) == 20000

"""The repair corpus and its comparison rules, shared by the corpus test and the benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CASES_FILE = Path(__file__).parent / "data" / "cases.jsonl"


def load_cases() -> list[dict[str, Any]]:
    lines = CASES_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def same(a: Any, b: Any) -> bool:
    """The corpus README's equality: key order ignored, 1 == 1.0, a bool never equals a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def tags_for(case: dict[str, Any]) -> tuple[str, str] | None:
    """The corpus gives the closing tag (``req_key``); the opening tag is it without the slash."""
    closing = case["req_key"]
    return (closing.replace("/", "", 1), closing) if closing else None

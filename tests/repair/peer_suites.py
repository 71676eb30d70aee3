"""Other projects' repair test cases (``data/peers``) and how they are scored.

Shared by ``test_repair_peers.py`` and ``benchmarks/bench_repair.py``. A case passes when the
repair gives the value the other project's test expects (compared like the corpus: key order
ignored, ``1 == 1.0``), or, for a case that expects no value, when it raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repair_corpus import same

PEERS_DIR = Path(__file__).parent / "data" / "peers"
SUITES = {"json_repair": "cases_json_repair.jsonl", "jsonrepair_js": "cases_jsonrepair_js.jsonl"}
NO_VALUE = object()


def load_suite(name: str) -> list[dict[str, Any]]:
    lines = (PEERS_DIR / SUITES[name]).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def attempt(repair: Callable[[str], Any], text: str) -> Any:
    """What ``repair`` makes of ``text``, or ``NO_VALUE`` when it raises."""
    try:
        return repair(text)
    except Exception:  # json_repair raises assorted types on some inputs
        return NO_VALUE


def passes(case: dict[str, Any], value: Any) -> bool:
    if case["no_value"]:
        return value is NO_VALUE
    return value is not NO_VALUE and same(value, case["expected"])

"""Other projects' repair test cases (``data/peers``) and how they are scored.

Shared by ``test_repair_peers.py`` and ``benchmarks/bench_repair.py``. A case passes when the
repair gives the value the other project's test expects (compared like the corpus: key order
ignored, ``1 == 1.0``), or, for a case that expects no value, when it raises. A case of
json_repair's suite that its test runs with ``stream_stable`` is repaired with that option, by
both sides (``options``): the same partial input is tested in both modes, with different answers.
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


def options(case: dict[str, Any]) -> dict[str, Any]:
    """The keyword options of the case's own test that ``parse`` shares with json_repair."""
    flags = case.get("flags", {})
    return {"stream_stable": flags["stream_stable"]} if "stream_stable" in flags else {}


def attempt(repair: Callable[..., Any], text: str, **options: Any) -> Any:
    """What ``repair`` makes of ``text`` with ``options``, or ``NO_VALUE`` when it raises."""
    try:
        return repair(text, **options)
    except Exception:  # json_repair raises assorted types on some inputs
        return NO_VALUE


def passes(case: dict[str, Any], value: Any) -> bool:
    if case["no_value"]:
        return value is NO_VALUE
    return value is not NO_VALUE and same(value, case["expected"])

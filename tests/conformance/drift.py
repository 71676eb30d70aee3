"""False hits over a corpus: does a changed request ever replay an old answer?

For every recorded JSON request, each message text, the model, the temperature and the
tool definitions are changed one at a time, and the key of each changed request is looked
up among the keys of its own cassette. A hit is a false hit: the replay would answer a
changed prompt with a stale recording, the drift users complain about most.

``python -m conformance.drift DIR``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from promptvcr.cassettes.models import Request
from promptvcr.importers import convert_vcr_file
from promptvcr.matching.key import request_key
from promptvcr.matching.parts import Rule
from promptvcr.matching.rules import DEFAULT_RULES

from .runner import iter_cassettes

__all__ = ["mutants", "run_drift"]

_TEXT_KEYS = frozenset({"content", "text", "input", "instructions", "system", "prompt"})
_MAX_TEXT_MUTANTS = 12


def _text_paths(
    value: Any, path: tuple[Any, ...] = (), under_text: bool = False
) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _text_paths(v, (*path, k), under_text or k in _TEXT_KEYS)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _text_paths(v, (*path, i), under_text)
    elif (
        isinstance(value, str) and under_text and value.strip() and path and path[-1] in _TEXT_KEYS | {"text"}
    ):
        yield path


def _set(body: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(body))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def _get(body: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        body = body[step]
    return body


def mutants(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(what changed, changed body)`` for each meaningful change of one request body."""
    for path in list(_text_paths({k: v for k, v in body.items() if k != "tools"}))[:_MAX_TEXT_MUTANTS]:
        yield "message text", _set(body, path, _get(body, path) + " Answer in French.")
    if isinstance(body.get("model"), str):
        yield "model", {**body, "model": body["model"] + "-next"}
    if isinstance(body.get("temperature"), (int, float)):
        yield "temperature", {**body, "temperature": body["temperature"] + 0.5}
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        yield "tools", {**body, "tools": [*tools, {"type": "function", "function": {"name": "added_tool"}}]}


def run_drift(
    root: Path, rules: Sequence[Rule] = DEFAULT_RULES
) -> tuple[Counter[str], Counter[str], list[str]]:
    """Mutants tried and false hits, by kind of change, and a line per false hit."""
    tried: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    lines: list[str] = []
    for provider, file in iter_cassettes(root):
        report = convert_vcr_file(file)
        keys = {request_key(i.request, rules) for i in report.interactions}
        for index, interaction in enumerate(report.interactions):
            request = interaction.request
            try:
                body = json.loads(request.content)
            except ValueError:
                continue
            if not isinstance(body, dict):
                continue
            for what, changed in mutants(body):
                tried[what] += 1
                mutant = Request(request.method, request.url, request.headers, json.dumps(changed).encode())
                if request_key(mutant, rules) in keys:
                    hits[what] += 1
                    lines.append(
                        f"FALSE HIT {provider}/{file.name}[{index}]: changed {what} replays a recording"
                    )
    return tried, hits, lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.drift", description=__doc__)
    parser.add_argument("root", type=Path, help="folder of vcrpy cassettes")
    args = parser.parse_args(argv)
    tried, hits, lines = run_drift(args.root)
    for line in lines:
        print(line)
    for what in sorted(tried):
        print(f"{what}: {tried[what]} changed requests, {hits[what]} false hits")
    print(f"total: {sum(tried.values())} changed requests, {sum(hits.values())} false hits")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())

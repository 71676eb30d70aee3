"""Benchmark promptvcr.repair against json.loads and json_repair, in one interleaved run.

    PYTHONPATH=src python benchmarks/bench_repair.py [--rounds N] [--worst N]

Prints:
  1. the per-category pass table on the repair corpus (tests/repair/data/cases.jsonl), and the
     pass counts on the two peer suites (tests/repair/data/peers);
  2. parse() on a valid ~1 MB document vs json.loads (median of interleaved rounds);
  3. parse() on every valid input without a schema vs json.loads: the added time per case
     (bar: below 2 us);
  4. parse() on each broken case vs json_repair.loads alone, per data set (per-case medians of
     interleaved rounds): the median and the largest per-case ratio (bars: <= 1.0 and <= 2.0),
     the ratio of mean time per case, the count of cases over 2x, and with ``--worst N`` the N
     cases with the largest ratio, with ``--groups`` the median per route of the quick path;
  5. a ~1.3 MB document with one trailing comma, and a quarter of it: parse vs json_repair
     (linear time: the big one should cost about four times the small one).

Shared machines are noisy: every measurement alternates the two contenders, alternates which
goes first, and reports medians.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import json_repair

from promptvcr.repair import NOTHING, parse
from promptvcr.repair.fastpath import without_trailing_commas
from promptvcr.repair.tokens.bail import bare_word_bail, certain_bail
from promptvcr.repair.tokens.token_pass import normalize

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "repair"))

from peer_suites import SUITES, attempt, load_suite, options, passes
from repair_corpus import load_cases, same, tags_for


def run_case(case: dict[str, Any]) -> Any:
    return parse(case["input"], schema=case["schema"], tags=tags_for(case))


def pass_table(cases: list[dict[str, Any]]) -> None:
    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    baseline: Counter[str] = Counter()
    for case in cases:
        total[case["category"]] += 1
        with contextlib.suppress(ValueError):
            passed[case["category"]] += same(run_case(case), case["expected"])
        with contextlib.suppress(Exception):
            baseline[case["category"]] += same(json_repair.loads(case["input"]), case["expected"])
    print(f"{'category':<26} {'n':>4} {'repair':>7} {'json_repair':>12}")
    for category in total:
        print(f"{category:<26} {total[category]:>4} {passed[category]:>7} {baseline[category]:>12}")
    n, ok, base = sum(total.values()), sum(passed.values()), sum(baseline.values())
    print(f"{'total':<26} {n:>4} {ok:>7} {base:>12}   ({100 * ok / n:.1f}% vs {100 * base / n:.1f}%)")


def timed(function: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def fresh(text: str) -> str:
    """An equal but new string object: repeating one object would let per-text memos (which
    only serve the stages of one repair) answer every round after the first."""
    return (text + " ")[:-1] if text else text


def interleaved(
    a: Callable[[str], object], b: Callable[[str], object], rounds: int, text: str = ""
) -> tuple[float, float]:
    """Median seconds of ``a`` and ``b`` on fresh copies of ``text``, alternating which runs
    first each round."""
    times_a: list[float] = []
    times_b: list[float] = []
    for round_number in range(rounds):
        copy_a, copy_b = fresh(text), fresh(text)
        if round_number % 2:
            times_b.append(timed(b, copy_b))
            times_a.append(timed(a, copy_a))
        else:
            times_a.append(timed(a, copy_a))
            times_b.append(timed(b, copy_b))
    return statistics.median(times_a), statistics.median(times_b)


def big_document(target_bytes: int = 1_000_000) -> str:
    """A deterministic, realistic ~1 MB JSON document (records with nested fields and text)."""
    records = []
    index = 0
    size = 2
    while size < target_bytes:
        record = {
            "id": index,
            "name": f"user-{index}",
            "email": f"user{index}@example.com",
            "score": index * 0.37,
            "active": index % 3 == 0,
            "tags": ["alpha", "beta", "gamma"][: index % 4],
            "address": {"city": "Zürich" if index % 2 else "東京", "zip": f"{index:05d}"},
            "bio": 'Line one.\nLine two with "quotes" and a \\ backslash.',
            "parent": None,
        }
        records.append(record)
        size += len(json.dumps(record)) + 2
        index += 1
    return json.dumps({"records": records, "count": len(records)})


def bench_valid(rounds: int) -> None:
    document = big_document()
    assert parse(document) == json.loads(document)
    # Identical work on both sides (one C decode): more rounds, so that a burst of load on a
    # shared machine cannot decide the median.
    ours, theirs = interleaved(parse, json.loads, max(rounds, 61), document)
    print(
        f"valid {len(document) / 1e6:.2f} MB document: parse {ours * 1e3:.2f} ms, "
        f"json.loads {theirs * 1e3:.2f} ms, ratio {ours / theirs:.3f} (bar <= 1.1)"
    )


def peer_counts() -> None:
    for suite in SUITES:
        cases = load_suite(suite)
        ours = sum(passes(case, attempt(parse, case["input"], **options(case))) for case in cases)
        theirs = sum(passes(c, attempt(json_repair.loads, c["input"], **options(c))) for c in cases)
        print(f"{suite + ' suite':<26} {len(cases):>4} {ours:>7} {theirs:>12}")


def is_valid(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def data_sets() -> dict[str, list[dict[str, Any]]]:
    """Every input, as corpus-shaped cases (peer cases have no schema and no tags)."""
    sets = {"corpus": load_cases()}
    for suite in SUITES:
        sets[suite] = [{**case, "schema": None, "req_key": None} for case in load_suite(suite)]
    return sets


def bench_valid_cases(sets: dict[str, list[dict[str, Any]]], rounds: int) -> None:
    texts = [
        c["input"] for cases in sets.values() for c in cases if c["schema"] is None and is_valid(c["input"])
    ]
    added = []
    for text in texts:
        ours, theirs = interleaved(parse, json.loads, rounds, text)
        added.append((ours - theirs) * 1e6)
    print(
        f"{len(texts)} valid inputs: parse adds {statistics.median(added):.2f} us per case over "
        f"json.loads (median; bar < 2 us)"
    )


def route(text: str) -> str:
    """Which shortcut of the quick path answers ``text`` (a rough label, for ``--groups``)."""
    if without_trailing_commas(text) is not NOTHING:
        return "trailing commas"
    if certain_bail(text):
        return "certain bail"
    if bare_word_bail(text) >= 0:
        return "bare word bail"
    normalized = normalize(text)
    if normalized.stopped_at == len(text) and normalized.text.strip() and is_valid(normalized.text):
        return "token pass alone"
    return "token pass, then more" if normalized.stopped_at == len(text) else "json_repair"


def bench_broken(
    name: str, cases: list[dict[str, Any]], rounds: int, worst: int = 0, groups: bool = False
) -> None:
    broken = [case for case in cases if not is_valid(case["input"])]
    ours_total = theirs_total = 0.0
    ratios = []
    rows = []
    for case in broken:
        tags = tags_for(case)
        ours, theirs = interleaved(
            lambda t, s=case["schema"], g=tags: attempt(lambda x: parse(x, schema=s, tags=g), t),
            lambda t: attempt(json_repair.loads, t),
            rounds,
            case["input"],
        )
        ours_total += ours
        theirs_total += theirs
        ratios.append(ours / theirs)
        rows.append((ours / theirs, ours, theirs, case["input"]))
    n = len(broken)
    if groups:
        by_route: dict[str, list[float]] = {}
        for case, ratio in zip(broken, ratios, strict=True):
            by_route.setdefault(route(case["input"]), []).append(ratio)
        for label, found in sorted(by_route.items()):
            print(f"  {label:<20} {len(found):>4} cases: median ratio {statistics.median(found):.3f}")
    print(
        f"{name}: {n} broken cases, per-case ratio to json_repair.loads: median "
        f"{statistics.median(ratios):.3f} (bar <= 1.0), max {max(ratios):.2f} (bar <= 2.0); "
        f"mean per case {ours_total / n * 1e6:.1f} us vs {theirs_total / n * 1e6:.1f} us "
        f"(ratio {ours_total / theirs_total:.3f}); {sum(r > 2.0 for r in ratios)} cases over 2x"
    )
    for ratio, ours, theirs, text in sorted(rows, key=lambda row: row[0], reverse=True)[:worst]:
        print(f"  {ratio:5.2f}  {ours * 1e6:8.1f} us vs {theirs * 1e6:8.1f} us  {text[:70]!r}")


def bench_large() -> None:
    big = big_document(1_300_000)
    for text in (big[: len(big) // 4].rsplit("}, {", 1)[0] + "},]}", big[:-1] + ",}"):
        assert not is_valid(text)
        ours = timed(lambda t=text: parse(t))
        theirs = timed(lambda t=text: json_repair.loads(t))
        print(
            f"{len(text) / 1e6:.2f} MB with one trailing comma: parse {ours * 1e3:.1f} ms, "
            f"json_repair.loads {theirs * 1e3:.1f} ms"
        )


def main(argv: list[str]) -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=31, help="rounds per measurement (default 31)")
    options.add_argument("--worst", type=int, default=0, help="list the N worst broken cases of each set")
    options.add_argument("--groups", action="store_true", help="median ratio per quick-path route")
    args = options.parse_args(argv)
    cases = load_cases()
    pass_table(cases)
    peer_counts()
    print()
    sets = data_sets()
    gc.collect()
    gc.disable()
    try:
        bench_valid(args.rounds)
        bench_valid_cases(sets, args.rounds)
        for name, data in sets.items():
            bench_broken(name, data, args.rounds, args.worst, args.groups)
        bench_large()
    finally:
        gc.enable()


if __name__ == "__main__":
    main(sys.argv[1:])

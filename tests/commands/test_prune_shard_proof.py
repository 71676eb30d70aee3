"""prune plans from shards' records only when together they prove the whole suite ran (issue 54, scenario 2).

A shard selected by path (``pytest test_first.py``) never collected the other tests, so no
record can show that another shard ran them, nor that every shard's record is here: prune
refuses, naming the selection, whether or not the other shards' records are given. Each shard
of a split named ``GROUP/SPLITS`` must be given. The property test builds the records shards
write (a split by deselection or by path, records missing, tests collected but not run) for
random suites and checks that prune never plans to remove an interaction some test plays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugin_suites import make_suite
from property_settings import property_settings
from test_cli_prune_shards import FIRST, SECOND, _prune, _pytest, _suite

from promptvcr.usage.run_record import DESELECTED, CassetteUsage, UsageRecord
from promptvcr.usage.shards import union


def test_shards_split_by_path_are_refused_with_a_record_missing_or_not(
    pytester: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_suite(pytester, test_first=FIRST, test_second=SECOND)
    _suite(pytester.path)
    records = tmp_path / "records"
    records.mkdir()
    for number, file in ((1, "test_first.py"), (2, "test_second.py")):
        folder = tmp_path / f"shard{number}"
        shutil.copytree(pytester.path, folder)
        _pytest(folder, f"--promptvcr-shard=by-path-{number}", file)
        shutil.copy(next((folder / ".promptvcr").glob("usage-*.json")), records)
    before = {str(p): p.read_bytes() for p in pytester.path.rglob("*.yaml")}

    code, refused = _prune(pytester.path, capsys, "--record", str(records / "usage-by-path-1.json"))
    assert code == 1 and "it ran only test_first.py" in refused  # shard 2's record missing
    code, refused = _prune(pytester.path, capsys, "--record", str(records))
    assert code == 1 and "it ran only test_first.py" in refused and "it ran only test_second.py" in refused
    assert {str(p): p.read_bytes() for p in pytester.path.rglob("*.yaml")} == before  # nothing removed


@st.composite
def suites(draw: st.DrawFn) -> tuple[dict[str, dict[str, set[int]]], dict[str, int], list[list[str]]]:
    """Tests, each playing positions of shared cassettes; the cassettes' sizes; shards of the tests."""
    cassettes = {
        f"/suite/cassettes/c{n}.yaml": draw(st.integers(1, 4)) for n in range(draw(st.integers(1, 3)))
    }
    tests: dict[str, dict[str, set[int]]] = {}
    for n in range(draw(st.integers(1, 6))):
        plays = draw(st.dictionaries(st.sampled_from(sorted(cassettes)), st.just(set()), max_size=2))
        for path in plays:
            plays[path] = draw(st.sets(st.integers(0, cassettes[path] - 1), min_size=1))
        tests[f"test_{n % 2}.py::test_{n}"] = plays
    groups = draw(st.integers(1, 3))
    assigned = [draw(st.integers(0, groups - 1)) for _ in tests]
    shards = [
        [test for test, group in zip(tests, assigned, strict=True) if group == g] for g in range(groups)
    ]
    return tests, cassettes, shards


def _record(
    name: str,
    ran: list[str],
    collected: list[str],
    selection: list[str],
    tests: dict[str, dict[str, set[int]]],
    cassettes: dict[str, int],
) -> UsageRecord:
    """What a shard writes: the cassettes its tests opened, each with what none of them played."""
    record = UsageRecord(
        finished=1.0,
        root="/suite",
        shard=name,
        collected=sorted(collected),
        ran=sorted(ran),
        selection=selection,
        test_dirs=["/suite"],
    )
    for test in ran:
        for path, played in tests[test].items():
            unplayed = [p for p in range(cassettes[path]) if p not in played]
            record.use(path, CassetteUsage(cassettes[path], unplayed, [test]))
    return record


@property_settings(300)
@given(suite=suites(), by_path=st.booleans(), named=st.booleans(), data=st.data())
def test_prune_never_removes_an_interaction_some_test_plays(
    suite: tuple[dict[str, dict[str, set[int]]], dict[str, int], list[list[str]]],
    by_path: bool,
    named: bool,
    data: st.DataObject,
) -> None:
    tests, cassettes, shards = suite
    records = []
    for number, group in enumerate(shards, start=1):
        if data.draw(st.booleans(), label=f"shard {number} record missing") and len(shards) > 1:
            continue
        not_run = data.draw(st.sets(st.sampled_from(group)), label="collected, not run") if group else set()
        ran = [test for test in group if test not in not_run]
        name = f"{number}/{len(shards)}" if named else f"worker-{number}"
        if by_path:  # pytest test_0.py ...: only its own tests collected
            records.append(
                _record(name, ran, group, [f"it ran only {' '.join(group) or 'nothing'}"], tests, cassettes)
            )
        else:  # the whole suite collected, the others deselected
            records.append(_record(name, ran, list(tests), [DESELECTED], tests, cassettes))
    if not records:
        return
    merged = union(records, Path("/suite"))
    if merged.incomplete:
        assert any("ran only" in r or "missing" in r or "ran in none" in r for r in merged.incomplete)
        return  # prune refuses, and says why
    for path, usage in merged.cassettes.items():
        for test, plays in tests.items():
            assert not set(usage.unplayed) & plays.get(path, set()), (test, path, usage)

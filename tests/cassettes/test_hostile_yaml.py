"""Cassettes built to blow up the loader: alias bombs, recursive aliases, deep nesting, many
keys, long scalars and numbers. Each loads or is a ``CassetteFormatError`` naming the file,
in well under a second (a 455-byte alias bomb used to take 600 MB and never finish). The
files are at most a few megabytes, the plain ones (many keys, anchors, documents) about
200 kB: what matters is that no small text costs much, since reading a legitimately large
cassette takes time in proportion to its size (1 MB of keys: about 0.25 s).

The worst time over every hostile file is printed (``-s``) as ``loader worst time``.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from heap import objects_so_far_frozen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptvcr.errors import CassetteFormatError
from promptvcr.files import fileformat, yamlreader

#: CPU seconds of the loading thread: "well under a second". Not the clock, and not the process's
#: CPU time: what is bounded is the work a text costs, and a shared CI machine may leave a test
#: waiting for a core (one waited over a second), while other threads of a long-lived test process
#: (a pytest-xdist worker's channel, servers other tests left idling) count in ``process_time``.
#: The collector runs first, so that a collection the whole session's objects are owed does not
#: land inside one load. (An ordinary 3,000-interaction file takes 0.07 s alone; one run on two
#: workers counted 1.04 s for it by ``process_time``.)
LIMIT = 1.0
worst: dict[str, float] = {}

HEAD = "interactions:\n- request:\n    method: POST\n    url: http://127.0.0.1/v1/chat/completions\n"
TAIL = "  response:\n    status: 200\n    json: {}\nversion: 1\n"


def _bomb(levels: int = 9, fanout: int = 9, where: str = "json") -> str:
    """The classic "billion laughs": each level an anchored list of ``fanout`` aliases to the last."""
    lines = ['      a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        aliases = ",".join([f"*a{level - 1}"] * fanout)
        lines.append(f"      a{level}: &a{level} [{aliases}]")
    return HEAD + f"    {where}:\n" + "\n".join(lines) + "\n" + TAIL


@pytest.fixture(scope="module", autouse=True)
def _only_this_module_s_objects_are_collected() -> Iterator[None]:
    """The session's objects are collected once, then frozen for this module's tests (see
    tests/heap.py): each load starts with a collection (see :data:`LIMIT`), which then walks
    only what the loads made, as in a fresh process, not a worker's million objects."""
    gc.collect()
    with objects_so_far_frozen():
        yield


def _load(text: str, name: str = "hostile.yaml") -> tuple[str, float]:
    """``ok`` or ``refused`` (a ``CassetteFormatError`` naming the file), and the CPU seconds it took."""
    path = Path(name)
    gc.collect()
    started = time.thread_time()
    try:
        fileformat.loads(text, path)
        outcome = "ok"
    except CassetteFormatError as error:
        assert str(path) in str(error) and "Fix or delete it" in str(error)
        outcome = "refused"
    took = time.thread_time() - started
    worst[name] = max(worst.get(name, 0.0), took)
    assert took < LIMIT, f"{name}: {took:.2f} s"
    return outcome, took


def test_the_alias_bomb_of_the_issue_is_refused_at_once_with_a_clear_message(tmp_path: Path) -> None:
    text = _bomb()
    assert len(text.encode()) < 700  # the issue's was 455 bytes
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    started = time.thread_time()
    with pytest.raises(CassetteFormatError) as error:
        fileformat.loads(path.read_text(), path)
    assert time.thread_time() - started < 0.1
    message = str(error.value)
    assert f"Cassette {path} cannot be read" in message
    assert "aliases (*name) repeat more than 1,000,000 characters" in message
    assert "write the values out" in message


@pytest.mark.parametrize("where", ["json", "headers", "url", "events"])
@pytest.mark.parametrize("levels, fanout", [(9, 9), (30, 2), (4, 1000), (2, 200_000)])
def test_alias_bombs_are_refused_wherever_they_sit(where: str, levels: int, fanout: int) -> None:
    assert _load(_bomb(levels, fanout, where), f"bomb-{where}-{levels}x{fanout}.yaml")[0] == "refused"


def test_a_bomb_through_the_full_loader_path_is_refused_too() -> None:
    """A tag, a merge key or a date sends the text to ``yaml.load``: the same limits hold there."""
    for extra, name in (
        ("      t: !!str tagged\n", "tag"),
        ("      m: {<<: *a8}\n", "merge"),
        ("      d: 2024-01-01\n", "date"),
    ):
        text = _bomb().replace("\n  response:", "\n" + extra.rstrip("\n") + "\n  response:")
        assert _load(text, f"bomb-{name}.yaml")[0] == "refused"


def test_a_recursive_alias_is_refused() -> None:
    for body in ("json: &a {x: [*a]}", "json: &a [1, *a]", "json: !!map &a {x: *a}"):
        text = HEAD + f"    {body}\n" + TAIL
        outcome, _ = _load(text, "recursive.yaml")
        assert outcome == "refused", body


def test_aliases_within_the_budget_load_as_the_safe_loader_reads_them() -> None:
    text = (
        HEAD + "    headers: &h {content-type: application/json}\n    json: {model: m}\n"
        "  response:\n    status: 200\n    headers: *h\n    json: &answer {id: x, choices: []}\n"
        "- request:\n    method: POST\n    url: http://127.0.0.1/v1/chat/completions\n    headers: *h\n"
        "    json: {model: m}\n  response:\n    status: 200\n    json: *answer\nversion: 1\n"
    )
    interactions = fileformat.loads(text, Path("shared.yaml"))
    assert interactions[0].response.headers == {"content-type": "application/json"}
    assert interactions[0].response.chunks == interactions[1].response.chunks
    assert yamlreader.load(text) == yaml.safe_load(text)


def _deep(depth: int) -> str:
    return HEAD + "    json: " + "[" * depth + "]" * depth + "\n" + TAIL


def _many_keys(count: int) -> str:
    return HEAD + "    json:\n" + "".join(f"      k{n}: {n}\n" for n in range(count)) + TAIL


def _long_scalar(size: int) -> str:
    return HEAD + "    text: " + "x" * size + "\n" + TAIL


def _long_number(digits: str) -> str:
    return HEAD + f"    json: {{n: {digits}}}\n" + TAIL


HOSTILE: dict[str, Callable[[], str]] = {
    "deep flow nesting": lambda: _deep(100_000),
    "deep block nesting": lambda: (
        HEAD + "    json:\n" + "".join("  " * n + "      - \n" for n in range(3000)) + TAIL
    ),
    "deep sequence dashes": lambda: HEAD + "    json: " + "- " * 200_000 + "x\n" + TAIL,
    "many keys": lambda: _many_keys(10_000),
    "many interactions": lambda: (
        "interactions:\n"
        + "- {request: {method: GET, url: u}, response: {status: 200}}\n" * 3000
        + "version: 1\n"
    ),
    "long scalar": lambda: _long_scalar(2_000_000),
    "long quoted scalar": lambda: HEAD + '    text: "' + "\\u00e9" * 200_000 + '"\n' + TAIL,
    "long decimal number": lambda: _long_number("1" * 200_000),
    "long base-60 number": lambda: _long_number("1" + ":59" * 100_000),
    "long base-60 float": lambda: _long_number("1" + ":59" * 100_000 + ".5"),
    "long hex number": lambda: _long_number("0x" + "f" * 200_000),
    "long octal number": lambda: _long_number("0" + "7" * 200_000),
    "long float": lambda: _long_number("1" * 100_000 + ".5e3"),
    "many anchors": lambda: (
        HEAD + "    json:\n" + "".join(f"      k{n}: &a{n} {n}\n" for n in range(5_000)) + TAIL
    ),
    "many aliases": lambda: (
        HEAD + "    json:\n      a: &a x\n" + "".join(f"      k{n}: *a\n" for n in range(10_000)) + TAIL
    ),
    "many documents": lambda: "---\na: 1\n" * 10_000,
    "long key": lambda: HEAD + "    json: {" + "k" * 1_000_000 + ": 1}\n" + TAIL,
    "huge base64": lambda: HEAD + "    base64: " + "QUFB" * 250_000 + "\n" + TAIL,
    "many events": lambda: HEAD + "    events:\n" + "      - {data: x}\n" * 10_000 + TAIL,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_kind_of_blow_up_loads_or_is_refused_in_well_under_a_second(name: str) -> None:
    _load(HOSTILE[name](), name.replace(" ", "-") + ".yaml")


@pytest.mark.parametrize("name", ["deep flow nesting", "many keys", "long decimal number"])
def test_json_cassettes_are_bounded_too(name: str) -> None:
    import json

    text = {
        "deep flow nesting": '{"interactions": ' + "[" * 100_000 + "]" * 100_000 + ', "version": 1}',
        "many keys": json.dumps({"interactions": [], "version": 1, **{f"k{n}": n for n in range(200_000)}}),
        "long decimal number": '{"interactions": [], "version": ' + "1" * 200_000 + "}",
    }[name]
    _load(text, name.replace(" ", "-") + ".json")


# A fuzzer of anchors and aliases: random graphs of anchored nodes, each aliasing earlier ones.

anchored_nodes = st.lists(
    st.tuples(
        st.sampled_from(["flow list", "flow map", "block list", "scalar", "merge"]),
        st.lists(st.integers(0, 50), min_size=0, max_size=40),  # which earlier anchors it aliases
    ),
    min_size=1,
    max_size=25,
)


def _anchor_text(nodes: list[tuple[str, list[int]]], where: str) -> str:
    lines = []
    for index, (kind, refs) in enumerate(nodes):
        aliases = [f"*a{ref % index}" for ref in refs] if index else []
        if kind == "scalar" or not aliases:
            body = f"&a{index} " + ("s" * (refs[0] if refs else 3) or "x")
        elif kind == "flow list":
            body = f"&a{index} [{', '.join(aliases)}]"
        elif kind == "flow map":
            body = f"&a{index} {{{', '.join(f'k{n}: {a}' for n, a in enumerate(aliases))}}}"
        elif kind == "merge" and nodes[refs[0] % index][0] == "flow map":
            body = f"&a{index} {{<<: {aliases[0]}, z: 1}}"
        else:
            body = f"&a{index}\n" + "".join(f"        - {a}\n" for a in aliases).rstrip("\n")
        lines.append(f"      n{index}: {body}")
    return HEAD + f"    {where}:\n" + "\n".join(lines) + "\n" + TAIL


@settings(
    max_examples=300 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 40,
    deadline=timedelta(seconds=5 * LIMIT),  # the clock: a hang, not a slow machine (see LIMIT)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
@given(anchored_nodes, st.sampled_from(["json", "headers", "events"]))
def test_fuzzed_anchor_graphs_load_or_are_refused_quickly(
    nodes: list[tuple[str, list[int]]], where: str
) -> None:
    text = _anchor_text(nodes, where)
    outcome, _ = _load(text, "fuzzed.yaml")
    if outcome == "ok":  # what loaded is what the safe loader reads
        assert yamlreader.load(text) == yaml.safe_load(text)


def test_promptvcr_ls_refuses_the_bomb_at_once(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(_bomb())
    (tmp_path / "good.yaml").write_text("interactions: []\nversion: 1\n")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "promptvcr", "ls", "--show-skipped", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.perf_counter() - started
    output = done.stdout + done.stderr
    assert "bomb.yaml" in output and "alias" in output, output
    assert took < 10  # an interpreter start and an import; the bomb itself costs nothing


def test_zz_report_the_worst_time() -> None:
    """Printed for the note: the slowest hostile file of this run."""
    # Under pytest-xdist this worker may have run none of them; each test asserts its own time.
    name, seconds = max(worst.items(), key=lambda item: item[1], default=("none on this worker", 0.0))
    print(f"\nloader worst time on hostile files: {seconds:.3f} s ({name}), {len(worst)} kinds")
    assert seconds < LIMIT

"""The memo of small cassettes: parsed once, then read back from one file by every later process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_provider import FakeProvider

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.tokens import Tokens, tokens_of
from promptvcr.cassettes.wsframes import Frame, WebSocketSession
from promptvcr.files import fileformat, persister, smallcache
from promptvcr.files.compactform import Compact
from promptvcr.matching import key as keys
from promptvcr.matching.rules import DEFAULT_RULES
from promptvcr.matching.tape import Tape

URL = "http://127.0.0.1:9/v1/chat/completions"


def _chat(i: int, answer: str = "answer") -> Interaction:
    sent = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": f"question {i}"}]})
    return Interaction(
        Request("POST", URL, {"content-type": "application/json"}, sent.encode()),
        Response(
            200, {"content-type": "application/json"}, [json.dumps({"content": f"{answer} {i}"}).encode()]
        ),
    )


def _write(path: Path, interactions: list[Interaction]) -> Path:
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in interactions], path))
    return path


def _parsed(path: Path) -> list[Interaction]:
    return fileformat.loads(path.read_text(), path)


def _memo_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("small-*") if not p.name.endswith(".lock"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test's own, and a process that has read no memo yet."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(folder))
    monkeypatch.setattr(smallcache, "_memo", None)
    return folder


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Write what this process added, then forget the memo as a new process starts without it."""
    smallcache.flush()
    monkeypatch.setattr(smallcache, "_memo", None)


def _parsing_counted(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    parsed: list[Path] = []
    real = fileformat.read  # what a load parses a file with

    def counted(text: str, path: Path) -> tuple[list[Interaction], list[Compact] | None]:
        parsed.append(path)
        return real(text, path)

    monkeypatch.setattr(fileformat, "read", counted)
    return parsed


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_small_cassette_read_again_comes_from_the_memo(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = _write(tmp_path / f"c.{suffix}", [_chat(0), _chat(1)])
    first = persister.load(path).interactions
    assert first == _parsed(path)
    _new_process(monkeypatch)
    assert len(_memo_files(cache)) == 1
    parsed = _parsing_counted(monkeypatch)
    assert persister.load(path).interactions == first
    assert persister.load(path).interactions == first  # and again, from what the process holds
    assert parsed == []


def test_an_edited_file_is_parsed_again_even_at_the_same_size(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "c.yaml", [_chat(0, "answer")])
    persister.load(path)
    _new_process(monkeypatch)
    text = path.read_text()
    path.write_text(text.replace("answer 0", "answer 7"))
    assert len(path.read_text()) == len(text)
    assert [i.response.content for i in persister.load(path).interactions] == [b'{"content": "answer 7"}']


def test_the_tokens_of_each_answer_come_back_with_it(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted when the file is first parsed, kept in the memo: the plugin's summary counts the
    tokens of every answer a test replays, without parsing the answer again."""
    usage = {"content": "hi", "usage": {"prompt_tokens": 11, "completion_tokens": 4}}
    answers = [_chat(0), _chat(1)]
    answers[1].response.chunks = [json.dumps(usage).encode()]
    path = _write(tmp_path / "c.yaml", answers)
    parsed = persister.load(path).interactions
    assert [i.response.usage for i in parsed] == [(0, 0), (11, 4)]  # counted as the entry is made
    _new_process(monkeypatch)
    again = persister.load(path).interactions
    assert [i.response.usage for i in again] == [(0, 0), (11, 4)]
    assert [tokens_of(i.response) for i in again] == [tokens_of(i.response) for i in _parsed(path)]
    assert [tokens_of(i.response) for i in again][1] == Tokens(11, 4)


def test_the_keys_of_its_requests_come_back_with_it(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offered by the matching layer once computed, kept in the memo: a later process replays a
    small cassette without computing the key of its requests (17 us of every test's setup)."""
    path = _write(tmp_path / "c.json", [_chat(0), _chat(1)])
    expected = [keys.computed_key(i.request) for i in _parsed(path)]
    first = persister.load(path).interactions
    assert keys.known_keys(first) is None  # not computed yet
    Tape(first).index()  # computes every key, and offers them
    _new_process(monkeypatch)
    keys._memory.clear()

    def computed(*args: object) -> str:
        raise AssertionError("computed a key the memo brought")

    monkeypatch.setattr(keys, "computed_key", computed)
    again = persister.load(path).interactions
    assert keys.known_keys(again) == expected
    assert Tape(again).play(expected[1]) == _parsed(path)[1]
    # A live request sent as recorded finds its key without computing it.
    assert (
        keys.request_key(Request("POST", URL, {"content-type": "application/json"}, again[0].request.content))
        == expected[0]
    )


def test_keys_of_other_rules_are_not_kept(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "c.yaml", [_chat(0)])
    rules = (*DEFAULT_RULES, lambda parts: parts)
    Tape(persister.load(path).interactions, rules=rules).index()
    _new_process(monkeypatch)
    assert keys.known_keys(persister.load(path).interactions) is None
    assert [entry[2] for entry in smallcache._read(_memo_files(cache)[0]).values()] == [None]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_memo_is_ignored_and_replaced(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    path = _write(tmp_path / "c.yaml", [_chat(0), _chat(1)])
    persister.load(path)
    _new_process(monkeypatch)
    (memo,) = _memo_files(cache)
    data = memo.read_bytes()
    if damage == "truncate":
        memo.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        memo.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    else:
        memo.write_bytes(b"not a memo at all")
    parsed = _parsing_counted(monkeypatch)
    assert persister.load(path).interactions == _parsed(path)
    assert parsed[:1] == [path]  # parsed, since the memo could not be read
    _new_process(monkeypatch)
    parsed.clear()
    assert persister.load(path).interactions == _parsed(path)
    assert parsed == []  # the load came from the replaced memo


def test_the_memo_keeps_at_most_max_bytes_the_entries_used_last_first(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [_write(tmp_path / f"c{n}.yaml", [_chat(n)]) for n in range(6)]
    for path in paths:
        persister.load(path)
    _new_process(monkeypatch)
    (memo,) = _memo_files(cache)
    sizes = [len(entry[0]) for entry in smallcache._read(memo).values()]  # all about the same
    assert len(sizes) == 6 and max(sizes) < 1.1 * min(sizes)
    monkeypatch.setattr(smallcache, "MAX_BYTES", 4 * max(sizes))  # room for 4 entries, not 5
    for path in paths[3:]:
        persister.load(path)  # used by this process: kept first
    persister.load(_write(tmp_path / "new.yaml", [_chat(9)]))  # added: kept too
    _new_process(monkeypatch)
    parsed = _parsing_counted(monkeypatch)
    for path in [*paths[3:], tmp_path / "new.yaml"]:
        persister.load(path)
    assert parsed == []
    for path in paths[:3]:
        persister.load(path)
    assert parsed == paths[:3]  # no room for the entries this process did not use


def test_nothing_read_and_nothing_written_with_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", "off")
    monkeypatch.setattr(smallcache, "_memo", None)
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path / "c.yaml", [_chat(0)])
    assert persister.load(path).interactions == _parsed(path)
    smallcache.flush()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_an_unwritable_cache_does_not_fail_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PROMPTVCR_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(smallcache, "_memo", None)
    path = _write(tmp_path / "c.yaml", [_chat(0)])
    for _ in range(2):
        assert persister.load(path).interactions == _parsed(path)
        smallcache.flush()


def test_a_websocket_session_is_parsed_every_time(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = WebSocketSession(
        [Frame("client", "text", b'{"type":"hello"}'), Frame("server", "text", b"{}", 0.5)]
    )
    handshake = Response(101, {"upgrade": "websocket"}, websocket=session)
    path = _write(
        tmp_path / "c.yaml", [_chat(0), Interaction(Request("GET", "ws://127.0.0.1:9/rt"), handshake)]
    )
    persister.load(path)
    _new_process(monkeypatch)
    parsed = _parsing_counted(monkeypatch)
    assert persister.load(path).interactions == _parsed(path)
    assert parsed[:1] == [path]


def test_memos_of_other_versions_of_the_code_are_dropped_but_the_last_few(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.mkdir()
    for n in range(5):
        (cache / f"small-{n:032x}").write_bytes(b"PVCRSM02 an old memo")  # its header: the cache's own
        os.utime(cache / f"small-{n:032x}", ns=(n * 10**9, n * 10**9))
    persister.load(_write(tmp_path / "c.yaml", [_chat(0)]))
    smallcache.flush()
    names = [p.name for p in _memo_files(cache)]
    assert len(names) == 4  # this version's, and the 3 used last
    assert f"small-{0:032x}" not in names and f"small-{1:032x}" not in names


LOAD_AND_EXIT = """
import sys, time
from pathlib import Path
from promptvcr.files import persister
ready, go, *names = sys.argv[1:]
for name in names:
    persister.load(Path(name))
Path(ready).touch()
while not Path(go).exists():  # every process has read the memo before any writes it
    time.sleep(0.01)
"""


def test_processes_that_end_together_merge_what_they_added(cache: Path, tmp_path: Path) -> None:
    """Each process writes at its exit (no call to flush), after all have read the memo (then
    empty): the memo holds what every one added, not only the last writer's."""
    paths = [_write(tmp_path / f"c{n}.yaml", [_chat(n)]) for n in range(8)]
    env = {**os.environ, "PROMPTVCR_CACHE_DIR": str(cache)}
    go = tmp_path / "go"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", LOAD_AND_EXIT, str(tmp_path / f"ready-{n}"), str(go)]
            + [str(path) for path in paths[n::4]],
            env=env,
        )
        for n in range(4)
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{n}").exists() for n in range(4)) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    assert [run.wait(timeout=60) for run in runs] == [0, 0, 0, 0]
    (memo,) = _memo_files(cache)
    assert len(smallcache._read(memo)) == 8


REPLAY_IN_A_NEW_PROCESS = """
import sys
import openai
import promptvcr
from promptvcr.matching import key

path, mode, base_url = sys.argv[1:4]
if mode == "no keys computed":
    def refuse(*args, **kwargs):
        raise AssertionError("computed a request's key")
    key.computed_key = refuse
client = openai.OpenAI(api_key="k", base_url=base_url, max_retries=0)
with promptvcr.use_cassette(path, record_mode="record" if mode == "record" else "none"):
    reply = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "question 1"}]
    )
print(reply.choices[0].message.content)
"""


def test_a_replay_in_a_later_process_computes_no_key(cache: Path, tmp_path: Path) -> None:
    """The openai SDK, each step in a new process: a request recorded from a server on
    127.0.0.1; replayed, its key computed and kept in the memo; replayed again where computing a
    key fails, from the memo."""
    path = tmp_path / "c.yaml"
    env = {**os.environ, "PROMPTVCR_CACHE_DIR": str(cache)}
    answers = []
    with FakeProvider() as server:
        for mode in ("record", "keys computed", "no keys computed"):
            run = subprocess.run(
                [sys.executable, "-c", REPLAY_IN_A_NEW_PROCESS, str(path), mode, server.openai_base_url],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert run.returncode == 0, f"{mode}: {run.stderr[-3000:]}"
            answers.append(run.stdout.strip())
        assert len(server.requests) == 1  # recorded once, then replayed
    assert answers[0] and answers == [answers[0]] * 3

"""Every command opens a cassette through one guarded reader (issue 54, scenario 4).

A command may be pointed at any file. An alias bomb of a few hundred bytes, nesting that
Python's recursion cannot walk, a FIFO: each is refused at once with a message naming the
file and what is wrong, and exit status 1 or 2, never a ``RecursionError``, a hang or
gigabytes of memory. Each command runs for real (``promptvcr.cli.main``, as the console
script does); a file nested just within the limit still explains, shows and scans.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from promptvcr.cli import main
from promptvcr.files.guarded import MAX_DEPTH

#: Nine levels of nine aliases each: 9**9 strings (387 million) from under 800 bytes.
BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]\n"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "interactions:\n- request: {method: POST, url: 'http://x/v1', headers: {}, json: *i}\n"
    "  response: {status: 200, headers: {}, json: {}}\nversion: 1\n"
)


def _deep_json(depth: int) -> str:
    body = "[" * depth + "]" * depth
    return (
        '{"interactions": [{"request": {"method": "POST", "url": "http://x/v1", "headers": {}, "json": '
        + body
        + '}, "response": {"status": 200, "headers": {}, "json": {}}}], "version": 1}'
    )


def _deep_yaml(depth: int) -> str:
    return (
        "interactions:\n- request:\n    method: POST\n    url: http://x/v1\n    json: "
        + "[" * depth
        + "]" * depth
        + "\n  response:\n    status: 200\n    json: {}\nversion: 1\n"
    )


COMMANDS = [["explain"], ["show"], ["scan"], ["learn", "--dry-run"]]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    if argv[0] == "learn":  # two recordings of the suite: the same file twice
        argv = (*argv, argv[-1])
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_scan_refuses_an_alias_bomb_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    assert len(BOMB.encode()) < 800
    for command in ("scan", "explain", "show"):
        code, out = _run(capsys, command, str(bomb))
        assert code in (1, 2) and str(bomb) in out and "alias bomb" in out, (command, out)


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_900_deep_nesting_is_a_clear_error_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, command: list[str]
) -> None:
    deep = tmp_path / f"deep{suffix}"
    deep.write_text(_deep_json(900) if suffix == ".json" else _deep_yaml(900))
    code, out = _run(capsys, *command, str(deep))
    assert code in (1, 2), out
    assert str(deep) in out and "levels deep" in out, out


@pytest.mark.parametrize("command", ["ls", "stats"])
def test_the_listing_commands_skip_a_bomb_or_deep_file_and_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB)
    (tmp_path / "deep.json").write_text(_deep_json(900))
    (tmp_path / "deep.yaml").write_text(_deep_yaml(900))
    code, out = _run(capsys, command, str(tmp_path))
    assert code == 0 and "No promptvcr cassettes" in out, out
    if command == "ls":
        code, out = _run(capsys, "ls", "--show-skipped", str(tmp_path))
        assert out.count("levels deep") == 2 and "alias bomb" in out, out


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_nesting_within_the_limit_is_read_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    depth = MAX_DEPTH - 4  # the file's own levels: interactions, the item, request, json
    deep = tmp_path / f"deep{suffix}"
    deep.write_text(_deep_json(depth) if suffix == ".json" else _deep_yaml(depth))
    assert _run(capsys, "explain", "--full", str(deep))[0] == 0
    assert _run(capsys, "show", str(deep))[0] == 0
    code, out = _run(capsys, "scan", str(deep))
    assert code == 0 and "no secret-shaped values" in out


@pytest.mark.parametrize("command", [*COMMANDS, ["ls"]], ids=lambda c: c[0])
def test_a_fifo_named_as_a_cassette_is_refused_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    # were the command to open it for reading, this writer would let it go on (and the test
    # fail below) instead of hanging the run
    unblock = threading.Timer(20, lambda: os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    unblock.start()
    try:
        code, out = _run(capsys, *command, str(fifo if command != ["ls"] else tmp_path))
    finally:
        unblock.cancel()
    if command == ["ls"]:  # listing a folder: the FIFO is no cassette, and nothing blocked
        assert code == 0
        return
    assert code in (1, 2) and "not a regular file" in out and str(fifo) in out, out

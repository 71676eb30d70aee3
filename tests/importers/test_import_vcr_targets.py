"""import-vcr never writes two sources to one name, never replaces a file holding more, and
exits non-zero saying what it skipped (issue 42: six sources written as two files, "6/6
imported", exit 0). Through the command, in a child process, as a user runs it."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import yaml

from promptvcr.files import fileformat


def _vcrpy(path: Path, questions: list[str], *, gz: bool = False) -> None:
    """A vcrpy cassette (its plain YAML layout) holding one chat completion per question."""
    interactions = [
        {
            "request": {
                "method": "POST",
                "uri": "http://127.0.0.1:9/v1/chat/completions",
                "body": f'{{"q": "{question}"}}',
                "headers": {"content-type": ["application/json"]},
            },
            "response": {
                "status": {"code": 200, "message": "OK"},
                "headers": {"content-type": ["application/json"]},
                "body": {"string": f'{{"answer": "{question}!"}}'},
            },
        }
        for question in questions
    ]
    text = yaml.safe_dump({"interactions": interactions, "version": 1})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())


def _import(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptvcr", "import-vcr", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


def _questions(path: Path) -> list[str]:
    return [i.request.content.decode() for i in fileformat.read(path.read_text(), path)[0]]


def test_sources_sharing_an_output_name_are_all_reported_and_none_written(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _vcrpy(src / "a.yaml", ["one"])
    _vcrpy(src / "a.yml", ["two"])
    _vcrpy(src / "a.yaml.gz", ["three"], gz=True)
    _vcrpy(tmp_path / "left" / "chat" / "b.yaml", ["four"])
    _vcrpy(tmp_path / "right" / "chat" / "b.yaml", ["five"])
    _vcrpy(src / "c.yaml", ["six"])
    out = tmp_path / "out"
    done = _import(str(src), str(tmp_path / "left"), str(tmp_path / "right"), "--out", str(out))
    assert done.returncode == 1, done.stdout
    for name in ("a.yaml", "a.yml", "a.yaml.gz"):
        assert f"FAILED {src / name}: not written: 3 sources" in done.stdout
    assert done.stdout.count("would all be written to the same output name (b.yaml)") == 2
    assert not (out / "a.yaml").exists() and not (out / "chat" / "b.yaml").exists()
    assert _questions(out / "c.yaml") == ['{"q": "six"}']  # what does not collide is imported
    assert "1 converted, 0 partly, 5 failed" in done.stdout


def test_a_file_in_out_holding_more_is_kept_and_the_same_import_again_is_a_no_op(tmp_path: Path) -> None:
    rich, poor = tmp_path / "rich" / "a.yaml", tmp_path / "poor" / "a.yaml"
    _vcrpy(rich, ["one", "two", "three"])
    _vcrpy(poor, ["one"])
    out = tmp_path / "out"
    assert _import(str(rich), "--out", str(out)).returncode == 0
    before = (out / "a.yaml").read_bytes()
    again = _import(str(rich), "--out", str(out))
    assert again.returncode == 0, again.stdout
    done = _import(str(poor), "--out", str(out))
    assert done.returncode == 1
    assert "already holds 2 interaction(s) this import would not write" in done.stdout
    assert (out / "a.yaml").read_bytes() == before
    assert len(_questions(out / "a.yaml")) == 3

"""Hostile file systems: names that try to leave the cassette folder, symlinks, a read-only folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import sdk_calls

import promptvcr
from promptvcr.files import fileformat
from promptvcr.pytest_plugin.naming import cassette_file_name, default_cassette_path

MESSAGES = [{"role": "user", "content": "Hello"}]


@pytest.mark.parametrize(
    "test_name", ["test_x[../../etc/passwd]", "test_x[..]", "../..", "test[/abs/path]", "a\x00b"]
)
def test_a_test_name_cannot_lead_its_cassette_out_of_the_cassette_folder(
    tmp_path: Path, test_name: str
) -> None:
    base = tmp_path / "cassettes"
    path = default_cassette_path(tmp_path / "test_mod.py", test_name, cassette_dir=base)
    assert path.resolve().is_relative_to((base / "test_mod").resolve())
    assert "/" not in cassette_file_name(test_name) and "\x00" not in str(path)


def test_recording_into_a_symlinked_cassette_writes_its_target_and_keeps_the_link(
    tmp_path: Path, provider
) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "shared" / "chat.yaml"
    target.parent.mkdir()
    target.write_text("interactions: []\nversion: 1\n")
    link = tmp_path / "tests" / "chat.yaml"
    link.parent.mkdir()
    link.symlink_to(target)
    with promptvcr.use_cassette(link, record_mode="record"):
        sdk_calls.openai_client(provider.base_url).chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert len(fileformat.loads(target.read_text(), target)) == 1
    assert sorted(p.name for p in target.parent.iterdir()) == ["chat.yaml"]  # no temporary file left


READ_ONLY = """
import os, sys
sys.path.insert(0, {tests!r})
import promptvcr, sdk_calls
with promptvcr.use_cassette({warm!r}, record_mode="record"):  # the same use as below, so that what
    sdk_calls.openai_client({base!r}).chat.completions.create(  # openai and promptvcr import lazily
        model="gpt-4o", messages=[{{"role": "user", "content": "warm up"}}])  # loads while all is readable
if os.geteuid() == 0:  # root ignores file modes: record as an ordinary user
    os.setgid(65534); os.setuid(65534)
try:
    with promptvcr.use_cassette({path!r}, record_mode="record"):
        sdk_calls.openai_client({base!r}).chat.completions.create(
            model="gpt-4o", messages=[{{"role": "user", "content": "Hello"}}])
except promptvcr.CassetteWriteError as error:
    print("CassetteWriteError:", error)
    sys.exit(3)
"""


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temp folder the ordinary user root switches to can reach: straight under the system's
    temp root, not in pytest's, which pytest keeps at 0700 (and another pytest run on the same
    machine sets back to 0700 at its start)."""
    folder = Path(tempfile.mkdtemp(prefix="promptvcr-hostile-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for inner in folder.rglob("*"):
            if inner.is_dir():
                inner.chmod(0o755)
        shutil.rmtree(folder)


def test_recording_into_a_read_only_folder_is_a_clear_error(shared_tmp: Path, provider) -> None:  # type: ignore[no-untyped-def]
    folder = shared_tmp / "ro"
    folder.mkdir()
    path = folder / "chat.yaml"
    path.write_text("interactions: []\nversion: 1\n")
    warm = shared_tmp / "warm.yaml"
    warm.write_text("interactions: []\nversion: 1\n")
    path.chmod(0o644)
    folder.chmod(0o555)
    tests = str(Path(__file__).parents[1])
    code = READ_ONLY.format(tests=tests, warm=str(warm), path=str(path), base=provider.base_url)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    folder.chmod(0o755)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"Cannot write cassette {path}: Permission denied" in result.stdout
    assert "Nothing was written" in result.stdout
    assert path.read_text() == "interactions: []\nversion: 1\n"
    assert os.listdir(folder) == ["chat.yaml"]

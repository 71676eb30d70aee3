"""Reading a cassette file: every byte of it, whatever its size or kind, and clear errors.

``storage.read_text`` reads with the operating system's calls directly (issue 22: a suite
reads one small cassette per test); these cases hold it to what ``Path.read_bytes`` gives.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from promptvcr import CassetteFormatError
from promptvcr.files.storage import read_text


@pytest.mark.parametrize("size", [1, 4095, 4096, 65_537, 3 * (1 << 20) + 7])
def test_a_file_reads_whole_at_any_size(tmp_path: Path, size: int) -> None:
    text = ("interactions: []  # é\n" * (size // 23 + 1))[:size]
    path = tmp_path / "cassette.yaml"
    path.write_text(text, encoding="utf-8")
    assert read_text(path) == path.read_bytes().decode("utf-8") == text


def test_a_file_larger_than_its_size_says_reads_to_its_end(tmp_path: Path) -> None:
    """A named pipe reports size 0: what it holds is read to the end all the same."""
    path = tmp_path / "piped.yaml"
    os.mkfifo(path)
    text = "version: 1\ninteractions: []\n" * 50_000  # more than one read and than a pipe's buffer

    def write() -> None:
        with open(path, "w", encoding="utf-8") as pipe:
            pipe.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_text(path) == text
    finally:
        writer.join(timeout=10)


def test_no_file_is_none_and_a_folder_or_an_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    assert read_text(tmp_path / "missing.yaml") is None
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    with pytest.raises(CassetteFormatError, match="is a directory, not a file"):
        read_text(folder)
    empty = tmp_path / "empty.yaml"
    empty.write_bytes(b"")
    with pytest.raises(CassetteFormatError, match="is empty"):
        read_text(empty)

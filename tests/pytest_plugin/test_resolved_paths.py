"""``naming.resolved`` names a cassette as ``Path.resolve`` would, while caching per folder.

The usage record and the reports name each cassette by it, once or twice per test; it keeps
what it learnt about each folder, so a wrong shortcut would name a cassette by a stale or
unresolved path. Each case compares it with ``Path.resolve()`` on a real tree with links.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptvcr.pytest_plugin.naming import resolved


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "cassettes" / "test_mod").mkdir(parents=True)
    (tmp_path / "real" / "cassettes" / "test_mod" / "test_a.yaml").write_text("interactions: []\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "target.yaml").write_text("interactions: []\n")
    os.symlink(tmp_path / "real", tmp_path / "linked")  # a linked folder
    os.symlink(
        tmp_path / "elsewhere" / "target.yaml",
        tmp_path / "real" / "cassettes" / "test_mod" / "file_link.yaml",
    )
    return tmp_path


CASES = [
    "real/cassettes/test_mod/test_a.yaml",
    "real/cassettes/test_mod/not_yet_recorded.yaml",
    "real/cassettes/new_folder/new.yaml",
    "linked/cassettes/test_mod/test_a.yaml",
    "linked/cassettes/new_folder/new.yaml",
    "real/cassettes/test_mod/file_link.yaml",
    "linked/cassettes/test_mod/file_link.yaml",
    "real/cassettes/../cassettes/test_mod/test_a.yaml",
    "linked/../real/cassettes/test_mod/test_a.yaml",
    "real/..hidden/x.yaml",
    "real",
]


@pytest.mark.parametrize("relative", CASES)
def test_an_absolute_path_resolves_as_path_resolve_does(tree: Path, relative: str) -> None:
    path = Path(os.path.join(str(tree), relative))  # Path keeps ".." as written
    assert resolved(path) == str(path.resolve())
    assert resolved(path) == str(path.resolve())  # the second time from what was kept


def test_a_relative_path_resolves_from_the_working_folder(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree / "linked")
    for relative in ("cassettes/test_mod/test_a.yaml", "cassettes/x/y.yaml", "../real/cassettes"):
        assert resolved(Path(relative)) == str(Path(relative).resolve())


def test_a_link_made_later_below_a_known_folder_is_seen(tree: Path) -> None:
    """A known folder is kept; a new name below it is looked at for a link (one ``islink``)."""
    folder = tree / "real" / "cassettes" / "test_mod"
    assert resolved(folder / "test_a.yaml") == str((folder / "test_a.yaml").resolve())
    os.symlink(tree / "elsewhere", folder / "late_link")
    path = folder / "late_link" / "target.yaml"
    assert resolved(path) == str(path.resolve()) == str(tree / "elsewhere" / "target.yaml")

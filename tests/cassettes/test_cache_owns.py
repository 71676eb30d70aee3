"""The parse cache deletes only files it wrote, only in a folder it owns (issue 42).

``$PROMPTVCR_CACHE_DIR`` pointed at a folder of the user's files: before, the cache's pruning
took any 32-character name for an entry and deleted 45 of 300 files. Each test reads large
cassettes in a child process, as a test run would, and counts the user's files after.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import cacheowner, fileformat, parsecache

URL = "http://127.0.0.1:9/v1/chat/completions"


def _large_cassette(path: Path, seed: int) -> None:
    """A cassette above the parse cache's MIN_SIZE, so that reading it writes an entry."""
    filler = "x" * 2000
    interactions = [
        Interaction(
            Request(
                "POST", URL, {"content-type": "application/json"}, json.dumps({"q": f"{seed}-{i}"}).encode()
            ),
            Response(200, {"content-type": "application/json"}, [json.dumps({"a": filler, "i": i}).encode()]),
        )
        for i in range(parsecache.MIN_SIZE // 2000 + 10)
    ]
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(i) for i in interactions], path))


def _read_in_child(cache: Path, cassettes: list[Path], max_entries: int) -> None:
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from promptvcr.files import parsecache, persister, smallcache\n"
        f"parsecache.MAX_ENTRIES = {max_entries}\n"
        "for name in sys.argv[1:]:\n    persister.load(Path(name))\nsmallcache.flush()\n"
    )
    env = {**os.environ, "PROMPTVCR_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", code, *map(str, cassettes)], env=env, check=True, timeout=120)


def _user_files(folder: Path, count: int) -> dict[str, bytes]:
    """Files of the user's own: many with 32 hex digits for a name (hashes, uploads, exports)."""
    folder.mkdir()
    made = {}
    for n in range(count):
        name = f"{n:032x}" if n % 2 else f"report-{n}.txt"
        data = f"the user's file {n}\n".encode()
        (folder / name).write_bytes(data)
        os.utime(folder / name, (1_000_000 + n, 1_000_000 + n))  # older than any entry: pruned first
        made[name] = data
    return made


def test_a_folder_of_user_files_loses_none(tmp_path: Path) -> None:
    folder = tmp_path / "downloads"
    made = _user_files(folder, 300)
    cassettes = [tmp_path / f"c{n}.yaml" for n in range(3)]
    for n, path in enumerate(cassettes):
        _large_cassette(path, n)
    _read_in_child(folder, cassettes, max_entries=2)
    for name, data in made.items():
        assert (folder / name).read_bytes() == data, f"{name} was changed or deleted"
    # The cache went into a folder of its own, inside, and still works there (pruned to 2 entries).
    inner = folder / cacheowner.SUBFOLDER
    assert cacheowner.owns(inner)
    assert len([p for p in inner.iterdir() if len(p.name) == 32]) == 2
    assert set(os.listdir(folder)) == {*made, cacheowner.SUBFOLDER}


def test_its_own_folder_is_pruned_but_a_foreign_file_there_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    cassettes = [tmp_path / f"c{n}.yaml" for n in range(4)]
    for n, path in enumerate(cassettes):
        _large_cassette(path, n)
    _read_in_child(folder, cassettes[:1], max_entries=256)
    assert cacheowner.owns(folder)
    stranger = folder / ("f" * 32)  # a file put there by hand, named like an entry
    stranger.write_bytes(b"not an entry")
    os.utime(stranger, (1_000_000, 1_000_000))
    _read_in_child(folder, cassettes, max_entries=2)
    assert stranger.read_bytes() == b"not an entry"
    assert len([p for p in folder.iterdir() if cacheowner.is_own(p) and len(p.name) == 32]) == 2


def test_a_cache_folder_written_before_the_marker_is_still_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    cassette = tmp_path / "c.yaml"
    _large_cassette(cassette, 0)
    _read_in_child(folder, [cassette], max_entries=256)
    (folder / cacheowner.MARKER).unlink()  # as an older promptvcr left it
    assert cacheowner.folder_for(folder) == folder

"""Where a test's cassette lives when its marker names no path.

``<test file dir>/cassettes/<module>/<[Class.]test_name>.yaml``: one file per test, next to
the tests that own it, so a reviewer finds the recording beside the code that made it.
Names come from pytest's node names (parametrized ids included), made safe for every file
system and capped in length; a capped name keeps a digest of the full one, so two long
names that share a prefix still get two files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MAX_NAME_LENGTH", "cassette_file_name", "default_cassette_path"]

#: Longest file name (without ``.yaml``) of a default cassette; Windows paths stop at 260.
MAX_NAME_LENGTH = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9_.,+=@\[\]()-]+")
_DIGEST_LENGTH = 10


def cassette_file_name(test_name: str, class_names: Sequence[str] = ()) -> str:
    """``Class.test_name[param-id]`` with every unsafe run of characters turned into ``-``."""
    full = ".".join([*class_names, test_name])
    name = _UNSAFE.sub("-", full).strip(".-") or "test"
    if len(name) > MAX_NAME_LENGTH:
        digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:_DIGEST_LENGTH]
        name = f"{name[: MAX_NAME_LENGTH - _DIGEST_LENGTH - 1]}-{digest}"
    return name


def default_cassette_path(
    test_file: Path, test_name: str, class_names: Sequence[str] = (), cassette_dir: Path | None = None
) -> Path:
    """The cassette of one test: ``<cassette_dir>/<module>/<name>.yaml``.

    ``cassette_dir`` defaults to ``cassettes`` beside the test file.
    """
    base = cassette_dir if cassette_dir is not None else test_file.parent / "cassettes"
    return base / test_file.stem / f"{cassette_file_name(test_name, class_names)}.yaml"

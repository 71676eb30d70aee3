"""Rewriting a cassette: what a use re-recorded replaces the interactions it stands for, no others.

``record_mode="rewrite"`` (and ``on_stale="rewrite"``) used to write the file anew with what
one use recorded. A cassette shared by several tests (a module's marker, a fixture) then held
only the last test's interactions: issue 42 measured 24 interactions left at 2, and 15
failures on the next run. Here a rewrite is a replacement, interaction by interaction:

* each interaction recorded takes the place of the first interaction of the file that is the
  same request (the same key under the cassette's rules: the cassette hands its key function
  in, so the files room never imports matching) and that nothing recorded in this
  use replaced yet, so a request sent three times replaces its three recordings in order;
* an interaction recorded that the file did not hold is added at the end;
* every other interaction of the file stays as it is: another test's, or one this test no
  longer sends (``promptvcr prune`` removes those once a whole run shows nobody plays them).

While the use runs, what it records goes to a file beside the cassette (:func:`aside_path`),
appended as each recording completes: a killed run loses at most the request in flight, and a
use that fails leaves the cassette as it was and its recordings there, named in the summary.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cassettes.models import Request
from . import fileformat, storage

#: A request's key under the cassette's rules (``functools.partial(request_key, rules=...)``).
KeyOf = Callable[[Request], str]

__all__ = ["aside_path", "merge_aside", "merged", "reserve_aside"]

_ASIDE = ".rerecorded"


def aside_path(path: Path, number: int = 1) -> Path:
    """``chat.yaml`` -> ``chat.rerecorded.yaml`` (``chat.rerecorded-2.yaml``, ...): where a
    rewrite keeps its recordings until its use passes, and keeps them when it does not."""
    suffix = path.suffix if path.suffix.lower() in (".yaml", ".yml", ".json") else ".yaml"
    stem = path.name[: -len(path.suffix)] if path.suffix == suffix else path.name
    tail = "" if number == 1 else f"-{number}"
    return path.with_name(f"{stem}{_ASIDE}{tail}{suffix}")


def reserve_aside(path: Path) -> Path:
    """A new aside file for one use, created empty (an empty cassette): never one another use
    (a pytest-xdist worker, an earlier failed run whose recordings wait there) writes or left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for number in range(1, 10_000):
        aside = aside_path(path, number)
        try:
            fd = os.open(aside, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(fileformat.dumps([], aside))
        return aside
    raise FileExistsError(f"no free name beside {path} for the recordings of a rewrite")


def _keys(stored: list[dict[str, Any]], path: Path, key_of: KeyOf) -> list[str]:
    return [
        key_of(fileformat.interaction_from_data(item, path, position).request)
        for position, item in enumerate(stored)
    ]


def merged(
    old: list[dict[str, Any]], new: list[dict[str, Any]], path: Path, key_of: KeyOf
) -> list[dict[str, Any]]:
    """``old`` with each item of ``new`` in the place of the first unreplaced item of the same key."""
    places: dict[str, list[int]] = {}
    for position, key in enumerate(_keys(old, path, key_of)):
        places.setdefault(key, []).append(position)
    result = list(old)
    added = []
    for item, key in zip(new, _keys(new, path, key_of), strict=True):
        free = places.get(key)
        if free:
            result[free.pop(0)] = item
        else:
            added.append(item)
    return result + added


def merge_aside(path: Path, aside: Path, key_of: KeyOf) -> int:
    """Put what ``aside`` holds into the cassette at ``path`` (see :func:`merged`), then remove
    ``aside``; how many interactions were written. Under the cassette's lock, atomically."""
    text = storage.read_text(aside)
    if text is None:
        return 0
    new = fileformat.load_document(text, aside)
    with storage.cassette_lock(path):
        current = storage.read_text(path)
        old = fileformat.load_document(current, path) if current is not None else []
        storage.write_atomic(path, fileformat.dump_pieces(merged(old, new, path, key_of), path))
    aside.unlink(missing_ok=True)
    return len(new)

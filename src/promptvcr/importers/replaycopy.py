"""vcrpy cassettes converted for replay once per content, the copy kept in the parse cache's folder.

An unmigrated pytest-recording suite (:mod:`promptvcr.pytest_plugin.vcr_compat`) replays each
test's vcrpy-format cassette through a promptvcr copy of it. Made anew in every run (the file
parsed three times, converted, redacted and written), it made such a suite 1.31x slower on
promptvcr than on pytest-recording (258 tests: 9.75 s against 7.47 s, issue 48), where a
migrated one is 0.89x. So the copy is kept in the ``converted`` folder of the parse cache's
folder (:func:`.parsecache.cache_dir`), named by a hash of what the conversion depends on:

* each source file's name (its suffix picks the parser) and bytes, in the marker's order;
* :data:`CONVERSION_VERSION` (bumped when the conversion's output changes) and the code that
  reads cassettes (:func:`.parsecache.code_fingerprint`);
* the credential values of the environment, which the conversion redacts (hashed with the
  rest, never written).

A second run reads and hashes each source, finds the copy by one ``stat`` and replays it like a
migrated cassette: its parse is the memo of small files' (:mod:`.smallcache`). A source edited
in any byte gets another name and is converted again. A source already in promptvcr's format
is remembered as such (an empty ``.same`` file), so it is not parsed to find that out again.

As for the parse cache, the copy is an optimisation: a folder that cannot be written leaves
the conversion to a folder of this run's, as before. The folder keeps the :data:`MAX_FILES`
copies used last; only files named like its own are ever deleted, and only there.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import CassetteWriteError
from ..files import cacheowner, parsecache

__all__ = ["CONVERSION_VERSION", "FOLDER", "MAX_FILES", "replay_copy"]

#: Bumped whenever a vcrpy file converts to other interactions than before.
CONVERSION_VERSION = 1
FOLDER = "converted"
MAX_FILES = 2048
_OWN = re.compile(r"[0-9a-f]{32}\.(yaml|json|same)")


def replay_copy(path: Path, sources: Sequence[Path], scratch: Callable[[], Path]) -> Path | None:
    """The promptvcr file a replaying test opens for ``sources`` (its cassette ``path`` first,
    then the marker's extra files), or ``None`` when it opens ``path`` itself: no source exists,
    or ``path`` alone is given and is in promptvcr's format. ``scratch`` gives a folder of this
    run's, for when the cache is off or cannot be written."""
    existing = [p for p in sources if p.is_file()]
    if not existing:
        return None
    suffix = ".json" if path.suffix == ".json" else ".yaml"
    folder = parsecache.cache_dir()
    name = _name(existing) if folder is not None else None
    kept = None if folder is None or name is None else folder / FOLDER / name
    if kept is not None:
        if len(sources) == 1 and kept.with_suffix(".same").exists():
            return None
        if (copy := kept.with_suffix(suffix)).exists():
            with contextlib.suppress(OSError):
                os.utime(copy)  # used: pruned last
            return copy
    from .inplace import combine, is_promptvcr_file  # a conversion, on a miss only

    if len(sources) == 1 and is_promptvcr_file(path):
        if kept is not None:
            _keep(kept.with_suffix(".same"), lambda target: target.write_bytes(b""))
        return None
    if kept is not None and _keep(kept.with_suffix(suffix), lambda target: combine(existing, target)):
        return kept.with_suffix(suffix)
    target = scratch() / f"{name or hashlib.sha256(str(existing).encode()).hexdigest()[:32]}{suffix}"
    if not target.exists():
        combine(existing, target)
    return target


def _name(existing: Sequence[Path]) -> str | None:
    """The hash naming the conversion of ``existing`` (``None`` when one cannot be read)."""
    from ..credentials.names import environment_credentials

    digest = hashlib.sha256(parsecache.code_fingerprint())
    digest.update(f"vcrpy-conversion-{CONVERSION_VERSION}".encode())
    for value in sorted(environment_credentials(os.environ).values()):
        digest.update(b"\0env\0" + value.encode("utf-8", "surrogatepass"))
    for source in existing:
        try:
            data = source.read_bytes()
        except OSError:
            return None
        digest.update(f"\0{source.name}\0{len(data)}\0".encode("utf-8", "surrogatepass"))
        digest.update(data)
    return digest.hexdigest()[:32]


def _keep(target: Path, write: Callable[[Path], object]) -> bool:
    """Write ``target`` through a temporary file renamed into place; ``False`` (silently) when
    the folder cannot be written. A conversion's own error is raised, as without the cache."""
    folder = target.parent
    try:
        cacheowner.claim(folder.parent)
        folder.mkdir(exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=target.suffix)
        os.close(fd)
    except OSError:
        return False
    temp = Path(temp_name)
    try:
        write(temp)
        os.replace(temp, target)
    except (OSError, CassetteWriteError):
        return False
    finally:
        temp.unlink(missing_ok=True)
    _prune(folder)
    return True


def _prune(folder: Path) -> None:
    """Drop the least recently used copies beyond :data:`MAX_FILES` (only files named like ours,
    only in a folder of the cache's: see :mod:`.cacheowner`)."""
    if not cacheowner.owns(folder.parent):
        return
    found = []
    with contextlib.suppress(OSError), os.scandir(folder) as scan:
        for item in scan:
            if _OWN.fullmatch(item.name) and item.is_file():
                with contextlib.suppress(OSError):
                    found.append((item.stat().st_mtime_ns, item.path))
    for _, stale in sorted(found, reverse=True)[MAX_FILES:]:
        with contextlib.suppress(OSError):
            os.unlink(stale)

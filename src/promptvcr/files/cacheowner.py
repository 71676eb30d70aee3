"""Which folder the parse cache may write and prune in, and which of its files are its own.

``$PROMPTVCR_CACHE_DIR`` is a path a person types: it may name a folder that already holds
their files (a project's ``build/`` or ``~/Downloads``). The cache prunes what it wrote, so it
must never take a file of theirs for an entry: an entry's name is 32 hex digits, and names
like that are common (issue 42: 45 of 300 files of a user's folder deleted). So:

* a folder is the cache's when it holds the cache's marker file (:data:`MARKER`, written when
  the cache first writes there), or when it is absent or empty, or holds only files the cache
  recognises as its own (a folder written by a version before the marker);
* a folder that holds anything else is the user's: the cache then lives in a subfolder of it
  (:data:`SUBFOLDER`), which it owns, and never writes or deletes beside their files;
* a file is deleted only in a folder holding the marker, and only when its name has the
  cache's shape *and* it starts with the cache's own header (:func:`is_own`).
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from .cachekey import KEY_FILE

__all__ = ["MARKER", "SUBFOLDER", "claim", "folder_for", "is_own", "owns"]

MARKER = ".promptvcr-cache"
_MARKER_TEXT = "promptvcr parse cache: every file here named like an entry is promptvcr's own\n"
SUBFOLDER = "promptvcr-cache"
_ENTRY = re.compile(r"[0-9a-f]{32}")
_SMALL = re.compile(r"small-[0-9a-f]{32}")
#: The headers of the cache's files: a parse-cache entry, and a memo of small files.
_HEADERS = (b"PVCRPC", b"PVCRSM")


def owns(folder: Path) -> bool:
    """Whether ``folder`` holds the cache's marker (the only folder it prunes in)."""
    try:
        return (folder / MARKER).read_text(encoding="utf-8") == _MARKER_TEXT
    except (OSError, UnicodeDecodeError):
        return False


def _could_own(folder: Path) -> bool:
    """Absent, empty, marked, or holding only the cache's files (and their locks and temporaries)."""
    if owns(folder):
        return True
    try:
        with os.scandir(folder) as scan:
            for item in scan:
                name = item.name.removesuffix(".lock")
                if name.startswith(".tmp-") or (item.is_file() and is_own(Path(item.path))):
                    continue
                if item.name == KEY_FILE:  # the cache's key (see .cachekey)
                    continue
                if item.name.endswith(".lock") and (_ENTRY.fullmatch(name) or _SMALL.fullmatch(name)):
                    continue
                return False
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def folder_for(configured: Path) -> Path | None:
    """The folder the cache uses for the one configured: itself when it can be the cache's,
    else its :data:`SUBFOLDER` (``None`` when even that holds files of someone else's)."""
    if _could_own(configured):
        return configured
    inner = configured / SUBFOLDER
    return inner if _could_own(inner) else None


def claim(folder: Path) -> None:
    """Make ``folder`` and mark it as the cache's, before the first file is written there."""
    folder.mkdir(parents=True, exist_ok=True)
    if not owns(folder):
        with contextlib.suppress(OSError):
            (folder / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")


def is_own(path: Path) -> bool:
    """A file the cache wrote: an entry's or a memo's name, and the cache's header inside."""
    name = path.name
    if not (_ENTRY.fullmatch(name) or _SMALL.fullmatch(name)):
        return False
    try:
        with open(path, "rb") as file:
            head = file.read(8)
    except OSError:
        return False
    return head.startswith(_HEADERS)

"""A Python file as ``promptvcr migrate`` edits it: every byte it does not change stays as it was.

Issue 42 measured what reading source as plain UTF-8 text did: a latin-1 file (with its
``# -*- coding: latin-1 -*-`` cookie) aborted the run with a traceback, CRLF files came back
LF (universal newlines), and a form feed or U+2028 above a marker shifted the edit (``str``
line splitting counts them as line breaks; Python's tokenizer does not), leaving a
SyntaxError that nothing reported. Here:

* a file is decoded as Python decodes it (:func:`tokenize.detect_encoding`: cookie, BOM) and
  with no newline translation, and encoded back the same way;
* positions the AST gives (a line, and a column in UTF-8 bytes) are found with the
  tokenizer's own line breaks: ``\\r\\n``, ``\\r`` and ``\\n`` only (:class:`Lines`);
* text the migration inserts uses the file's own line ending;
* a file that is a symlink to outside the tree migrated, or that is read-only, is refused
  with one line (:func:`refusal`), before anything is written.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Lines", "Source", "read_source", "refusal", "write_source"]

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Source:
    text: str
    encoding: str
    newline: str


class Lines:
    """Offsets into ``text`` of the lines and columns an AST gives."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0, *(match.end() for match in _BREAK.finditer(text))]

    def offset(self, line: int, col: int) -> int:
        """The position of ``col`` (UTF-8 bytes, as ``ast`` counts) on ``line`` (from 1)."""
        start = self._starts[line - 1]
        end = self._starts[line] if line < len(self._starts) else len(self.text)
        return start + len(self.text[start:end].encode("utf-8")[:col].decode("utf-8", "ignore"))

    def line_length(self, line: int) -> int:
        """The length of ``line`` (from 1), its line break included."""
        start = self._starts[line - 1]
        end = self._starts[line] if line < len(self._starts) else len(self.text)
        return end - start


def read_source(path: Path) -> Source:
    """The file's text as Python reads it; ``ValueError``/``SyntaxError`` for one it cannot decode."""
    data = path.read_bytes()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    found = _BREAK.search(text)
    return Source(text, encoding, found.group() if found else "\n")


def refusal(path: Path, root: Path) -> str | None:
    """Why ``path`` must not be rewritten (one line), or ``None``."""
    if path.is_symlink() and not path.resolve().is_relative_to(root.resolve()):
        where = path.resolve()
        return f"{path}: a symlink to {where}, outside {root}; not rewritten (migrate that file where it is)"
    try:
        mode = path.stat().st_mode
    except OSError as error:
        return f"{path}: cannot be read ({error.strerror or error}); not rewritten"
    if not mode & stat.S_IWUSR:
        return f"{path}: read-only; not rewritten (make it writable and run migrate again)"
    return None


def write_source(path: Path, source: Source, text: str) -> None:
    """Write ``text`` in ``source``'s encoding, atomically, keeping the file's mode."""
    target = Path(os.path.realpath(path))
    data = text.encode(source.encoding)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644)  # a new conftest
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise

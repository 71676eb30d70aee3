"""Finding credentials in cassettes: ``promptvcr scan`` and the record path's refusal.

A finding never carries the secret itself, only its kind, its place and a masked
preview: the log of a CI run must not leak the key either.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..cassettes.largebody import ChunkedBody
from .detect import detect
from .keyshapes import Finding, _has_clue, _matches, _secret_pattern, masked_preview

__all__ = ["cassette_files", "scan_data", "scan_file", "scan_text", "secret_message"]

_mask = masked_preview


def scan_text(text: str, *, path: Path | None = None) -> list[Finding]:
    """Every secret-shaped value in ``text``, with its line and column (1-based)."""
    findings = []
    line, line_start, counted = 1, 0, 0
    for kind, match in _matches(text):
        start = match.start()
        # Newlines are counted once each, from where the last finding was: linear however
        # many findings share a line.
        newlines = text.count("\n", counted, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, start) + 1
        counted = start
        findings.append(Finding(kind, _mask(match.group()), line, start - line_start + 1, path=path))
    return findings


def _field(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return f"{parent}.{key}" if parent else key
    return f"{parent}[{key!r}]"


#: How much of the text before a slice is scanned again with it, so that a key cut in two
#: by the slicing of a large body is still found (every key shape is far shorter).
_OVERLAP = 4096


def _piece_matches(pieces: Iterable[str], allowed: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """(kind, value) for each secret-shaped value in text that comes in pieces."""
    tail = ""
    for piece in pieces:
        text = tail + piece
        if _has_clue(text):
            for kind, match in _matches(text, allowed):
                if match.end() > len(tail):  # one that ends in the tail was found with the slice before
                    yield kind, match.group()
        tail = text[-_OVERLAP:]


def _strings(data: Any) -> tuple[list[str], list[ChunkedBody]]:
    """Every key and string in ``data`` (not ``base64`` bodies), and its large bodies apart."""
    strings: list[str] = []
    large: list[ChunkedBody] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key != "base64":
                    strings.append(str(key))
                    stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, ChunkedBody):
            large.append(value)
    return strings, large


def _has_secret(data: Any) -> bool:
    """One regex pass over all of ``data``'s text: the common answer (none) without building
    a field name per value, which is what the full walk below spends its time on. Before
    that, the clues are looked for in ``data`` as JSON (written in C): JSON escapes none of
    their characters, so text without a clue there holds no secret either."""
    try:
        if not _has_clue(json.dumps(data)):
            return False
    except (TypeError, ValueError, RecursionError):  # a large body, or data JSON cannot hold
        pass
    strings, large = _strings(data)
    text = "\n".join(strings)
    if _has_clue(text) and _secret_pattern().search(text):
        return True
    return any(True for body in large for _ in _piece_matches(body.pieces()))


def scan_data(data: Any, field: str = "", *, allowed: frozenset[str] = frozenset()) -> list[Finding]:
    """Every secret-shaped string in stored cassette data, each named by its field
    (``request.json.messages[0].content``); ``base64`` bodies are skipped (see above)."""
    if not _has_secret(data):
        return []
    findings: list[Finding] = []
    stack: list[tuple[str, Any]] = [(field, data)]
    while stack:  # iterative: deeply nested JSON must not hit the recursion limit
        where, value = stack.pop()
        if isinstance(value, str):
            findings.extend(
                Finding(kind, _mask(m.group()), field=where) for kind, m in _matches(value, allowed)
            )
        elif isinstance(value, ChunkedBody):
            findings.extend(
                Finding(kind, _mask(found), field=where)
                for kind, found in _piece_matches(value.pieces(), allowed)
            )
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if key == "base64":
                    continue
                if isinstance(key, str):
                    findings.extend(
                        Finding(kind, _mask(m.group()), field=where) for kind, m in _matches(key, allowed)
                    )
                stack.append((_field(where, str(key)), item))
        elif isinstance(value, (list, tuple)):
            stack.extend((_field(where, index), item) for index, item in reversed(list(enumerate(value))))
    return findings


_CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")


def cassette_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The files under ``paths``: each file given, and the cassettes of each folder given."""
    for path in paths:
        if path.is_dir():
            found = (p for p in path.rglob("*") if p.suffix.lower() in _CASSETTE_SUFFIXES and p.is_file())
            yield from sorted(found)
        else:
            yield path


def scan_file(path: Path, text: str, data: Any) -> list[Finding]:
    """Findings in one cassette file: its ``text`` (not UTF-8 read with replacement, so that
    a key next to a bad byte is still found) and its parsed ``data`` (``None`` when it does
    not parse).

    The file is searched as text (each finding with its line) and, when it parses, as data
    by the record path's own detection (:func:`.detect.detect`): a key percent-encoded, in
    a base64 string or a compressed body, a credential header or field left with its value."""
    findings = scan_text(text, path=path)
    shown = {(finding.kind, finding.preview) for finding in findings}
    findings.extend(
        dataclasses.replace(finding, path=path)
        for finding in detect(data)
        if (finding.kind, finding.preview) not in shown
    )
    return findings


def secret_message(path: Path, findings: list[Finding]) -> str:
    """The record path's refusal: which fields, what kind, and what to do; never the value."""
    lines = [f"  {f.field}: {f.kind} {f.preview}" for f in findings]
    return (
        f"promptvcr: refusing to write cassette {path}: what was just recorded holds "
        f"{len(findings)} value(s) shaped like a secret (recorded[N] is the N-th request recorded "
        f"in this run, counting from 0):\n" + "\n".join(lines) + "\n"
        "Nothing was written. Find where the code under test puts this value into the request "
        "(a prompt, a URL, a header) and use a fake value while recording; "
        "if it is a fake key already, make it obviously fake (e.g. sk-test-...)."
    )

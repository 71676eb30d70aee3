"""The one reader of cassette files for the commands (``scan``, ``explain``, ``show``, ``ls``,
``prune``, ``learn``, the HTML report): what a file may cost to open, checked before anything
walks it.

A command may be pointed at any file: a cassette from a pull request, a download, a path
typed wrong. Each check here bounds what the file controls:

- **what it is**: a regular file, opened without blocking (a FIFO or a device is refused, see
  :func:`.storage.read_bytes`), of at most :data:`.storage.MAX_CASSETTE_BYTES`;
- **aliases**: YAML anchors and aliases are expanded within :mod:`.yamlreader`'s budget, so a
  767-byte alias bomb is refused at once instead of being walked a billion times;
- **depth**: nesting deeper than :data:`MAX_DEPTH` is refused with a clear error. The commands
  walk the data recursively (the key's canonical form, the diff, the secret detection), and
  Python's recursion limit would otherwise end them in ``RecursionError``; no recording nests
  this deep. The check itself keeps its own stack.

Every failure is a :class:`~promptvcr.CassetteFormatError` naming the file and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..cassettes.bodyfiles import BODY_FOLDER, BodyFile, BodyFileError, Reference, body_folder, reference_of
from ..cassettes.largebody import ChunkedBase64, ChunkedText
from ..cassettes.largejson import STAND_IN, leaves_replaced
from ..cassettes.models import Interaction
from ..errors import CassetteFormatError
from . import storage
from .reading import TooCostly, document_interactions, fail, parse_document, read_stored

__all__ = [
    "MAX_DEPTH",
    "missing",
    "read_data",
    "read_for_scan",
    "read_interactions",
    "read_stored_items",
    "with_body_files",
]

#: Nesting a cassette may have, the file's own four levels included: far more than any
#: provider's JSON, well within what a recursive walk of it may take.
MAX_DEPTH = 200


def _too_deep(data: Any) -> bool:
    """Whether ``data`` nests deeper than :data:`MAX_DEPTH`; an explicit stack, and each shared
    container (a YAML alias) walked once."""
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _checked(text: str, path: Path) -> Any:
    data = parse_document(text, path)
    if _too_deep(data):
        raise fail(path, f"it is nested more than {MAX_DEPTH} levels deep; no recording is.", TooCostly)
    return data


def read_data(path: Path) -> tuple[str, Any] | None:
    """The file's text and its parsed data, checked as the module says; ``None`` when there is
    no file. For ``scan``, which searches the text too."""
    read = storage.read_text(path, regular_only=True)
    return None if read is None else (read, _checked(read, path))


def read_for_scan(path: Path) -> tuple[str, Any]:
    """``promptvcr scan``'s reading: the file's text, bytes that are not UTF-8 replaced (a key
    next to a bad byte is still found), and its data, ``None`` when it is not YAML or JSON
    (the text is searched all the same). A file that would cost too much to read (a FIFO,
    too large, an alias bomb, too deep) is an error: scanning only its text would pass it."""
    data = storage.read_bytes(path, regular_only=True)
    if data is None:
        raise FileNotFoundError(2, "No such file or directory", str(path))
    text = data.decode("utf-8", errors="replace")
    try:
        parsed = _checked(text, path)
    except TooCostly:
        raise
    except CassetteFormatError:
        return text, None
    return text, parsed


def with_body_files(data: Any, path: Path) -> Any:
    """A copy of a parsed cassette (``data``, left as it is) with each body file it refers to in
    place of the reference, under the file's path (``response.file.bodies/sha256-...``; a large
    request's long string in place of its stand-in), as a large body the searches read a slice
    at a time: for ``scan``, so that a credential in a body file is found as one in the cassette
    is. A missing or cut body file is the cassette's error (:class:`~promptvcr.CassetteFormatError`)."""
    items = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return data
    searched: set[str] = set()  # a body recorded several times: searched once
    copied = []
    for index, item in enumerate(items):
        if isinstance(item, dict):
            item = dict(item)
            for part in ("request", "response"):
                stored = item.get(part)
                if (
                    part == "request"
                    and isinstance(stored, dict)
                    and isinstance(stored.get("json"), (dict, list))
                ):
                    item[part] = stored = _with_strings(stored, path, index, searched)
                if not isinstance(stored, dict) or "file" not in stored:
                    continue
                try:
                    body = BodyFile(body_folder(path), reference_of(stored["file"]))
                except BodyFileError as error:
                    raise fail(path, f"interactions[{index}].{part}.file: {error}.") from None
                if body.reference.path not in searched:
                    searched.add(body.reference.path)
                    item[part] = {**stored, "file": {body.reference.path: ChunkedBase64(body)}}
        copied.append(item)
    return {**data, "interactions": copied}


def _with_strings(stored: dict[str, Any], path: Path, index: int, searched: set[str]) -> dict[str, Any]:
    """A large request (:mod:`promptvcr.cassettes.largejson`) with each long string its stand-in
    names read from its body file, a slice at a time, in the stand-in's place."""
    if "<promptvcr: " not in json.dumps(stored["json"]):
        return stored

    def read(value: Any) -> Any:
        found = STAND_IN.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            return value
        reference = Reference((f"{BODY_FOLDER}/sha256-{found.group(2)}", int(found.group(1))))
        try:
            body = BodyFile(body_folder(path), reference)
        except BodyFileError as error:
            raise fail(path, f"interactions[{index}].request.json: {error}.") from None
        if reference.path in searched:
            return value
        searched.add(reference.path)
        return ChunkedText(body)

    return {**stored, "json": leaves_replaced(stored["json"], read)}


def read_stored_items(path: Path) -> list[dict[str, Any]] | None:
    """The stored interactions of the file (checked for version and shape); ``None``: no file."""
    read = storage.read_text(path, regular_only=True)
    return None if read is None else document_interactions(_checked(read, path), path)


def read_interactions(path: Path) -> list[Interaction] | None:
    """The interactions of the file; ``None`` when there is no file."""
    stored = read_stored_items(path)
    return None if stored is None else read_stored(stored, path)[0]


def missing(path: Path) -> CassetteFormatError:
    """The error of a command given a cassette that does not exist."""
    return CassetteFormatError(
        f"Cassette {path} does not exist. Check the path, or record it first.", path=path
    )

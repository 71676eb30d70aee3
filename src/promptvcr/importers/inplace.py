"""Converting where the cassettes are: in place (``promptvcr migrate``), or for one replay.

A file already in promptvcr's format is never rewritten; a vcrpy file is replaced by its
conversion only when every interaction converts (see :func:`.vcr._import_one`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..cassettes.models import Interaction
from ..credentials.headers import ALL_HEADERS
from ..files import fileformat, persister, redaction, storage
from .vcr import FileReport, _import_one, convert_vcr_file
from .vcr_read import VcrReadError, read_vcr_file

__all__ = ["combine", "convert_in_place", "is_promptvcr_file"]


def is_promptvcr_file(path: Path) -> bool:
    """True for promptvcr's format, and for a file no layout reads (promptvcr's loader then says why)."""
    try:
        return read_vcr_file(path).layout == "promptvcr"
    except VcrReadError:
        return True


def convert_in_place(path: Path) -> FileReport:
    """Replace a vcrpy cassette with its conversion, under the same name (or report why not)."""
    return _import_one(
        path,
        path,
        ALL_HEADERS,
        ALL_HEADERS,
    )


def combine(sources: Sequence[Path], target: Path) -> None:
    """One promptvcr cassette holding the interactions of every source, in order, any format."""
    interactions: list[Interaction] = []
    for source in sources:
        if is_promptvcr_file(source):
            interactions.extend(persister.load(source).interactions)
        else:
            interactions.extend(convert_vcr_file(source).interactions)
    redacted = redaction.redact(
        interactions,
        request_headers=ALL_HEADERS,
        response_headers=ALL_HEADERS,
        environ=os.environ,
        label="interactions",
    )
    storage.write_atomic(target, fileformat.dump_pieces(redacted.data, target), durable=False)

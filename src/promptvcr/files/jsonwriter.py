"""JSON text for cassette data (``.json`` cassettes), in pieces.

The standard library writes everything but a :class:`~.largebody.ChunkedBody`; each of
those is written as a placeholder string, and the text is cut there so the body can be
streamed into the file slice by slice rather than joined into one string first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..cassettes.largebody import ChunkedBody

__all__ = ["document_pieces"]

_PLACEHOLDER = "\x00promptvcr-large-body-{}\x00"


def _item_pieces(item: Any) -> Iterator[str]:
    bodies: list[ChunkedBody] = []

    def placeholder(value: object) -> str:
        if not isinstance(value, ChunkedBody):
            raise TypeError(f"{type(value).__name__} cannot be written to a JSON cassette")
        bodies.append(value)
        return _PLACEHOLDER.format(len(bodies) - 1)

    text = json.dumps(item, ensure_ascii=False, indent=2, default=placeholder)
    text = "    " + text.replace("\n", "\n    ")
    for index, body in enumerate(bodies):
        before, text = text.split(json.dumps(_PLACEHOLDER.format(index)), 1)
        yield before + '"'
        for piece in body.pieces():
            yield json.dumps(piece, ensure_ascii=False)[1:-1]
        yield '"'
    yield text


def document_pieces(items: Sequence[Any], version: int) -> Iterator[str]:
    """``{"interactions": [...], "version": N}`` laid out as ``json.dumps(indent=2)`` would."""
    if not items:
        yield f'{{\n  "interactions": [],\n  "version": {version}\n}}\n'
        return
    yield '{\n  "interactions": [\n'
    for index, item in enumerate(items):
        if index:
            yield ",\n"
        yield from _item_pieces(item)
    yield f'\n  ],\n  "version": {version}\n}}\n'

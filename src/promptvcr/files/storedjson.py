"""The bytes of a stored ``json`` body in the styles most bodies have, without a new encoder each.

Reading a cassette turns every ``json`` body back into the bytes it replays
(:func:`.bodies.decode_body`): checking the body's style and building a JSON encoder for it,
per body, was over a third of building 10,000 interactions. Almost every body is compact or
differs from compact only in its separators (``", "`` and ``": "``) and ``ensure_ascii``;
for those one C encoder per style is kept (:func:`.jsonstyle.c_encoder`) and called directly.

Anything else (an indent, padding, the ``raw`` text, a style that is not valid) gives
``None``, and the caller asks :func:`.bodies.decode_body`, which owns what a body means.
The result is the same either way: the encoder is the one ``json.dumps`` builds for the
style, without the cycle check (a parsed document holds no cycle: the YAML reader refuses
an alias inside its own anchor, and JSON has none).
"""

from __future__ import annotations

from typing import Any

from ..cassettes.jsonstyle import c_encoder

__all__ = ["json_body"]

_SIMPLE_STYLE = frozenset({"separators", "ascii"})
_COMPACT = [",", ":"]
_SPACED = {"separators": [", ", ": "]}
_COMPACT_ENCODER = c_encoder(",", ":", False)
_SPACED_ENCODER = c_encoder(", ", ": ", False)


def json_body(stored: dict[str, Any]) -> bytes | None:
    """The bytes of ``stored["json"]`` written in ``stored``'s style, or ``None`` when the
    style is not one of the simple ones (or there is ``raw`` text): see the module docstring.
    Raises what ``json.dumps`` raises for a value JSON cannot hold."""
    if "raw" in stored:
        return None
    style = stored.get("style")
    # The two styles nearly every body has, without checking them field by field: none
    # (compact) and ``json.dumps``'s default separators. Only text compares equal to text.
    if style is None and _COMPACT_ENCODER is not None:
        return "".join(_COMPACT_ENCODER(stored["json"], 0)).encode("utf-8")
    if type(style) is dict and style == _SPACED and _SPACED_ENCODER is not None:
        return "".join(_SPACED_ENCODER(stored["json"], 0)).encode("utf-8")
    if not style:
        if style is not None and type(style) is not dict:
            return None  # a stored ``style: ""`` or ``[]``: decode_body reports it
        encoder = c_encoder(",", ":", False)
    else:
        if type(style) is not dict or not style.keys() <= _SIMPLE_STYLE:
            return None
        separators = style.get("separators", _COMPACT)
        ascii_only = style.get("ascii", False)
        if (
            type(separators) is not list
            or len(separators) != 2
            or type(separators[0]) is not str
            or type(separators[1]) is not str
            or type(ascii_only) is not bool
        ):
            return None
        encoder = c_encoder(separators[0], separators[1], ascii_only)
    if encoder is None:  # pragma: no cover - CPython has the C encoder
        return None
    return "".join(encoder(stored["json"], 0)).encode("utf-8")

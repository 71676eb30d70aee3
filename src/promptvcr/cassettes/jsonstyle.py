"""How a JSON text was written, so that a parsed document replays as the exact bytes received.

A cassette keeps JSON parsed for review. Replaying it compactly changes the bytes a client
receives when the server wrote it another way (``", "`` and ``": "`` separators, an indent,
``\\uXXXX`` escapes, spaces before the closing brace as Anthropic pads its events). When one
of these common styles reproduces the text exactly, it is stored beside the document as a
small ``style`` mapping holding only what differs from compact JSON:

``separators``  ``[item, key]`` (compact: ``[",", ":"]``)
``indent``      the indent (a number of spaces, or a string)
``ascii``       ``true`` when non-ASCII characters were written as ``\\uXXXX``
``pad``         whitespace written just before the last character (``}`` or ``]``)
``before``      whitespace before the document; ``after``: whitespace after it

The style is applied to whatever the document holds when the cassette is read, so a value a
reviewer edited replays edited, in the same style. Text that no style reproduces (duplicate
keys, numbers written ``1.0e3``, irregular spacing) is detected by :func:`json_style`
returning ``None``; the caller then keeps the raw text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CEncoder", "JsonStyle", "c_encoder", "dump_json", "json_style", "same_json", "valid_style"]

JsonStyle = dict[str, Any]

_WHITESPACE = " \t\r\n"
_COMPACT = (",", ":")
_CANDIDATES: tuple[tuple[tuple[str, str], int | str | None], ...] = (
    (_COMPACT, None),
    ((", ", ": "), None),
    ((",", ": "), None),
    ((", ", ":"), None),
    ((",", ": "), 2),
    ((",", ": "), 4),
    ((", ", ": "), 2),
    ((",", ": "), 1),
    ((",", ": "), "\t"),
)
_KEYS = frozenset({"separators", "indent", "ascii", "pad", "before", "after"})


#: One encoder per style, built once: ``json.dumps`` with options builds one per call.
_encoders: dict[tuple[str, str, int | str | None, bool], json.JSONEncoder] = {}


def _dumps(value: Any, separators: tuple[str, str], indent: int | str | None, ascii_only: bool) -> str:
    """``json.dumps(value, ensure_ascii=ascii_only, separators=separators, indent=indent)``."""
    style = (separators[0], separators[1], indent, ascii_only)
    encoder = _encoders.get(style)
    if encoder is None:
        encoder = json.JSONEncoder(ensure_ascii=ascii_only, separators=separators, indent=indent)
        if len(_encoders) < 256:  # styles a cassette may declare are few, but not bounded
            _encoders[style] = encoder
    return encoder.encode(value)


#: A C encoder: ``encoder(value, 0)`` gives the pieces of ``value``'s JSON text.
CEncoder = Callable[[Any, int], Sequence[str]]
#: One C encoder per (item separator, key separator, ensure_ascii); styles are few, but a
#: cassette may declare any, so at most this many are kept.
_MAX_C_ENCODERS = 64
_c_encoders: dict[tuple[str, str, bool, bool, Callable[[Any], Any]], CEncoder] = {}
_c_make = getattr(json.encoder, "c_make_encoder", None)
_c_default = json.JSONEncoder().default


def c_encoder(
    item: str,
    key: str,
    ascii_only: bool,
    *,
    sort_keys: bool = False,
    default: Callable[[Any], Any] = _c_default,
) -> CEncoder | None:
    """The C encoder ``json.dumps`` uses for these separators, ``ensure_ascii``, ``sort_keys``
    and ``default``, without the cycle check (for a document parsed from text, which holds no
    cycle; a cycle ends in ``RecursionError``), called directly: ``json.dumps`` with options
    builds a new encoder per call. ``None`` without the C module."""
    options = (item, key, ascii_only, sort_keys, default)
    found = _c_encoders.get(options)
    if found is not None or _c_make is None:
        return found
    escape = json.encoder.encode_basestring_ascii if ascii_only else json.encoder.encode_basestring
    # c_make_encoder(markers, default, encoder, indent, key_separator, item_separator,
    #                sort_keys, skipkeys, allow_nan), as json.JSONEncoder.iterencode calls it.
    made: CEncoder = _c_make(None, default, escape, None, key, item, sort_keys, False, True)
    if len(_c_encoders) < _MAX_C_ENCODERS:
        _c_encoders[options] = made
    return made


#: The two compact encoders (``ensure_ascii`` or not), looked up once: every body checks one.
_COMPACT_ENCODERS = {ascii_only: c_encoder(",", ":", ascii_only) for ascii_only in (False, True)}


def _is_compact(stripped: str, value: Any, ascii_only: bool) -> bool:
    """Whether ``value`` written compactly is ``stripped``: what most bodies are, checked
    first at the cost of one C call."""
    encoder = _COMPACT_ENCODERS.get(ascii_only) or c_encoder(",", ":", ascii_only)
    if encoder is None or isinstance(value, str):  # pragma: no cover - CPython has it
        return False
    try:
        return "".join(encoder(value, 0)) == stripped
    except (ValueError, TypeError, RecursionError):  # pragma: no cover - a parsed document always dumps
        return False


def json_style(text: str, value: Any) -> JsonStyle | None:
    """The style that writes ``value`` as exactly ``text`` (``{}`` for compact JSON), or ``None``.

    ``value`` is ``text`` parsed (``json.loads``)."""
    if text[:1] in "{[" and text[-1:] in "}]" and _is_compact(text, value, "\\u" in text):
        return {"ascii": True} if "\\u" in text else {}
    stripped = text.strip(_WHITESPACE)
    if not stripped:
        return None
    start = text.index(stripped[0])
    before, after = text[:start], text[start + len(stripped) :]
    ascii_first = "\\u" in stripped
    for separators, indent in _CANDIDATES:
        for ascii_only in (ascii_first, not ascii_first):
            try:
                written = _dumps(value, separators, indent, ascii_only)
            except (ValueError, TypeError):  # pragma: no cover - a parsed document always dumps
                return None
            pad = _pad(stripped, written)
            if pad is None:
                continue
            style: JsonStyle = {}
            if separators != _COMPACT or indent is not None:
                style["separators"] = list(separators)
            if indent is not None:
                style["indent"] = indent
            if ascii_only:
                style["ascii"] = True
            for name, part in (("pad", pad), ("before", before), ("after", after)):
                if part:
                    style[name] = part
            return style
    return None


def _pad(text: str, written: str) -> str | None:
    """The whitespace ``text`` has before its last character where ``written`` has none."""
    if text == written:
        return ""
    extra = len(text) - len(written)
    if extra <= 0 or text[-1] != written[-1] or not text.startswith(written[:-1]):
        return None
    pad = text[len(written) - 1 : -1]
    return pad if not pad.strip(_WHITESPACE) else None


def valid_style(style: Any) -> JsonStyle:
    """``style`` as read from a cassette; ``ValueError`` when it is not one :func:`json_style` writes."""
    if style is None:
        return {}
    if not isinstance(style, dict) or not set(style) <= _KEYS:
        raise ValueError(f"style {style!r} is not a JSON style (keys: {', '.join(sorted(_KEYS))})")
    separators = style.get("separators", list(_COMPACT))
    if not (
        isinstance(separators, list) and len(separators) == 2 and all(isinstance(s, str) for s in separators)
    ):
        raise ValueError(f"style separators {separators!r} are not two strings")
    indent = style.get("indent")
    if indent is not None and (isinstance(indent, bool) or not isinstance(indent, (int, str))):
        raise ValueError(f"style indent {indent!r} is not a number or a string")
    for name in ("pad", "before", "after"):
        part = style.get(name, "")
        if not isinstance(part, str) or part.strip(_WHITESPACE):
            raise ValueError(f"style {name} {part!r} is not whitespace")
    if not isinstance(style.get("ascii", False), bool):
        raise ValueError("style ascii is not true or false")
    return style


def dump_json(value: Any, style: JsonStyle) -> str:
    """``value`` written in ``style`` (checked with :func:`valid_style`)."""
    if not style:
        return _dumps(value, _COMPACT, None, False)
    separators = style.get("separators", _COMPACT)
    written = _dumps(value, (separators[0], separators[1]), style.get("indent"), style.get("ascii", False))
    if pad := style.get("pad"):
        written = written[:-1] + pad + written[-1:]
    return str(style.get("before", "")) + written + str(style.get("after", ""))


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON documents, key order included: ``1`` and ``1.0``, ``true`` and ``1`` differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)

"""YAML text for cassette data, written directly: the JSON data model needs no general dumper.

PyYAML's representer builds a node graph and walks it in Python; for a cassette of 1,000
interactions that took most of a recording's save. Cassette data is only mappings with
string keys, lists, strings, numbers, booleans and nulls, so this module writes that
subset itself, in the layout PyYAML gives it (block mappings, sequences not indented
under their key), and reads back identically with the C and the pure-Python loader:

- a string stays plain when nothing in YAML could read it as anything else (it starts
  with a letter, holds no ``: `` or `` #``, is not ``yes``/``no``/``on``/``null``...);
- multi-line text becomes a ``|`` block scalar, so prompts and answers read as written;
- everything else is double-quoted with JSON escapes (plus YAML's own for the few
  characters YAML may not hold raw), which YAML reads as the same string.

Whatever falls outside that subset (a value a person wrote into a cassette by hand, a key
longer than a YAML simple key may be, a lone surrogate) sends its whole item to PyYAML, so
the fast path never has to be clever. A :class:`~.largebody.ChunkedBody` is written piece
by piece, never joined.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import yaml

from ..cassettes.largebody import ChunkedBody

__all__ = ["Flow", "sequence_items"]

_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Flow(dict):  # type: ignore[type-arg]
    """A mapping written on one line: a response's timing is figures nobody reads one per line."""


class _FallbackDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """PyYAML for what the fast path leaves alone, with the same look: ``|`` blocks, flow timing."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FallbackDumper.add_representer(str, _represent_str)
_FallbackDumper.add_representer(
    Flow, lambda dumper, value: dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)
)
_FallbackDumper.add_multi_representer(  # multi: its subclasses ChunkedText and ChunkedBase64
    ChunkedBody, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", str(value))
)


class _NotSimple(Exception):
    """The item holds something outside the subset written here; PyYAML writes it."""


#: A plain scalar: starts with a letter (so never a number, date or indicator), holds no
#: tab or quote-worthy character, and does not end in a space. ``: `` and `` #`` are
#: checked apart, since ``:`` and ``#`` alone are fine (``http://x``, ``a#b``).
_PLAIN = re.compile(r"[A-Za-z](?:[A-Za-z0-9 _.,/()+=;:!?'@&*%~#<>$^|-]*[A-Za-z0-9_.,/()+=;!?'@&*%~#<>$^|-])?")
#: Words YAML 1.1 (PyYAML) or some other YAML reader takes for booleans or null.
_RESERVED = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})
#: Characters YAML may not hold raw in a double-quoted scalar (non-printable, or read as a
#: line break), which ``json.dumps`` leaves as they are.
_YAML_ESCAPES = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_SURROGATES = re.compile("[\ud800-\udfff]")
#: Text that a ``|`` block holds exactly: no carriage returns, no tabs or spaces at the end
#: of a line (editors strip them), nothing non-printable.
_NOT_FOR_BLOCK = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]|[ \t]\n|[ \t]$"
)
#: Longer keys need YAML's explicit ``?`` form, which the fast path does not write.
_MAX_KEY = 1000


#: ``json.dumps(text, ensure_ascii=False)`` for a string, without the encoder ``json.dumps``
#: builds per call when given an option (C, where CPython has it).
_json_string: Callable[[str], str] = json.encoder.encode_basestring


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _quoted(text: str) -> str:
    if _SURROGATES.search(text):
        raise _NotSimple
    quoted = _json_string(text)
    return _YAML_ESCAPES.sub(_escape, quoted) if _YAML_ESCAPES.search(quoted) else quoted


#: The text of each short string written lately: keys and values such as ``role: user``
#: repeat in every item. A plain dictionary, emptied when full, rather than an LRU cache:
#: the strings met once (ids, prompts) cost an LRU cache an eviction each, which took more
#: than writing them, and a hit is one ``dict.get`` inline in the writer's loops.
_TEXTS: dict[str, str] = {}
_MAX_TEXTS = 4096


def _plain_or_quoted(text: str) -> str:
    """:func:`_written` of ``text``, remembered (see :data:`_TEXTS`)."""
    return _TEXTS.get(text) or _remembered(text)


def _remembered(text: str) -> str:
    """:func:`_written` of a ``text`` not in :data:`_TEXTS`, kept there (never ``""``: an
    empty string is written ``""``, so a miss is told by a false lookup)."""
    found = _written(text)
    if len(_TEXTS) >= _MAX_TEXTS:
        _TEXTS.clear()
    _TEXTS[text] = found
    return found


def _written(text: str) -> str:
    """``text`` plain when YAML reads it back as this string, else double-quoted."""
    if (
        _PLAIN.fullmatch(text)
        and ": " not in text
        and " #" not in text
        and not text.endswith(":")
        and (len(text) > 5 or text.lower() not in _RESERVED)
    ):
        return text
    return _quoted(text)


#: The text of each key written so far: the same few keys make every item.
_KEYS: dict[str, str] = {}


def _key(key: Any) -> str:
    if type(key) is str and (text := _KEYS.get(key)) is not None:
        return text
    if not isinstance(key, str) or len(key) > _MAX_KEY:
        raise _NotSimple
    text = _plain_or_quoted(key)
    if type(key) is str and len(_KEYS) < 4096:
        _KEYS[key] = text
    return text


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise _NotSimple
    text = repr(value)
    if "." not in text:  # YAML 1.1 reads 1e+20 as a string; 1.0e+20 is a float
        text = text.replace("e", ".0e")
    return text


def _block(text: str, indent: str) -> str | None:
    """``text`` as a ``|`` block whose lines sit at ``indent``; ``None`` when a block cannot hold it."""
    first = text.lstrip("\n")[:1]
    if not first or first in " \t" or _NOT_FOR_BLOCK.search(text):
        return None
    content = text[:-1] if text.endswith("\n") else text
    chomp = "-" if not text.endswith("\n") else "+" if content.endswith("\n") else ""
    lines = "\n".join(indent + line if line else line for line in content.split("\n"))
    return f"|{chomp}\n{lines}\n"


def _scalar(value: Any, indent: str) -> str:
    """A scalar after ``key: `` or ``- ``, with its line break; block content goes at ``indent``."""
    if isinstance(value, str):
        if "\n" in value and (block := _block(value, indent)) is not None:
            return block
        return _plain_or_quoted(value) + "\n"
    if value is None:
        return "null\n"
    if value is True:
        return "true\n"
    if value is False:
        return "false\n"
    if isinstance(value, int):
        return f"{value}\n"
    if isinstance(value, float):
        return _number(value) + "\n"
    raise _NotSimple


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, str):
        return _quoted(value)
    if type(value) is float:  # the figures of a timing
        return _number(value)
    return _scalar(value, "")[:-1]


def _figures(value: dict[Any, Any]) -> str | None:
    """:func:`_flow` of a mapping of figures (a timing: ``{headers: s, chunks: [s, ...]}``) with
    keys written before and floats only, without a call per figure; ``None`` for any other."""
    parts = []
    for key, item in value.items():
        name = _KEYS.get(key) if type(key) is str else None
        if name is None:
            return None
        if type(item) is float:
            parts.append(f"{name}: {_number(item)}")
        elif type(item) is list and all(type(figure) is float for figure in item):
            parts.append(f"{name}: [{', '.join(map(_number, item))}]")
        else:
            return None
    return "{" + ", ".join(parts) + "}"


class _Writer:
    """Appends one item's text to ``out``; a :class:`ChunkedBody` is kept aside as a piece."""

    __slots__ = ("large", "out")

    def __init__(self) -> None:
        self.out: list[str | ChunkedBody] = []
        self.large = False

    def value(self, value: Any, column: int) -> None:
        """The value of a key written at ``column``, from just after its ``:``."""
        out = self.out
        if isinstance(value, dict):
            if isinstance(value, Flow):
                out.append(f" {_figures(value) or _flow(value)}\n")
            elif value:
                out.append("\n")
                self.mapping(value, column + 2, first_line=" " * (column + 2))
            else:
                out.append(" {}\n")
        elif isinstance(value, list):
            if value:
                out.append("\n")
                self.sequence(value, column, first_line=" " * column)
            else:
                out.append(" []\n")
        elif isinstance(value, ChunkedBody):
            self.large = True
            out.append(' "')
            out.append(value)
            out.append('"\n')
        else:
            out.append(" " + _scalar(value, " " * (column + 2)))

    def mapping(self, mapping: dict[Any, Any], column: int, *, first_line: str) -> None:
        append = self.out.append
        indent, pad = first_line, " " * column
        keys, texts = _KEYS, _TEXTS
        for key, item in mapping.items():
            # Only strings are remembered in _KEYS; a str subclass equal to one is written the same.
            name = keys.get(key)
            if name is None:
                name = _key(key)
            kind = type(item)
            # The scalars of every item (short text, counts, nulls) and nested mappings written
            # here at once, without a call per value; the rest by value().
            if kind is str and "\n" not in item:
                append(f"{indent}{name}: {texts.get(item) or _remembered(item)}\n")
            elif kind is int:
                append(f"{indent}{name}: {item}\n")
            elif item is None:
                append(f"{indent}{name}: null\n")
            elif kind is dict and item:
                append(f"{indent}{name}:\n")
                self.mapping(item, column + 2, first_line=" " * (column + 2))
            elif kind is list and item:  # not indented under its key (see value())
                append(f"{indent}{name}:\n")
                self.sequence(item, column, first_line=pad)
            else:
                append(f"{indent}{name}:")
                self.value(item, column)
            indent = pad

    def sequence(self, items: Sequence[Any], column: int, *, first_line: str) -> None:
        append = self.out.append
        indent = first_line
        pad, inner = " " * column, " " * (column + 2)
        texts = _TEXTS
        for item in items:
            kind = type(item)
            if kind is str and "\n" not in item:
                append(f"{indent}- {texts.get(item) or _remembered(item)}\n")
            elif isinstance(item, dict) and item and kind is not Flow:
                append(f"{indent}- ")
                self.mapping(item, column + 2, first_line="")
            elif isinstance(item, list) and item:
                append(f"{indent}- ")
                self.sequence(item, column + 2, first_line="")
            elif isinstance(item, (dict, list, ChunkedBody)):
                append(f"{indent}-")
                self.value(item, column)
            else:
                append(f"{indent}- " + _scalar(item, inner))
            indent = pad


def _fallback(item: Any) -> str:
    text: str = yaml.dump(
        [item],
        Dumper=_FallbackDumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return text


def _pieces(parts: list[str | ChunkedBody]) -> Iterator[str]:
    """``parts`` with the plain text between large bodies joined, and each body streamed."""
    start = 0
    for index, part in enumerate(parts):
        if isinstance(part, ChunkedBody):
            yield "".join(parts[start:index])  # type: ignore[arg-type]
            for piece in part.pieces():
                yield _quoted(piece)[1:-1]
            start = index + 1
    yield "".join(parts[start:])  # type: ignore[arg-type]


#: Items are handed on in runs of about this many characters: a file writes each piece it is
#: given on its own, and a thousand small items written one by one took twice as long.
_RUN = 1 << 16


def sequence_items(items: Sequence[Any]) -> Iterator[str]:
    """Each item as a top-level YAML sequence entry (``- key: ...``), in pieces of text: runs
    of items, and a large body's own pieces (see :func:`_pieces`), never joined."""
    run: list[str] = []
    size = 0
    for item in items:
        writer = _Writer()
        try:
            writer.sequence([item], 0, first_line="")
        except _NotSimple:
            text = _fallback(item)
        else:
            if writer.large:
                if run:
                    yield "".join(run)
                    run, size = [], 0
                yield from _pieces(writer.out)
                continue
            text = "".join(writer.out)  # type: ignore[arg-type]
        run.append(text)
        size += len(text)
        if size >= _RUN:
            yield "".join(run)
            run, size = [], 0
    if run:
        yield "".join(run)

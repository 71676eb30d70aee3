"""Reading the YAML that promptvcr writes line by line, without a parser event per value.

:mod:`.yamlreader` builds a cassette from libyaml's events: about 70 per interaction, a Python step
each, 0.6 s for 10,000 interactions. The layout :mod:`.yamlwriter` writes is much narrower than
YAML: one ``key: value`` or ``- value`` per line, nesting by indentation, plain scalars that cannot
be mistaken for an indicator, JSON-escaped double-quoted strings, single-quoted ones (what PyYAML
writes for ``'*/*'``), ``|`` blocks and one-line flow collections (a response's timing). Such a
line is taken apart with one regular expression, so reading costs a step per line instead of one
per event.

This is only a fast path. Anything it does not recognise exactly (a tag, an anchor, a comment after
a value, a multi-line scalar, a tab, a carriage return, a character YAML treats specially) makes
:func:`load` return :data:`UNREAD`, and the event reader reads the whole text as before: so a text
read here gives what the safe loader gives, and every error message, limit and refusal stays the
event reader's. Plain scalars are resolved by that module's :func:`~.yamlreader.resolve_plain`, so
``yes``, ``1:30`` or ``0x1f`` mean here what they mean to PyYAML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

import yaml

__all__ = ["UNREAD", "Unread", "load"]

#: What :func:`load` returns for a text it leaves to the event reader.
UNREAD: Any = object()

#: Characters YAML reads as line breaks or refuses (and carriage returns): a text holding one is
#: left to the event reader. Found by one search of the text (:func:`_has_special`): as a class
#: in the line pattern, checked at each character, they cost 13% of reading real cassettes.
_SPECIAL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff"
_SPECIAL_SEARCH = re.compile(f"[{_SPECIAL}]")
#: Each ASCII special byte made 0, others 1: one C pass (a class search costs five times as much).
_ASCII_MARKS = bytes(0 if (b < 0x20 and b not in (0x09, 0x0A)) or b == 0x7F else 1 for b in range(256))
#: Nesting kept on Python's stack here; deeper texts go to the event reader (which has its own stack).
_MAX_DEPTH = 200
#: YAML's limit for a key written without ``?`` (1024), with room to spare.
_MAX_KEY = 1000

#: A double-quoted scalar, its text in a group: unrolled and possessive, as in :data:`_LINE`.
_QUOTED = r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"'

#: One line of a text without special characters: its indentation, its ``- `` entries, a key
#: (plain, or quoted with its quotes) and its colon, and the rest. Possessive throughout: the
#: rest takes what is left, so the first way each part matches is the match (15% fewer
#: instructions); a quoted key unrolled, not one alternative per character (600 a character).
_LINE = re.compile(
    r"""^( *+)((?:- )*+)(?:([A-Za-z][A-Za-z0-9_.-]*+|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|"""
    r"""'[^'\n]*+(?:''[^'\n]*+)*+')(:)(?: |$))?+(.*+)$""",
    re.MULTILINE,
)
_QUOTED_VALUE = re.compile(_QUOTED)
_SINGLE_QUOTED = re.compile(r"'([^']*+(?:''[^']*+)*+)'")
#: How a plain scalar read here starts (a sign only before a digit or a dot): never an indicator.
_PLAIN_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.~")
#: How plain scalars start that YAML may read as other than text (``yes``, ``null``, numbers...).
_RESOLVED_FIRST = frozenset(k for k in yaml.resolver.Resolver.yaml_implicit_resolvers if k)
#: Characters read at a time (see :func:`_pieces`): the rows of a line are several times its size.
_PIECE = 1 << 20
#: Plain scalars this short are resolved once per text (keys and small values repeat).
_KNOWN_LENGTH = 40
_ESCAPE = re.compile(r'\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.?))')
#: Escapes decoded one by one here at most, in one scalar.
_MAX_SLOW_ESCAPES = 1000
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: Tokens of a one-line flow collection: an indicator, a quoted or a plain scalar.
_FLOW_TOKEN = re.compile(
    rf" *(?:([\[\]{{}},]|: )|{_QUOTED}|((?:[A-Za-z0-9.~]|[-+](?=[0-9.]))[A-Za-z0-9_.+-]*))"
)


_NONE: Any = object()


class Unread(Exception):
    """The text goes beyond what this module reads; the event reader reads it. ``resolve``
    (see :func:`load`) raises it for a plain scalar it leaves to the full loader."""


def _unescape(match: re.Match[str]) -> str:
    simple, code, byte, _ = match.groups()
    if simple is not None:
        return _SIMPLE_ESCAPES[simple]
    if code is not None:
        if 0xD800 <= int(code, 16) <= 0xDFFF:
            raise Unread  # half of a surrogate pair: the event reader decides
        return chr(int(code, 16))
    if byte is not None:
        return chr(int(byte, 16))
    raise Unread  # another escape (YAML has more than JSON): left to libyaml


def _quoted(body: str) -> str:
    """A double-quoted scalar's text: its escapes are JSON's (read in C) unless it holds
    ``\\x`` or half of a surrogate pair, which are decoded one by one."""
    if "\\" not in body:
        return body
    if "\\x" not in body and not _SURROGATE.search(body):
        try:
            text: str = json.loads(f'"{body}"')
            return text
        except ValueError:  # a raw tab (YAML allows it), or an escape JSON does not have
            pass
    if body.count("\\") > _MAX_SLOW_ESCAPES:
        raise Unread  # libyaml decodes them in C
    return _ESCAPE.sub(_unescape, body)


def _block(lines: list[str], start: int, header: str, column: int) -> tuple[str, int]:
    """A ``|`` block scalar whose content starts at ``lines[start]``, indented past
    ``column``: its text, and the index of the first line after it."""
    if header not in ("|", "|-", "|+"):
        raise Unread  # an indentation indicator, a comment: libyaml's business
    end = len(lines)
    pos = start
    while pos < end and lines[pos] == "":
        pos += 1
    if pos == end:
        raise Unread
    first = lines[pos]
    indent = len(first) - len(first.lstrip(" "))
    if indent <= column:
        raise Unread  # an empty block: rare enough to leave to libyaml
    prefix = " " * indent
    last = pos
    while pos < end:
        line = lines[pos]
        if line.startswith(prefix):
            if not line.strip(" "):
                raise Unread  # a line of spaces only: YAML's rules for them are subtle
            last = pos
        elif line:
            if not line.strip(" ") or line.lstrip(" ")[:1] == "#":
                raise Unread
            break
        pos += 1
    body = "\n".join([line[indent:] for line in lines[start : last + 1]])
    if header == "|":
        body += "\n"
    elif header == "|+":
        body += "\n" * (pos - last)
    return body, pos


def _plain(text: str, resolve: Callable[[str], Any]) -> Any:
    """A plain scalar's value, when it is one that holds no ``: `` (a mapping where none may
    start), no `` #`` (a comment), no tab and nothing at its end that YAML trims or reads."""
    first = text[0]
    if (
        (first in _PLAIN_FIRST or (first in "-+" and text[1:2] in _SIGNED))
        and ": " not in text
        and " #" not in text
        and "\t" not in text
        and text[-1] not in " :"
    ):
        return resolve(text)
    raise Unread


_SIGNED = frozenset("0123456789.")


def _scalar(
    rest: str, lines: list[str], index: int, column: int, resolve: Callable[[str], Any]
) -> tuple[Any, int]:
    """A value written on line ``index`` after ``key: `` or ``- `` (in a node at ``column``)
    that is not a known plain scalar, and the index of the line after it."""
    first = rest[0]
    if first == '"':
        match = _QUOTED_VALUE.fullmatch(rest)
        if match is None:
            raise Unread
        return _quoted(match.group(1)), index + 1
    if first == "'":  # as PyYAML writes what needs quoting (and older promptvcr did)
        match = _SINGLE_QUOTED.fullmatch(rest)
        if match is None:
            raise Unread
        return match.group(1).replace("''", "'"), index + 1
    if first == "|":
        return _block(lines, index + 1, rest, column)
    if first == "{" or first == "[":
        return _Flow(rest, resolve).value(), index + 1
    return _plain(rest, resolve), index + 1


def _pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about :data:`_PIECE` characters, cut before a line that starts
    with ``- `` at the left margin (which no block or scalar runs across): the rows of one
    piece at a time are held, not those of the whole text."""
    start = 0
    while True:
        cut = text.find("\n- ", start + _PIECE)
        if cut < 0:
            yield text[start:] if start else text
            return
        yield text[start:cut]
        start = cut + 1


def _has_special(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`_SPECIAL`."""
    if text.isascii():
        return b"\x00" in text.encode("ascii").translate(_ASCII_MARKS)
    return _SPECIAL_SEARCH.search(text) is not None


def _read(text: str, resolve: Callable[[str], Any]) -> Any:
    document: Any = None
    # The innermost open container, its column and whether it is a list; the ones around it.
    top: Any = None
    top_column = -1
    top_list = False
    stack: list[tuple[Any, int, bool]] = []
    pending: Any = _NONE  # a key of ``top`` written with nothing after its colon
    known: dict[str, Any] = {}  # short plain scalars already read (keys and values repeat)
    for piece in _pieces(text):
        rows = _LINE.findall(piece)  # a row per line: every line matches (``.*+`` takes any rest)
        lines: list[str] = []  # the piece's lines, split when a ``|`` block needs them
        numbered = enumerate(rows)
        for index, (indent, dashes, key, colon, rest) in numbered:
            if not dashes and not colon:
                if rest and rest[0] != "#":
                    raise Unread  # a scalar alone on its line: continued, or broken
                continue  # a blank line or a comment
            column = len(indent)
            if pending is not _NONE:
                if column > top_column or (column == top_column and dashes):
                    child: Any = [] if dashes else {}
                    top[pending] = child
                    stack.append((top, top_column, top_list))
                    top, top_column, top_list = child, column, bool(dashes)
                pending = _NONE
            if dashes:
                while column < top_column:
                    top, top_column, top_list = stack.pop()
                if top is None:
                    if column:
                        raise Unread
                    top = document = []
                    top_column, top_list = column, True
                elif not top_list or column != top_column:
                    raise Unread
                for _ in range(len(dashes) // 2 - 1):  # ``- - x``: a list that is an item
                    child = []
                    top.append(child)
                    stack.append((top, top_column, top_list))
                    top, top_column, top_list = child, top_column + 2, True
                if len(stack) > _MAX_DEPTH:
                    raise Unread
                if colon:  # ``- key: ...``: a mapping that is an item
                    child = {}
                    top.append(child)
                    stack.append((top, top_column, top_list))
                    top, top_column, top_list = child, top_column + 2, False
                elif not rest:
                    raise Unread  # ``- `` and nothing after it
            elif column != top_column or top_list:
                while column < top_column:
                    top, top_column, top_list = stack.pop()
                if top_list and column == top_column:
                    top, top_column, top_list = stack.pop()  # a sequence written at its key's column ends
                if top is None:
                    if column:
                        raise Unread
                    top = document = {}
                    top_column, top_list = column, False
                elif top_list or column != top_column:
                    raise Unread
            if colon:
                name = known.get(key, _NONE)
                if name is _NONE:
                    name = _key(key, resolve)
                    if len(key) <= _KNOWN_LENGTH and key[0] not in "'\"":
                        known[key] = name
                if not rest:
                    top[name] = None
                    pending = name
                    continue
            # The value: most repeat (and are found), the rest are mostly plain text. (Written
            # out here rather than called: this runs for most of the lines of a cassette.)
            value = known.get(rest, _NONE)
            if value is _NONE:
                first = rest[0]
                if (
                    first in _PLAIN_FIRST
                    and ": " not in rest
                    and " #" not in rest
                    and "\t" not in rest
                    and rest[-1] not in " :"
                ):
                    value = resolve(rest) if first in _RESOLVED_FIRST else rest
                    if len(rest) <= _KNOWN_LENGTH:
                        known[rest] = value
                else:
                    if rest[0] == "|" and not lines:
                        lines = piece.split("\n")
                    value, after = _scalar(rest, lines, index, top_column, resolve)
                    if after > index + 1:  # a ``|`` block: its lines are read
                        next(islice(numbered, after - index - 2, None), None)
            if colon:
                top[name] = value
            else:
                top.append(value)
    if document is None:
        raise Unread
    return document


def _key(key: str, resolve: Callable[[str], Any]) -> Any:
    if len(key) > _MAX_KEY:
        raise Unread
    if key[0] == "'":
        return key[1:-1].replace("''", "'")
    return _quoted(key[1:-1]) if key[0] == '"' else resolve(key)


class _Flow:
    """A flow collection on one line (``{headers: 0.1, chunks: [0.2, 0.3]}``), read by tokens."""

    __slots__ = ("at", "depth", "resolve", "text")

    def __init__(self, text: str, resolve: Callable[[str], Any]) -> None:
        self.text, self.at, self.resolve, self.depth = text, 0, resolve, 0

    def token(self) -> tuple[str | None, str | None, str | None]:
        match = _FLOW_TOKEN.match(self.text, self.at)
        if match is None:
            raise Unread
        self.at = match.end()
        return match.group(1), match.group(2), match.group(3)

    def value(self) -> Any:
        value = self.item(self.token())
        if self.at != len(self.text):
            raise Unread
        return value

    def item(self, token: tuple[str | None, str | None, str | None]) -> Any:
        indicator, quoted, plain = token
        if quoted is not None:
            return _quoted(quoted)
        if plain is not None:
            return self.resolve(plain)
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise Unread
        if indicator == "[":
            items: list[Any] = []
            token = self.token()
            while token[0] != "]":
                items.append(self.item(token))
                token = self.token()
                if token[0] == ",":
                    token = self.token()
                    if token[0] == "]":
                        raise Unread  # a trailing comma
                elif token[0] != "]":
                    raise Unread
            self.depth -= 1
            return items
        if indicator == "{":
            mapping: dict[Any, Any] = {}
            token = self.token()
            while token[0] != "}":
                if token[0] is not None:
                    raise Unread
                key = self.item(token)
                if self.token()[0] != ": ":
                    raise Unread
                mapping[key] = self.item(self.token())
                token = self.token()
                if token[0] == ",":
                    token = self.token()
                    if token[0] == "}":
                        raise Unread
                elif token[0] != "}":
                    raise Unread
            self.depth -= 1
            return mapping
        raise Unread


def load(text: str, resolve: Callable[[str], Any]) -> Any:
    """The document of ``text`` as the safe loader builds it, or :data:`UNREAD` for a text
    beyond this module's subset. ``resolve`` gives the value of a plain scalar."""
    if not text.endswith("\n") or _has_special(text):
        return UNREAD
    try:
        return _read(text[:-1], resolve)
    except Unread:
        return UNREAD

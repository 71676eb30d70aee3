"""A request taken apart into what its key is made of: method, path, query, parsed body.

Bodies are parsed by meaning: JSON by value (``1`` and ``1.0`` are the same number; in a
document over :data:`~promptvcr.cassettes.largebody.LARGE_BODY_BYTES`, each long string by
its digest: :mod:`promptvcr.cassettes.largejson`),
forms as sorted pairs, multipart as its parts without the random boundary, text as text,
anything else by digest. Rules (:mod:`.rules`) then work on these parts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlsplit

from ..cassettes.jsonstyle import c_encoder
from ..cassettes.largebody import LARGE_BODY_BYTES
from ..cassettes.largejson import stood_in
from ..cassettes.models import Request

__all__ = ["KeyParts", "Rule", "is_json_body", "key_parts", "parse_body", "parts_of"]


@dataclass(frozen=True, slots=True)
class KeyParts:
    """The parts of a request that its key is made of, before hashing.

    ``body`` is the parsed JSON value, the sorted pairs of a form, ``{"multipart": [...]}``
    for a multipart body, the text of a text body, ``{"sha256": ...}`` for a binary one,
    or ``None`` when there is no body.
    """

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    body: Any
    #: The body bytes as sent, before any rule; never part of the key. A rule may read it
    #: to skip its walk when the bytes cannot hold what it looks for (no ``tool_call_id``,
    #: no non-ASCII text): the hot path then costs a substring search, not a tree walk.
    #: Empty when the parts were built by hand, and rules then always walk.
    raw: bytes = field(default=b"", compare=False, repr=False)

    def canonical(self) -> str:
        parts = [self.method, self.path, self.query, self.body]
        if _CANONICAL_PIECES is not None:
            try:
                return "".join(_CANONICAL_PIECES(parts, 0))
            except RecursionError:
                pass  # deep, or a rule made a cycle: the encoder below says which, as always
        return _CANONICAL.encode(parts)


#: A rule: a plain function from the parts of a key to the parts of a key.
Rule = Callable[[KeyParts], KeyParts]


def _number(text: str) -> int | float:
    """JSON numbers by value: ``1``, ``1.0`` and ``1e0`` are the same number."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


# Built once: json.loads/dumps with options build a new decoder/encoder on every call, and
# these run for every replayed request.
_DECODER = json.JSONDecoder(parse_float=_number)
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
#: The C encoder ``_CANONICAL.encode`` builds on every call, built once (half the cost of the
#: dump, a tenth of computing the 10,000 keys of a cassette being loaded). It has no cycle
#: check, which would need a table of the objects being written shared between threads: a
#: cycle ends in ``RecursionError`` here, and :meth:`KeyParts.canonical` then asks
#: ``_CANONICAL``, which reports it as before. ``None`` without the C module.
_CANONICAL_PIECES = c_encoder(",", ":", False, sort_keys=True, default=repr)


def _json(content: bytes) -> Any:
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:  # UTF-16/32 JSON: let json detect the encoding
        return json.loads(content, parse_float=_number)
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        # What ``_DECODER.decode`` does for a document with no whitespace around it, without
        # its two Python calls and two whitespace matches (a third of the parse of a small
        # body, on every new request). Anything else, errors included, is left to it.
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:  # pragma: no cover - a text starting with a bracket is a value
            pass
        else:
            if end == len(text):
                return value
    return _DECODER.decode(text.removeprefix("\ufeff"))


_OPENERS = (b"{", b"[")


def _digest(content: bytes) -> dict[str, str]:
    return {"sha256": hashlib.sha256(content).hexdigest()}


def _multipart(content: bytes, content_type: str) -> Any:
    """The parts of a multipart body in order, each by name, filename, type and content.

    The boundary is chosen at random per request (``httpx`` and ``requests`` both do), so
    it never takes part in the key; file contents are keyed by digest: an uploaded file (a
    part with a filename) by one line that names it, its size and its SHA-256, so that a
    changed file misses with a diff that says which file changed and how (issue 57). The
    parser (with its email policy) is imported by the first multipart body: most suites send
    none.
    """
    from ..cassettes.multipart import parse_multipart

    parts = parse_multipart(content, content_type)
    if parts is None:
        return None
    entries = []
    for part in parts:
        value: Any = _digest(part.content)
        if part.filename is not None:
            value = f"file {part.filename!r}, {len(part.content):,} bytes, sha256 {value['sha256']}"
        else:
            with contextlib.suppress(UnicodeDecodeError):
                value = part.content.decode("utf-8")
            # JSON text by meaning, whether the part says application/json or is a plain
            # field: SDKs send OpenAI's realtime "session" either way.
            if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
                with contextlib.suppress(ValueError, RecursionError):
                    value = json.loads(value, parse_float=_number)
        entry: dict[str, Any] = {"name": part.name, "value": value}
        if part.filename is not None:
            entry["filename"] = part.filename
            entry["content-type"] = part.content_type
        entries.append(entry)
    return {"multipart": entries}


def _tried_as_json(content: bytes, opens: bool, content_type: str) -> bool:
    """Whether a body is read as JSON first: it opens with a bracket (``opens``; whatever its
    content-type, then not even read), says JSON, or opens with one after whitespace."""
    return opens or "json" in content_type or content.lstrip()[:1] in _OPENERS


def is_json_body(request: Request) -> bool:
    """Whether :func:`parse_body` reads ``request``'s body as JSON (``promptvcr serve`` asks
    it of a large body's document with stand-ins, which is JSON exactly when the body is)."""
    content = request.content
    opens = content[:1] in _OPENERS
    if not _tried_as_json(content, opens, "" if opens else request.content_type):
        return False
    try:
        _json(content)
    except (ValueError, RecursionError):
        return False
    return True


def parse_body(request: Request) -> Any:
    content = request.content
    if not content:
        return None
    # A body that starts with a bracket is tried as JSON whatever its content-type: the
    # content-type (a header look-up and three string copies) is read only when needed.
    opens = content[:1] in _OPENERS
    content_type = "" if opens else request.content_type
    if _tried_as_json(content, opens, content_type):
        try:
            value = _json(content)
        except (ValueError, RecursionError):
            pass
        else:  # a large document: each long string by its digest (see cassettes.largejson)
            return stood_in(value) if len(content) > LARGE_BODY_BYTES else value
        if opens:
            content_type = request.content_type
    if content_type == "application/x-www-form-urlencoded":
        try:
            return sorted(parse_qsl(content.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            pass
    if content_type.startswith("multipart/"):
        parts = _multipart(content, request.headers.get("content-type", ""))
        if parts is not None:
            return parts
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return _digest(content)


#: Characters a path segment may hold as they are, whose escapes name the same path: RFC
#: 3986's unreserved ones, and ``:`` and ``@``. botocore escapes the ``:`` of a Bedrock model
#: id (``...-v1%3A0``), the anthropic SDK's Bedrock client does not. Sub-delimiters (``;``,
#: ``=``, ``,``...) stay escaped: some servers split a segment on them.
_SAME_AS_ESCAPED = frozenset(string.ascii_letters + string.digits + "-._~:@")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _unescape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _SAME_AS_ESCAPED else "%" + match.group(1).upper()


def _name(pair: tuple[str, str]) -> str:
    return pair[0]


def _path(path: str) -> str:
    """The path with escapes that change nothing undone, the others in upper-case hex."""
    return _ESCAPE.sub(_unescape, path) if "%" in path else path


# The parts of every request are built here, field by field through their slots: what the
# frozen dataclass's ``__init__`` does with ``object.__setattr__`` per field, in 60% of its time
# (0.23 us instead of 0.39, for each new request and each one of a cassette being loaded).
_new = object.__new__
_set_method, _set_path, _set_query, _set_body, _set_raw = (
    KeyParts.__dict__[name].__set__ for name in ("method", "path", "query", "body", "raw")
)


def key_parts(request: Request) -> KeyParts:
    """The raw parts of a request's key, before any rule."""
    return parts_of(request, urlsplit(request.url))


def parts_of(request: Request, url: SplitResult) -> KeyParts:
    """:func:`key_parts` of a request whose URL the caller has already split."""
    # Sorted by name only: a repeated parameter keeps the order of its values (``?a=1&a=2``
    # is not ``?a=2&a=1``); for distinct names this is the order sorting the pairs gives.
    query = tuple(sorted(parse_qsl(url.query, keep_blank_values=True), key=_name)) if url.query else ()
    parts = _new(KeyParts)
    _set_method(parts, request.method.upper())
    _set_path(parts, _path(url.path) or "/")
    _set_query(parts, query)
    _set_body(parts, parse_body(request))
    _set_raw(parts, request.content)
    return parts

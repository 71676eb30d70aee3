"""Masking a credential inside the encodings it hides behind: decoded, masked, encoded again.

An answer may carry a key inside a base64 string (a config file a tool returns, a JSON
document the server encoded, a percent-encoded link inside that), where the scan finds it
(:func:`.decode.texts`) but a replacement of the plain text cannot reach it. Refusing such an
answer lost the whole recording (issue 41). Here each encoded run is decoded, the credential
replaced by its placeholder in the decoded text (and in the layers under it), and the text
encoded again the same way: base64 stays base64 with the same alphabet and padding, a
compressed payload is compressed again with the same algorithm, a percent-escape stays a
percent-escape. Everything else in the encoded content is kept as it was.

What cannot be encoded again (a compression whose library is not installed) is left as it
is: redaction looks again after masking and refuses what is still there.
"""

from __future__ import annotations

import base64
import difflib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

from .compressed import compressed_like
from .runs import decode_run, is_binary

__all__ = ["masked_strings", "masked_within"]

#: Masks the plain occurrences of the credentials in a text (:meth:`.masking.Masker.text`).
Replace = Callable[[str], str]

#: How many encodings deep a credential is masked: as deep as the scan decodes (:mod:`.decode`).
_MAX_LAYERS = 4

#: A run of base64 (either alphabet) long enough to hold a key, with nothing of base64 on
#: either side: a whole JSON string, or a payload inside a text (``data:...;base64,RUN``). Not
#: one an escape cuts (``RUN%2F...``, ``RUN\\/...``): encoded again alone, the rest of its string
#: would no longer line up; the percent and JSON passes read such a string whole.
_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-=%\\])")
#: In binary content any byte may follow a run (a protobuf field's next tag): every run counts.
_BINARY_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}")
#: The pieces of one alphabet of a run that mixes both (a URL's path before an id).
_PIECES = (re.compile(r"[A-Za-z0-9_\-]{24,}"), re.compile(r"[A-Za-z0-9+/]{24,}={0,2}"))
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
#: Lines of base64 wrapped at one width (see :func:`.runs.runs`), the last one shorter or not.
_WRAPPED = re.compile(r"(?<![A-Za-z0-9+/_\-])(?:[A-Za-z0-9+/_\-]{24,}(?:\r\n|\n))+[A-Za-z0-9+/_\-]*={0,2}")


def masked_within(text: str, replace: Replace, depth: int = 0, *, binary: bool = False) -> str:
    """``text`` with the credentials ``replace`` masks masked in it, in each base64 run in it
    and in its percent-escapes, layer under layer. ``binary``: ``text`` is binary content read
    as Latin-1, or lies inside some: each mask keeps the length of what it replaces (padded
    with spaces, or cut), so that the lengths a binary format frames its fields with (a
    protobuf string's length byte) still hold."""
    masked = replace(text)
    if binary and masked != text:
        masked = _same_length(text, masked)
    if depth >= _MAX_LAYERS:
        return masked
    if "%" in masked and not binary:  # first: a base64 run whose padding is escaped (``%3D``)
        masked = _in_percent(masked, replace, depth + 1)
    if "\n" in masked:  # base64 wrapped at a width: a key cut by a line break
        masked = _WRAPPED.sub(lambda block: _in_wrapped(block.group(), replace, depth + 1, binary), masked)
    runs = _BINARY_RUN if binary else _RUN
    masked = runs.sub(lambda run: _in_base64(run.group(), replace, depth + 1, binary), masked)
    return masked if binary else _in_document(masked, replace, depth + 1)


def _in_wrapped(block: str, replace: Replace, depth: int, binary: bool) -> str:
    """Lines of base64 of one width with the credentials in their joined payload masked, the
    payload encoded again and wrapped at the same width with the same line ends. The last line
    may be a word of the text after the block (``Done``): then the block without it is tried."""
    eol = "\r\n" if "\r\n" in block else "\n"
    lines = block.split(eol)
    width = len(lines[0])
    if width % 4 or any(len(line) != width for line in lines[1:-1]) or len(lines[-1]) > width:
        return block  # not wrapped at one width: each line is a run of its own
    for count in (len(lines), len(lines) - 1):
        joined = "".join(lines[:count])
        masked = _in_base64(joined, replace, depth, binary)
        if masked != joined:
            wrapped = eol.join(masked[at : at + width] for at in range(0, len(masked), width))
            if count == len(lines):  # the block's last line break (``split`` left ``""`` after it)
                return wrapped + (eol if not lines[-1] else "")
            return eol.join([wrapped, *lines[count:]])
    return block


def _same_length(old: str, new: str) -> str:
    """``new`` (``old`` with some values masked) made as long as ``old``: the span from the
    first change to the last padded with spaces, or cut (a placeholder longer than its key)."""
    prefix = _shared_start(old, new)
    suffix = min(_shared_start(old[prefix:][::-1], new[prefix:][::-1]), len(old) - prefix)
    middle = new[prefix : len(new) - suffix]
    width = len(old) - prefix - suffix
    return old[:prefix] + middle[:width].ljust(width) + old[len(old) - suffix :]


def _in_document(text: str, replace: Replace, depth: int) -> str:
    """A JSON document's text with the credentials its strings still hold masked: those the
    passes over its text could not reach, because a JSON escape cuts a run (``\\/``, which
    PHP's ``json_encode`` writes for every ``/``). Written again by :func:`json.dumps` in the
    document's own spacing: the same document, spelt with fewer escapes."""
    if text.lstrip()[:1] not in ("{", "[") or "\\" not in text:
        return text  # no escape: the passes over the text reached every string
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return text
    masked = masked_strings(document, replace, depth)
    if masked == document:
        return text
    spaced = '": ' in text
    return json.dumps(masked, ensure_ascii="\\u" in text, separators=None if spaced else (",", ":"))


def _in_base64(run: str, replace: Replace, depth: int, binary: bool = False) -> str:
    """A base64 run with the credentials in its payload masked, encoded as it was: the same
    alphabet, padded or not, compressed again with the same algorithm; the characters at its
    edges that are not its payload's (:func:`.runs.decode_run`) kept as they were."""
    decoded = decode_run(run, edges=binary)
    if decoded is None:
        if ("-" in run or "_" in run) and ("+" in run or "/" in run):  # both alphabets: each piece
            for pieces in _PIECES:
                run = pieces.sub(lambda piece: _in_base64(piece.group(), replace, depth, binary), run)
        return run
    base = run[decoded.start : decoded.end]
    if _encoded(decoded.content, decoded.urlsafe, base) != base:  # stray characters at its end
        whole = decoded.start + len(base.rstrip("=")) // 4 * 4
        if not binary or whole == len(run):  # in text not base64 after all: left as it is
            return run
        # In binary the lengths are kept: its whole groups are masked, the rest kept as it is.
        return _in_base64(run[:whole], replace, depth, binary) + run[whole:]
    plain = decoded.payload
    text = plain.decode("latin-1")  # byte for byte: the rest of the payload comes back unchanged
    inside = binary or is_binary(plain)  # binary, or text inside binary: lengths are kept
    masked = masked_within(text, replace, depth, binary=inside)
    if masked == text:
        return run
    payload = masked.encode("latin-1", "backslashreplace")  # a placeholder is ASCII
    if decoded.inflated is not None:
        recompressed = compressed_like(decoded.content, payload)
        if recompressed is None:
            return run  # cannot be written again the same way: refused after (see the module)
        payload = recompressed
    return run[: decoded.start] + _encoded(payload, decoded.urlsafe, base) + run[decoded.end :]


def _encoded(payload: bytes, urlsafe: bool, like: str) -> str:
    """``payload`` in base64 written as the run ``like`` was: its alphabet, padded or not."""
    encoded = base64.b64encode(payload, altchars=b"-_" if urlsafe else None).decode("ascii")
    return encoded if _padded(like, urlsafe) else encoded.rstrip("=")


def _padded(run: str, urlsafe: bool) -> bool:
    """Whether a run was written with ``=`` padding. A run whose length is a multiple of four
    needed none: the standard alphabet pads (RFC 4648), the URL-safe one usually does not
    (JWTs, RFC 7515)."""
    if run.endswith("="):
        return True
    return len(run) % 4 == 0 and not urlsafe


def _pieces(text: str) -> Iterator[tuple[str, str]]:
    """(as written, as read) for each character of ``text``, a ``%XX`` escape read as the one
    byte it stands for (as Latin-1: byte for byte, like :func:`_in_base64`)."""
    position = 0
    for escape in _ESCAPE.finditer(text):
        for character in text[position : escape.start()]:
            yield character, character
        yield escape.group(), chr(int(escape.group()[1:], 16))
        position = escape.end()
    for character in text[position:]:
        yield character, character


def _in_percent(text: str, replace: Replace, depth: int) -> str:
    """``text`` with the credentials in its percent-decoded form masked, each changed part
    percent-encoded again and each unchanged character written as it was."""
    pieces = list(_pieces(text))
    decoded = "".join(read for _, read in pieces)
    if decoded == text:
        return text
    masked = masked_within(decoded, replace, depth)
    if masked == decoded:
        return text
    # Only the span from the first change to the last is compared: a long text with one key
    # in it costs two scans, not a comparison of every character with every other.
    prefix = _shared_start(decoded, masked)
    suffix = _shared_start(decoded[prefix:][::-1], masked[prefix:][::-1])
    out = [written for written, _ in pieces[:prefix]]
    old_middle, new_middle = decoded[prefix : len(decoded) - suffix], masked[prefix : len(masked) - suffix]
    matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
    for tag, start, end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            out.extend(written for written, _ in pieces[prefix + start : prefix + end])
        else:
            out.append(_escaped(new_middle[new_start:new_end]))
    out.extend(written for written, _ in pieces[len(pieces) - suffix :])
    return "".join(out)


def _shared_start(one: str, other: str) -> int:
    """How many characters ``one`` and ``other`` begin with in common."""
    return next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), min(len(one), len(other))
    )


def _escaped(text: str) -> str:
    """Changed text percent-encoded: a character read from an escape (below 256) as that
    escape again, any other as it is."""
    return "".join(quote(bytes([ord(c)]), safe="") if ord(c) < 256 else c for c in text)


def masked_strings(data: Any, replace: Replace, depth: int = 0) -> Any:
    """A copy of stored data with :func:`masked_within` applied to each string (a ``base64``
    body is a base64 run too)."""
    if isinstance(data, str):
        return masked_within(data, replace, depth)
    if isinstance(data, dict):
        return {key: masked_strings(item, replace, depth) for key, item in data.items()}
    if isinstance(data, list):
        return [masked_strings(item, replace, depth) for item in data]
    return data


def masked_across(pieces: list[str], replace: Replace) -> list[str]:
    """The pieces of a value a stream sent in parts (one field of consecutive events) with the
    credentials masked that only their joined text holds, inside its encodings too (base64
    sent a few characters per event): the span from the first change to the last is written
    into the piece it starts in, and taken out of the pieces after it, so that the pieces join
    to the masked text and every piece outside the span is kept as it was."""
    joined = "".join(pieces)
    masked = masked_within(joined, replace)
    if masked == joined:
        return pieces
    start = _shared_start(joined, masked)
    suffix = min(_shared_start(joined[start:][::-1], masked[start:][::-1]), len(joined) - start)
    end, middle = len(joined) - suffix, masked[start : len(masked) - suffix]
    out: list[str] = []
    offset = 0
    for index, piece in enumerate(pieces):
        first, offset = offset, offset + len(piece)
        before = piece[: max(0, min(len(piece), start - first))]
        after = piece[max(0, min(len(piece), end - first)) :]
        here = first <= start < offset or (start == len(joined) and index == len(pieces) - 1)
        out.append(before + (middle if here else "") + after)
    return out

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
import binascii
import difflib
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

from .decode import decompressed

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
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def masked_within(text: str, replace: Replace, depth: int = 0) -> str:
    """``text`` with the credentials ``replace`` masks masked in it, in each base64 run in it
    and in its percent-escapes, layer under layer."""
    masked = replace(text)
    if depth >= _MAX_LAYERS:
        return masked
    if "%" in masked:  # first: a base64 run whose padding is escaped (``%3D``) is whole once read
        masked = _in_percent(masked, replace, depth + 1)
    masked = _RUN.sub(lambda run: _in_base64(run.group(), replace, depth + 1), masked)
    return _in_document(masked, replace, depth + 1)


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


def _in_base64(run: str, replace: Replace, depth: int) -> str:
    """A base64 run with the credentials in its payload masked, encoded as it was: the same
    alphabet, padded or not, compressed again with the same algorithm."""
    urlsafe = "-" in run or "_" in run
    if urlsafe and ("+" in run or "/" in run):
        return run  # two alphabets at once: not base64
    try:
        content = base64.b64decode(
            run + "=" * (-len(run) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
    except (binascii.Error, ValueError):
        return run
    if _encoded(content, urlsafe, run) != run:
        return run  # not a whole base64 text (stray bits at its end): left as it is
    inflated = decompressed(content)
    plain = inflated if inflated is not None else content
    decoded = plain.decode("latin-1")  # byte for byte: the rest of the payload comes back unchanged
    masked = masked_within(decoded, replace, depth)
    if masked == decoded:
        return run
    payload = masked.encode("latin-1", "backslashreplace")  # a placeholder is ASCII
    if inflated is not None:
        recompressed = _compressed_like(content, payload)
        if recompressed is None:
            return run  # cannot be written again the same way: refused after (see the module)
        payload = recompressed
    return _encoded(payload, urlsafe, run)


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


def _compressed_like(original: bytes, payload: bytes) -> bytes | None:
    """``payload`` compressed with the algorithm ``original`` was, or ``None`` when this
    process cannot (its library is missing)."""
    if original[:2] == b"\x1f\x8b":
        return gzip.compress(payload, mtime=0)
    if original[:1] == b"\x78":
        return zlib.compress(payload)
    if original[:4] == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard  # type: ignore[import-not-found,unused-ignore]
        except ImportError:  # pragma: no cover - it decompressed, so it is installed
            return None
        compressed: bytes = zstandard.ZstdCompressor().compress(payload)
        return compressed
    try:
        import brotli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - it decompressed, so it is installed
        return None
    compressed = brotli.compress(payload)
    return compressed


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

"""Finding credentials in cassettes: the shapes of real keys, wherever they hide.

Redaction removes the credentials promptvcr knows the place of (headers, ``key=``
query parameters, ``api_key`` body fields). This scanner is the net under it: a key
pasted into a prompt, echoed back by a proxy, put in a URL path or in a header a new
provider invented. It looks for the *shape* of each kind of key, so it needs no
configuration and runs the same in ``promptvcr scan`` and on the record path.

A finding never carries the secret itself, only its kind, its place and a masked
preview: the log of a CI run must not leak the key either.

On the record path the scan runs through :mod:`.redaction`, which also gives it the
``base64`` bodies decoded (gzip inflated) and each field of a stream joined across its
events. :func:`scan_data` itself skips ``base64`` bodies. Documented example values and
placeholders (:mod:`.examples`) are not findings. Every kind is matched in linear time: a
kind starts only where a run of its own characters starts, and repeats are bounded, so no
start scans text another start has scanned (``tests/cassettes/test_scan_linear.py``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .examples import is_documented_example
from .largebody import ChunkedBody
from .redact import words_pattern

__all__ = [
    "SECRET_KINDS",
    "Finding",
    "masked_preview",
    "may_hold_secret",
    "scan_data",
    "scan_paths",
    "scan_text",
    "secret_message",
    "secret_values",
]

_B64 = r"A-Za-z0-9+/"
_URLSAFE = r"A-Za-z0-9_\-"

#: Kind of secret -> the shape of its values. Prefixes come from the providers' own
#: documentation; lengths are the lower bounds seen in real keys, so that a test key
#: such as ``sk-test`` or ``AIza-test`` is not a finding while a realistic fake one is.
SECRET_KINDS: dict[str, str] = {
    "Anthropic API key": rf"sk-ant-(?:api|admin|oat|sid)\d\d-[{_URLSAFE}]{{32,}}",
    "OpenAI API key": rf"sk-(?:proj|svcacct|admin|None)-[{_URLSAFE}]{{40,}}"
    r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
    "OpenRouter API key": r"sk-or-v1-[0-9a-f]{64}",
    "sk- style API key (OpenAI, DeepSeek, Moonshot...)": r"sk-[A-Za-z0-9]{32,}(?![A-Za-z0-9_\-])",
    "Google API key": rf"AIza[{_URLSAFE}]{{35}}",
    "Google OAuth access token": rf"ya29\.[{_URLSAFE}]{{30,}}",
    "Groq API key": r"gsk_[A-Za-z0-9]{48,}",
    "xAI API key": r"xai-[A-Za-z0-9]{60,}",
    "Perplexity API key": r"pplx-[A-Za-z0-9]{40,}",
    "Hugging Face token": r"hf_[A-Za-z0-9]{34,}",
    "Replicate API token": r"r8_[A-Za-z0-9]{37,}",
    "GitHub token": r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})",
    "Slack token": r"xox[abpors]-[A-Za-z0-9-]{20,}",
    "Stripe secret key": r"(?:sk|rk)_live_[A-Za-z0-9]{24,}",
    "AWS access key id": r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z2-7]{16}(?![A-Za-z0-9])",
    "AWS secret access key": r"(?i:aws_?secret_?access_?key|secretaccesskey)[\"']?\s*[:=]\s*[\"']?"
    rf"[{_B64}]{{40}}(?![{_B64}])",
    "AWS session token": rf"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE|FQoGZXIvYXdzE)[{_B64}=]{{60,}}"
    rf"|(?i:aws_?session_?token|x-amz-security-token|sessiontoken)[\"']?\s*[:=]\s*[\"']?[{_B64}=]{{100,}}",
    # A token starts where a run of its characters starts (``-`` too): a start inside a
    # run would scan the rest of the run again, quadratic on text like ``-eyJ-eyJ-eyJ...``.
    "JSON Web Token": rf"(?<!-)eyJ[{_URLSAFE}]{{8,}}\.eyJ[{_URLSAFE}]{{8,}}\.[{_URLSAFE}]{{8,}}",
    # Key material must follow: a tutorial naming the header line holds no key.
    "private key": r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[rn])*"
    rf"[{_B64}]{{40}}",
    "bearer token": rf"(?i:bearer)\s+[{_URLSAFE}.~+/]{{20,}}=*",
}

#: Text every value of some kind holds, lower-cased: text without any of them holds no
#: secret, and finding that takes a few substring searches instead of the regex below,
#: which tries every kind at every position (megabytes per second, not gigabytes). A kind
#: added to SECRET_KINDS needs its clue here: tests/cassettes/test_scan_secrets.py fails without it.
_CLUES = (
    *("sk-", "sk_live_", "rk_live_", "aiza", "ya29.", "gsk_", "xai-", "pplx-", "hf_", "r8_", "xox"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "eyj", "-----begin", "bearer"),
    *("akia", "asia", "abia", "acca", "aroa", "aida", "secret", "session", "security-token"),
    *("iqojb3jpz2lux2vj", "fwogzxivyxdze", "fqogzxivyxdze"),
)


def _by_first_character(words: Iterable[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for word in words:
        grouped.setdefault(word[0], []).append(word)
    return grouped


@functools.cache
def _clue_patterns() -> tuple[re.Pattern[str], ...]:
    """One pattern per first character of the clues: each starts with a literal character,
    which the regex engine finds by a plain scan in C before it tries the rest. The dozen
    passes take half the time of one pass over a single pattern that tries every clue
    wherever any first character is (1 MB of chat JSON: 10 ms against 19 ms; a recorded chat
    answer's text: 7.4 us against 9.7 us, issue 22). Compiled at the first search, like
    :func:`_secret_pattern`: a process that only replays never compiles them (~3 ms)."""
    return tuple(re.compile(words_pattern(group)) for group in _by_first_character(_CLUES).values())


def _has_clue(text: str) -> bool:
    lowered = text.lower()
    return any(pattern.search(lowered) is not None for pattern in _clue_patterns())


def may_hold_secret(text: str) -> bool:
    """False when ``text`` (or its JSON: JSON escapes no character of a clue) holds no
    secret of any kind, found with a few substring searches."""
    return _has_clue(text)


_GROUP_OF_KIND = {f"k{index}": kind for index, kind in enumerate(SECRET_KINDS)}
#: The characters a value of some kind starts with (both cases where a kind ignores case).
#: A kind added to SECRET_KINDS needs its first character here: its test fails without it.
_FIRST_CHARACTERS = "sSrRaAyYgGxXpPhHeEiIfFbB-"


@functools.cache
def _secret_pattern() -> re.Pattern[str]:
    """One pattern with a group per kind: a single pass over the text however many kinds
    there are. Each kind must start at a boundary, so a key inside a longer token is not
    split; the boundary and the first character are checked once, before any kind is tried,
    so that most positions of any text cost one comparison (about 1 MB in a quarter of a
    second)."""
    return re.compile(
        rf"(?<![A-Za-z0-9_])(?=[{_FIRST_CHARACTERS}])(?:"
        + "|".join(rf"(?P<{group}>{SECRET_KINDS[kind]})" for group, kind in _GROUP_OF_KIND.items())
        + ")"
    )


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret-shaped value: its kind, where it is, and a masked preview (never the value)."""

    kind: str
    preview: str
    line: int = 0
    column: int = 0
    field: str = ""
    path: Path | None = None

    def where(self) -> str:
        place = str(self.path) if self.path is not None else "<text>"
        if self.line:
            place += f":{self.line}:{self.column}"
        if self.field:
            place += f" ({self.field})"
        return place

    def __str__(self) -> str:
        return f"{self.where()}: {self.kind} {self.preview}"


def masked_preview(value: str) -> str:
    """Enough to recognise which key it is, never enough to use it."""
    return f"{value[:6]}… ({len(value)} characters)"


_mask = masked_preview


def _matches(text: str, allowed: frozenset[str] = frozenset()) -> Iterator[tuple[str, re.Match[str]]]:
    """Each secret-shaped value in ``text`` that is neither a documented example nor
    one of the ``allowed`` values (a cassette's ``allowed_secrets``)."""
    for match in _secret_pattern().finditer(text):
        group = match.lastgroup
        if group is not None:
            kind, value = _GROUP_OF_KIND[group], match.group()
            if value not in allowed and not is_documented_example(value, kind):
                yield kind, match


def secret_values(text: str, allowed: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """(kind, value) for each secret-shaped value in ``text``: for masking, never for printing."""
    if _has_clue(text):
        for kind, match in _matches(text, allowed):
            yield kind, match.group()


def scan_text(text: str, *, path: Path | None = None) -> list[Finding]:
    """Every secret-shaped value in ``text``, with its line and column (1-based)."""
    findings = []
    line, line_start, counted = 1, 0, 0
    for kind, match in _matches(text):
        start = match.start()
        # Newlines are counted once each, from where the last finding was: linear however
        # many findings share a line.
        newlines = text.count("\n", counted, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, start) + 1
        counted = start
        findings.append(Finding(kind, _mask(match.group()), line, start - line_start + 1, path=path))
    return findings


def _field(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", key):
        return f"{parent}.{key}" if parent else key
    return f"{parent}[{key!r}]"


#: How much of the text before a slice is scanned again with it, so that a key cut in two
#: by the slicing of a large body is still found (every key shape is far shorter).
_OVERLAP = 4096


def _piece_matches(pieces: Iterable[str], allowed: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """(kind, value) for each secret-shaped value in text that comes in pieces."""
    tail = ""
    for piece in pieces:
        text = tail + piece
        if _has_clue(text):
            for kind, match in _matches(text, allowed):
                if match.end() > len(tail):  # one that ends in the tail was found with the slice before
                    yield kind, match.group()
        tail = text[-_OVERLAP:]


def _strings(data: Any) -> tuple[list[str], list[ChunkedBody]]:
    """Every key and string in ``data`` (not ``base64`` bodies), and its large bodies apart."""
    strings: list[str] = []
    large: list[ChunkedBody] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key != "base64":
                    strings.append(str(key))
                    stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, ChunkedBody):
            large.append(value)
    return strings, large


def _has_secret(data: Any) -> bool:
    """One regex pass over all of ``data``'s text: the common answer (none) without building
    a field name per value, which is what the full walk below spends its time on. Before
    that, the clues are looked for in ``data`` as JSON (written in C): JSON escapes none of
    their characters, so text without a clue there holds no secret either."""
    try:
        if not _has_clue(json.dumps(data)):
            return False
    except (TypeError, ValueError, RecursionError):  # a large body, or data JSON cannot hold
        pass
    strings, large = _strings(data)
    text = "\n".join(strings)
    if _has_clue(text) and _secret_pattern().search(text):
        return True
    return any(True for body in large for _ in _piece_matches(body.pieces()))


def scan_data(data: Any, field: str = "", *, allowed: frozenset[str] = frozenset()) -> list[Finding]:
    """Every secret-shaped string in stored cassette data, each named by its field
    (``request.json.messages[0].content``); ``base64`` bodies are skipped (see above)."""
    if not _has_secret(data):
        return []
    findings: list[Finding] = []
    stack: list[tuple[str, Any]] = [(field, data)]
    while stack:  # iterative: deeply nested JSON must not hit the recursion limit
        where, value = stack.pop()
        if isinstance(value, str):
            findings.extend(
                Finding(kind, _mask(m.group()), field=where) for kind, m in _matches(value, allowed)
            )
        elif isinstance(value, ChunkedBody):
            findings.extend(
                Finding(kind, _mask(found), field=where)
                for kind, found in _piece_matches(value.pieces(), allowed)
            )
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if key == "base64":
                    continue
                if isinstance(key, str):
                    findings.extend(
                        Finding(kind, _mask(m.group()), field=where) for kind, m in _matches(key, allowed)
                    )
                stack.append((_field(where, str(key)), item))
        elif isinstance(value, (list, tuple)):
            stack.extend((_field(where, index), item) for index, item in reversed(list(enumerate(value))))
    return findings


_CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")


def _files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            found = (p for p in path.rglob("*") if p.suffix.lower() in _CASSETTE_SUFFIXES and p.is_file())
            yield from sorted(found)
        else:
            yield path


def scan_paths(paths: Iterable[Path]) -> list[Finding]:
    """Findings in every cassette file under ``paths`` (files, or folders searched for
    ``*.yaml``/``*.yml``/``*.json``). Unreadable files raise ``OSError``; text that is not
    UTF-8 is read with replacement so that a key next to a bad byte is still found."""
    findings: list[Finding] = []
    for path in _files(paths):
        text = path.read_bytes().decode("utf-8", errors="replace")
        findings.extend(scan_text(text, path=path))
    return findings


def secret_message(path: Path, findings: list[Finding]) -> str:
    """The record path's refusal: which fields, what kind, and what to do; never the value."""
    lines = [f"  {f.field}: {f.kind} {f.preview}" for f in findings]
    return (
        f"promptvcr: refusing to write cassette {path}: what was just recorded holds "
        f"{len(findings)} value(s) shaped like a secret (recorded[N] is the N-th request recorded "
        f"in this run, counting from 0):\n" + "\n".join(lines) + "\n"
        "Nothing was written. Find where the code under test puts this value into the request "
        "(a prompt, a URL, a header) and use a fake value while recording; "
        "if it is a fake key already, make it obviously fake (e.g. sk-test-...)."
    )

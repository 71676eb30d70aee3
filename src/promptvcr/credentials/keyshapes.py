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
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .examples import is_documented_example
from .names import is_environment_credential, words_pattern

__all__ = [
    "SECRET_KINDS",
    "Finding",
    "assigned_values",
    "masked_preview",
    "may_assign_credential",
    "may_hold_secret",
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
    "bearer token": rf"(?i:bearer)(?:\s+|%20|\+)[{_URLSAFE}.~+/]{{20,}}=*",
    # A Telegram bot's token travels in the URL's path: ``/bot123456789:AA.../sendMessage``.
    "Telegram bot token": rf"bot\d{{6,12}}:[{_URLSAFE}]{{30,}}",
}

#: Each kind as a placeholder names it: ``<redacted:openai-key>``.
KIND_SLUGS: dict[str, str] = {
    "Anthropic API key": "anthropic-key",
    "OpenAI API key": "openai-key",
    "OpenRouter API key": "openrouter-key",
    "sk- style API key (OpenAI, DeepSeek, Moonshot...)": "sk-key",
    "Google API key": "google-key",
    "Google OAuth access token": "google-oauth-token",
    "Groq API key": "groq-key",
    "xAI API key": "xai-key",
    "Perplexity API key": "perplexity-key",
    "Hugging Face token": "huggingface-token",
    "Replicate API token": "replicate-token",
    "GitHub token": "github-token",
    "Slack token": "slack-token",
    "Stripe secret key": "stripe-key",
    "AWS access key id": "aws-access-key-id",
    "AWS secret access key": "aws-secret-key",
    "AWS session token": "aws-session-token",
    "JSON Web Token": "jwt",
    "private key": "private-key",
    "bearer token": "bearer-token",
    "Telegram bot token": "telegram-bot-token",
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
    *(f"bot{digit}" for digit in range(10)),
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
_FIRST_CHARACTERS = "sSrRaAyYgGxXpPhHeEiIfFbB-"  # "b": bearer and bot


#: Prefixes distinctive enough to be found glued to a word character (``x_sk-proj-...``, a
#: protobuf string field whose length byte is a letter: ``lsk-ant-api03-...``, ``1AIza...``):
#: each has a separator no identifier or base64 run holds by chance, or (``AIza``) its exact
#: length with the end of the run right after it.
_GLUED = (
    r"sk-(?:ant|proj|svcacct|admin|or-v1)-|gsk_|gh[pousr]_|github_pat_|pplx-|xox[abpors]-"
    rf"|AIza[{_URLSAFE}]{{35}}(?![{_URLSAFE}])"
)


@functools.cache
def _secret_pattern() -> re.Pattern[str]:
    """One pattern with a group per kind: a single pass over the text however many kinds
    there are. Each kind must start at a boundary (or right after ``/bot``: a bot API's path;
    or anywhere for a prefix of :data:`_GLUED`), so a key inside a longer token is not split
    (a key after a percent-escape is found in the
    percent-decoded view, :func:`.decode.texts`); the boundary and the first character are
    checked once, before any kind is tried, so that most positions of any text cost one
    comparison (about 1 MB in a quarter of a second)."""
    return re.compile(
        rf"(?=[{_FIRST_CHARACTERS}])(?:(?<![A-Za-z0-9_])|(?<=/bot)|(?={_GLUED}))(?:"
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


#: ``NAME=value`` lines of a dotenv or shell file (``OPENAI_API_KEY=...``, ``export HF_TOKEN=...``):
#: the file format says what the value is, whatever its shape. Upper-case names, as the
#: format's convention writes them; the value is one word of 12 characters or more.
_ASSIGNMENT = re.compile(
    r"^[ \t]*(?:export[ \t]+)?([A-Z][A-Z0-9_]{1,63})[ \t]*=[ \t]*([\"']?)([^\s\"'#$]{12,256})\2[ \t]*\r?$",
    re.MULTILINE,
)
#: What every such line holds: text without it holds none (one search in C).
_ASSIGNMENT_CLUE = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH)[ \t]*=")


def may_assign_credential(text: str) -> bool:
    """False when ``text`` holds no ``NAME=value`` line of a credential variable."""
    return _ASSIGNMENT_CLUE.search(text) is not None


def assigned_values(text: str, allowed: frozenset[str] = frozenset()) -> Iterator[tuple[str, str]]:
    """(kind, value) of each ``NAME=value`` line of a dotenv-style text whose name is a
    credential variable's (:func:`.names.is_environment_credential`): a file a request
    uploads or an answer returns. Never read in a string of a JSON body (what a model wrote)."""
    if not may_assign_credential(text):
        return
    for match in _ASSIGNMENT.finditer(text):
        name, value = match.group(1), match.group(3)
        if value in allowed or value.startswith("<redacted") or is_documented_example(value):
            continue
        if is_environment_credential(name):
            yield f"the value assigned to {name}", value

"""Credential names: the headers, query parameters and fields whose value is a credential.

Decided by meaning, not by a substring of the name: ``x-ratelimit-remaining-tokens``,
``x-amzn-bedrock-input-token-count`` and ``anthropic-ratelimit-input-tokens-remaining`` count
tokens, ``page_token`` and MCP's ``progressToken`` name a place in a list, ``idempotency-key``
names a retry; none is a credential, and each is something an SDK or a test reads. A name is
a credential name when it is in :data:`KNOWN_NAMES` (the exact list per provider and
protocol), or when its last word says so (:func:`is_credential_words`): ``openai_api_key``,
``xi-api-key``, ``x-portkey-virtual-key``, ``access_key``, ``private_token``,
``helicone-auth``, ``client_secret``, ``set-cookie``. The last-word rule is there for the
provider nobody listed yet.

Short names (``key``, ``token``, ``auth``) are credentials only where nothing else could be
meant: a query parameter, a header, a form field, the top of a JSON body. Deep in a document
``token`` is a logprob's token and ``key`` a metadata pair's name. ``code``, ``sig`` and
``signature`` are credentials in a URL (OAuth, signed URLs) and nowhere else: an Anthropic
thinking block's ``signature`` must replay as it was.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "KNOWN_NAMES",
    "SECRET_BODY_FIELDS",
    "SECRET_QUERY_PARAMS",
    "environment_credentials",
    "is_credential_words",
    "is_secret_field",
    "is_secret_header",
    "is_secret_param",
    "words_pattern",
]

#: The exact credential names, per provider and protocol, as each documents them (compared
#: in lower case). ``openai-organization`` and ``openai-project`` are not here: they name an
#: account, they do not open it.
KNOWN_NAMES: dict[str, frozenset[str]] = {
    "http": frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"}),
    "openai": frozenset({"authorization", "openai_api_key", "api_key"}),
    "azure": frozenset({"api-key", "ocp-apim-subscription-key", "subscription-key", "x-functions-key"}),
    "anthropic": frozenset({"x-api-key", "anthropic_api_key"}),
    "google": frozenset({"x-goog-api-key", "key", "x-goog-signature", "x-goog-credential"}),
    "aws": frozenset(
        {"x-amz-security-token", "x-amz-signature", "x-amz-credential", "awsaccesskeyid", "signature"}
        | {"aws_secret_access_key", "secret_access_key", "secretaccesskey", "session_token"}
    ),
    "azure-storage": frozenset({"sig"}),
    "elevenlabs": frozenset({"xi-api-key", "xi_api_key"}),
    "gitlab": frozenset({"private-token", "private_token"}),
    "gateways": frozenset(
        {"x-portkey-api-key", "x-portkey-virtual-key", "helicone-auth", "cf-aig-authorization"}
        | {"x-litellm-api-key", "x-auth-token", "x-access-token", "x-subscription-token", "apikey"}
    ),
    "oauth": frozenset(
        {"access_token", "refresh_token", "id_token", "client_secret", "code", "password", "assertion"}
    ),
    "mcp": frozenset({"authorization", "api_key", "token"}),
}
_KNOWN = frozenset().union(*KNOWN_NAMES.values())
#: Names from the lists above that mean a credential only in a URL.
_URL_ONLY = frozenset({"code", "sig", "signature"})
#: Names from the lists above that mean a credential only where nothing else could be meant.
_SHORT = frozenset({"key", "token", "auth", "secret", "code", "sig", "signature", "assertion"})

#: Last words that make a name a credential whatever comes before them.
_ALWAYS = frozenset(
    {"password", "passwd", "passphrase", "secret", "authorization", "cookie", "credential", "credentials"}
    | {"auth"}
)
#: ``..._key`` and ``..._token`` are credentials unless the word before says what else they are.
_NOT_A_CREDENTIAL_BEFORE = {
    "key": frozenset(
        {"idempotency", "cache", "partition", "sort", "primary", "public", "foreign", "object", "row"}
        | {"dedup", "dedupe", "deduplication", "routing", "shard", "group", "lookup", "hash", "unique"}
        | {"item", "file", "storage", "blob", "bucket", "s3", "prompt", "cursor", "order", "map", "index"}
        | {"entity", "record", "message", "event", "trace", "span", "run", "task", "job", "thread"}
        | {"field", "column", "table", "property", "attribute", "label", "tag", "name", "metric", "hot"}
        | {"dimension", "translation", "i18n", "schema", "state", "conversation", "response", "request"}
    ),
    "token": frozenset(
        {"page", "next", "prev", "previous", "continuation", "cursor", "sync", "pagination", "start"}
        | {"end", "stop", "special", "bos", "eos", "pad", "unk", "sep", "cls", "mask", "input", "output"}
        | {"prompt", "completion", "total", "max", "min", "first", "last", "image", "audio", "text"}
        | {"cached", "reasoning", "thinking", "cancellation", "cancel", "idempotency", "request"}
        | {"trace", "span", "progress", "resume", "eot", "word", "chunk", "stream", "delta", "new", "vocab"}
    ),
}
#: One-word spellings of two words (``apikey``, ``accessToken`` lowered).
_COMPOUND = re.compile(
    r"(api|access|auth|secret|private|refresh|id|session|bearer|client|subscription)(key|token|secret)"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[-_.\s]+")


def _words(name: str) -> list[str]:
    words = [w for w in _SEPARATORS.split(_CAMEL.sub("_", name).lower()) if w]
    if words and (compound := _COMPOUND.fullmatch(words[-1])) is not None:
        words[-1:] = [compound.group(1), compound.group(2)]
    return words


@functools.lru_cache(maxsize=4096)  # the same few names in every request and response
def is_credential_words(name: str, *, short: bool = False) -> bool:
    """Whether the last word of ``name`` makes it a credential (see above); a one-word
    ``key``/``token`` only when ``short`` (where nothing else could be meant)."""
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    if last in _ALWAYS:
        return len(words) > 1 or short or last != "auth"
    if last in _NOT_A_CREDENTIAL_BEFORE:
        if len(words) == 1:
            return short
        return words[-2] not in _NOT_A_CREDENTIAL_BEFORE[last]
    return False


@functools.lru_cache(maxsize=4096)
def _is_credential(lowered: str, *, url: bool, short: bool) -> bool:
    if lowered in _KNOWN and (url or lowered not in _URL_ONLY) and (short or lowered not in _SHORT):
        return True
    return is_credential_words(lowered, short=short)


def is_secret_header(name: str) -> bool:
    """Whether a header's value is a credential (``authorization``, ``x-api-key``, ``cookie``...)."""
    lowered = name.lower()
    return lowered not in _NOT_SECRET_HEADERS and _is_credential(lowered, url=False, short=True)


#: Headers whose last word reads like a credential but that hold none: an MCP server's session
#: id, and CORS's ``access-control-allow-credentials: true`` (Azure and OpenAI send it).
_NOT_SECRET_HEADERS = frozenset({"mcp-session-id", "access-control-allow-credentials"})


def is_secret_param(name: str) -> bool:
    """Whether a query parameter's (or form or multipart field's) value is a credential."""
    return _is_credential(name.lower(), url=True, short=True)


def is_secret_field(key: Any, top: bool) -> bool:
    """Whether a JSON field's value is a credential; short names count at the ``top`` only."""
    return isinstance(key, str) and _is_credential(key.lower(), url=False, short=top)


#: Every exact query-parameter name of :data:`KNOWN_NAMES`: the matching rule that leaves
#: credentials out of a key is built from it (:func:`is_secret_param` also decides by words).
SECRET_QUERY_PARAMS = _KNOWN
#: Every exact body-field name of :data:`KNOWN_NAMES` (see :data:`SECRET_QUERY_PARAMS`).
SECRET_BODY_FIELDS = _KNOWN - _URL_ONLY


def words_pattern(words: Iterable[str]) -> str:
    """A pattern matching any of ``words``, as a trie (one alternative per first character):
    one pass over a text that tries a few characters at each position, about twice as fast
    as a substring search per word."""
    root: dict[str, Any] = {}
    for word in sorted(words):
        node = root
        for character in word:
            node = node.setdefault(character, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(character) + pattern(child) for character, child in node.items() if character]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


#: The end of every credential name as JSON writes a key, lower-cased (``api_key"``,
#: ``apikey"``, ``password"``): text without one names no credential field.
NAME_ENDINGS = frozenset({*_ALWAYS, "key", "token", *_KNOWN})


def environment_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    """Credential variables of an environment worth looking for: name -> value.

    ``OPENAI_API_KEY``, ``AZURE_OPENAI_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``HF_TOKEN``,
    ``DB_PASSWORD``: named like a credential by the rule of :func:`is_credential_words`,
    so ``MAX_TOKENS`` and ``SORT_KEY`` are not. A path is not a credential."""
    found = {}
    for name, value in environ.items():
        stripped = value.strip()
        if len(stripped) < _MIN_ENV_VALUE_LENGTH or stripped[:1] in ("/", "~", "."):
            continue
        if is_credential_words(name, short=False):
            found[name] = stripped
    return found


#: Shorter values are too likely to occur by chance ("true", "1234") to be worth a finding.
_MIN_ENV_VALUE_LENGTH = 12

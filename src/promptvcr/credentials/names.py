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
meant: a query parameter, a header, a form field, the top of a JSON body. ``code``, ``sig``
and ``signature`` are credentials in a URL (OAuth, signed URLs) and nowhere else: an
Anthropic thinking block's ``signature`` must replay as it was.

A JSON body's fields are credentials by name only where a name's meaning is known: at the
top of the body (the API's own parameters: an OAuth token exchange, a gateway's
``api_key``) and in the containers of :data:`CREDENTIAL_CONTAINERS` (a gateway's provider
list, LiteLLM's ``litellm_params``). Never deeper: there sit what a model or a tool produced
(message content, tool-call arguments such as ``{"style": "symphony", "key": "D major"}``,
tool results), and a JSON document inside a string is text, not a body. There a credential is
found by value (sent as one, or in the environment) or by shape (:mod:`.keyshapes`).

The last-word rule for a name nobody listed is strict (:func:`is_credential_words`): the last
two words must name a credential (``api_key``, ``access-token``, ``virtual-key``) or the
last word must be one that always does (``password``, ``secret``, ``cookie``). A name that
merely ends in ``key`` or ``token`` (``x-ratelimit-key``, ``x-time-per-token``,
``google-auth``) is no credential. The environment's variable names are read with the older,
looser rule (:func:`is_environment_credential`): a value found there is looked for by value,
which changes nothing that does not equal it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "CREDENTIAL_CONTAINERS",
    "KNOWN_NAMES",
    "SECRET_BODY_FIELDS",
    "SECRET_QUERY_PARAMS",
    "environment_credentials",
    "is_credential_words",
    "is_environment_credential",
    "is_secret_field",
    "is_secret_header",
    "is_secret_param",
    "reading_of",
    "reads_field",
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
)
#: ``<word> key`` and ``<word> token`` that name a credential (the strict rule: the word
#: before must say so; ``x-ratelimit-key`` names a deployment, ``x-time-per-token`` a speed).
_CREDENTIAL_BEFORE = {
    "key": frozenset(
        {"api", "access", "secret", "private", "subscription", "virtual", "master", "account", "admin"}
        | {"signing", "encryption", "license", "client", "service", "functions", "auth", "session"}
    ),
    "token": frozenset(
        {"access", "refresh", "id", "auth", "session", "bearer", "api", "private", "security", "oauth"}
        | {"personal", "csrf", "xsrf", "subscription", "identity", "jwt", "sas", "client", "bot"}
    ),
}
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
    """Whether the last words of ``name`` make it a credential by the strict rule (see above);
    a one-word ``key``/``token``/``auth`` only when ``short`` (where nothing else could be meant)."""
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    if len(words) == 1:
        return short and (last in _ALWAYS or last in _CREDENTIAL_BEFORE or last == "auth")
    if last in _ALWAYS:
        return True
    return last in _CREDENTIAL_BEFORE and words[-2] in _CREDENTIAL_BEFORE[last]


@functools.lru_cache(maxsize=4096)
def is_environment_credential(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential: ``OPENAI_API_KEY``,
    ``AZURE_OPENAI_KEY``, ``HF_TOKEN``, ``DB_PASSWORD``, not ``MAX_TOKENS`` or ``SORT_KEY``.
    Looser than :func:`is_credential_words` on purpose: its value is looked for by value."""
    words = _words(name)
    if not words:
        return False
    last = words[-1]
    if last in _ALWAYS:
        return True
    if last == "auth":
        return len(words) > 1
    if last in _NOT_A_CREDENTIAL_BEFORE:
        return len(words) > 1 and words[-2] not in _NOT_A_CREDENTIAL_BEFORE[last]
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
    """Whether a JSON field's value is a credential at the top of a body (``top``; deeper,
    see :func:`reads_field`)."""
    return top and isinstance(key, str) and _is_credential(key.lower(), url=False, short=True)


#: How the fields of a container are read by name (see :func:`reading_of`).
TOP = "top"  #: the top of a body, or a container of CREDENTIAL_CONTAINERS: every credential name
DEEP = "deep"  #: elsewhere in a request: names by the strict rule, no short one (``key``)
NONE = ""  #: what a model or a tool produced, and an answer below its top: no name counts

#: Containers of a JSON body whose fields are read like the top's: configurations an SDK or
#: gateway sends, where a field named like a credential is one. ``providers``/``targets``: a
#: gateway's upstreams (Portkey's config); ``litellm_params``/``credential_values``: LiteLLM's
#: proxy API; ``auth``/``credentials``: a client's login block.
CREDENTIAL_CONTAINERS = frozenset(
    {"auth", "credentials", "providers", "targets", "litellm_params", "credential_values", "client_secret"}
)
#: Fields that are credentials only inside one container: OpenAI's realtime session answer
#: holds its ephemeral key as ``client_secret.value``.
_ONLY_INSIDE = {"client_secret": frozenset({"value"})}

#: Fields whose value is what a model or a tool produced, or the conversation that carries
#: it, per protocol: OpenAI chat (``messages``, ``tool_calls``, ``function_call``,
#: ``arguments``, ``content``), Responses (``input``, ``output``, ``item``), Anthropic
#: (``messages``, ``system``, ``content``, ``input``), Gemini (``contents``, ``parts``,
#: ``functionCall.args``, ``functionResponse``, ``systemInstruction``), Bedrock Converse
#: (``toolUse``, ``toolResult``), Cohere (``chat_history``, ``documents``), Ollama
#: (``prompt``, ``response``), MCP (``params.arguments``, ``result``), realtime
#: (``item``, ``delta``). No field inside them is read by name.
MODEL_PLACES = frozenset(
    {"messages", "message", "contents", "content", "parts", "input", "inputs", "output", "outputs"}
    | {"system", "systeminstruction", "system_instruction", "instructions", "prompt", "prompts"}
    | {"tool_calls", "toolcalls", "function_call", "functioncall", "functionresponse", "function_response"}
    | {"arguments", "args", "tooluse", "toolresult", "tool_use", "tool_result", "tool_results", "result"}
    | {"results", "chat_history", "history", "documents", "conversation", "item", "items", "delta"}
    | {"choices", "candidates", "response", "text", "completion", "generated_text", "examples"}
)


def reading_of(key: Any, reading: str, *, request: bool) -> str:
    """How the fields of the container under ``key`` are read, in a container read as
    ``reading``: a request's containers by the strict rule, an answer's not at all (but
    :data:`CREDENTIAL_CONTAINERS`), nothing inside :data:`MODEL_PLACES`."""
    if reading == NONE or not isinstance(key, str):
        return NONE
    lowered = key.lower()
    if lowered in CREDENTIAL_CONTAINERS:
        return TOP
    if lowered in MODEL_PLACES or not request:
        return NONE
    return DEEP


def reads_field(key: Any, parent: str, reading: str) -> bool:
    """Whether ``key`` is a credential field in a container read as ``reading`` (``parent``:
    the field the container sits under, ``""`` at the top of a body)."""
    if reading == NONE or not isinstance(key, str):
        return False
    lowered = key.lower()
    if (only := _ONLY_INSIDE.get(parent.lower())) is not None:
        return lowered in only
    if reading == TOP:
        return _is_credential(lowered, url=False, short=True)
    return _is_credential(lowered, url=False, short=False) and lowered not in _SHORT


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
NAME_ENDINGS = frozenset({*_ALWAYS, "auth", "key", "token", *_KNOWN})


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
        if is_environment_credential(name):
            found[name] = stripped
    return found


#: Shorter values are too likely to occur by chance ("true", "1234") to be worth a finding.
_MIN_ENV_VALUE_LENGTH = 12

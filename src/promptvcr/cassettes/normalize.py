"""A request's key: what the request means, not how its bytes happened to be laid out.

The key is built from method, URL path, the meaningful query parameters and the body,
parsed and re-serialized canonically (sorted keys, no whitespace, ``1.0`` written as
``1``). Headers and the host are not part of it: the same call to a proxy or to a
loopback test server is the same call. The parts then pass through *rules*, plain
functions ``KeyParts -> KeyParts`` that drop what changes every run without changing the
answer. Users add their own by passing ``rules=[*DEFAULT_RULES, my_rule]``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .models import Request
from .redact import SECRET_BODY_FIELDS, SECRET_QUERY_PARAMS

__all__ = [
    "DEFAULT_RULES",
    "VOLATILE_BODY_FIELDS",
    "KeyParts",
    "Rule",
    "drop_body_fields",
    "drop_query_params",
    "key_parts",
    "request_key",
]


@dataclass(frozen=True, slots=True)
class KeyParts:
    """The parts of a request that its key is made of, before hashing.

    ``body`` is the parsed JSON value, the sorted pairs of a form, the text of a text
    body, ``{"sha256": ...}`` for a binary one, or ``None`` when there is no body.
    """

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    body: Any

    def canonical(self) -> str:
        return json.dumps(
            [self.method, self.path, self.query, self.body],
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
            default=repr,
        )


Rule = Callable[[KeyParts], KeyParts]


def _number(text: str) -> int | float:
    """JSON numbers by value: ``1``, ``1.0`` and ``1e0`` are the same number."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def _parse_body(request: Request) -> Any:
    content = request.content
    if not content:
        return None
    content_type = request.content_type
    if "json" in content_type or content.lstrip()[:1] in (b"{", b"["):
        try:
            return json.loads(content, parse_float=_number)
        except (ValueError, RecursionError):
            pass
    if content_type == "application/x-www-form-urlencoded":
        try:
            return sorted(parse_qsl(content.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            pass
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return {"sha256": hashlib.sha256(content).hexdigest()}


def key_parts(request: Request) -> KeyParts:
    """The raw parts of a request's key, before any rule."""
    url = urlsplit(request.url)
    query = tuple(sorted(parse_qsl(url.query, keep_blank_values=True)))
    return KeyParts(request.method.upper(), url.path or "/", query, _parse_body(request))


def drop_query_params(names: Iterable[str]) -> Rule:
    """A rule that leaves the named query parameters out of the key (case-insensitive)."""
    dropped = frozenset(name.lower() for name in names)

    def rule(parts: KeyParts) -> KeyParts:
        if not any(k.lower() in dropped for k, _ in parts.query):
            return parts
        return replace(parts, query=tuple((k, v) for k, v in parts.query if k.lower() not in dropped))

    rule.__name__ = f"drop_query_params({', '.join(sorted(dropped))})"
    return rule


def drop_body_fields(names: Iterable[str]) -> Rule:
    """A rule that leaves top-level fields of a JSON object (or form) body out of the key."""
    dropped = frozenset(names)

    def rule(parts: KeyParts) -> KeyParts:
        body = parts.body
        if isinstance(body, dict) and not dropped.isdisjoint(body):
            return replace(parts, body={k: v for k, v in body.items() if k not in dropped})
        if isinstance(body, list) and body and isinstance(body[0], tuple):
            return replace(parts, body=[(k, v) for k, v in body if k not in dropped])
        return parts

    rule.__name__ = f"drop_body_fields({', '.join(sorted(dropped))})"
    return rule


#: Body fields that identify the caller or a cache slot, not the question asked:
#: OpenAI's ``user``, ``safety_identifier`` and ``prompt_cache_key``; OpenAI's and
#: Anthropic's ``metadata`` (``metadata.user_id`` is a per-user id).
VOLATILE_BODY_FIELDS = frozenset({"user", "metadata", "safety_identifier", "prompt_cache_key"})

#: The rules every cassette uses unless given ``rules=``. Credentials never take part in a
#: key (they are redacted from the file, so a stored request could not match otherwise).
DEFAULT_RULES: tuple[Rule, ...] = (
    drop_query_params(SECRET_QUERY_PARAMS),
    drop_body_fields(SECRET_BODY_FIELDS | VOLATILE_BODY_FIELDS),
)


def request_key(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> str:
    """The key a request is stored and looked up under."""
    parts = key_parts(request)
    for rule in rules:
        parts = rule(parts)
    return hashlib.blake2b(parts.canonical().encode("utf-8"), digest_size=16).hexdigest()

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
from collections.abc import Iterable, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from .keyparts import KeyParts, Rule, key_parts
from .models import Request
from .redact import SECRET_BODY_FIELDS, SECRET_QUERY_PARAMS
from .rules import (
    anthropic_beta_query,
    base64_digests,
    default_tool_type,
    google_empty_config,
    google_field_names,
    google_repeated_tools,
    google_schema_types,
    nfc_text,
    rules_for,
    single_text_part,
    tool_call_ids,
    vertex_project_location,
)

__all__ = [
    "DEFAULT_RULES",
    "VOLATILE_BODY_FIELDS",
    "KeyParts",
    "Rule",
    "apply_rules",
    "drop_body_fields",
    "drop_query_params",
    "key_parts",
    "request_key",
]


def drop_query_params(names: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that leaves the named query parameters out of the key (case-insensitive)."""
    dropped = frozenset(name.lower() for name in names)

    def rule(parts: KeyParts) -> KeyParts:
        if not any(k.lower() in dropped for k, _ in parts.query):
            return parts
        return replace(parts, query=tuple((k, v) for k, v in parts.query if k.lower() not in dropped))

    rule.__name__ = name or f"drop_query_params({', '.join(sorted(dropped))})"
    return rule


def drop_body_fields(names: Iterable[str], *, name: str | None = None) -> Rule:
    """A rule that leaves top-level fields of a JSON object (or form) body out of the key."""
    dropped = frozenset(names)

    def rule(parts: KeyParts) -> KeyParts:
        body = parts.body
        if isinstance(body, dict) and not dropped.isdisjoint(body):
            return replace(parts, body={k: v for k, v in body.items() if k not in dropped})
        if isinstance(body, list) and body and isinstance(body[0], tuple):
            return replace(parts, body=[(k, v) for k, v in body if k not in dropped])
        return parts

    rule.__name__ = name or f"drop_body_fields({', '.join(sorted(dropped))})"
    return rule


#: Body fields that identify the caller or a cache slot, not the question asked:
#: OpenAI's ``user``, ``safety_identifier`` and ``prompt_cache_key``; OpenAI's and
#: Anthropic's ``metadata`` (``metadata.user_id`` is a per-user id).
VOLATILE_BODY_FIELDS = frozenset({"user", "metadata", "safety_identifier", "prompt_cache_key"})

#: The rules every cassette uses unless given ``rules=`` (or new defaults with
#: :func:`~promptvcr.cassettes.rules.set_default_rules`), in order. Credentials never take
#: part in a key: they are redacted from the file, so a stored request could not match.
DEFAULT_RULES: tuple[Rule, ...] = (
    drop_query_params(SECRET_QUERY_PARAMS, name="drop_credential_query_params"),
    drop_body_fields(SECRET_BODY_FIELDS | VOLATILE_BODY_FIELDS, name="drop_credential_and_caller_fields"),
    anthropic_beta_query,
    vertex_project_location,
    google_field_names,
    google_repeated_tools,
    google_empty_config,
    google_schema_types,
    default_tool_type,
    single_text_part,
    tool_call_ids,
    base64_digests,
    nfc_text,
)


def apply_rules(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> KeyParts:
    """The parts of a request's key after the rules that apply to its host and path."""
    url = urlsplit(request.url)
    parts = key_parts(request)
    for rule in rules_for(rules, url.netloc, url.path):
        parts = rule(parts)
    return parts


def request_key(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> str:
    """The key a request is stored and looked up under."""
    canonical = apply_rules(request, rules).canonical()
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=16).hexdigest()

"""Credentials take no part in a key: a stored request holds placeholders where they were.

Redaction replaces a credential with ``<redacted:...>`` wherever it sits (a header, a query
parameter, ``providers[0].api_key``, an MCP tool's ``authorization`` argument, a form field,
a websocket frame), so the live request, which holds the real value, must be keyed without
it too, or the recording would never replay. Credentials are found by the names of
:mod:`promptvcr.credentials.names`, the same decision recording takes; a placeholder left
where no name says so is left out too.

Free for a request that holds no credential: its raw bytes are searched (in C) for the end
of a credential name and for a placeholder first, and only a hit walks the parsed body.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ...credentials.bodyfields import DROP, walk_fields
from ...credentials.names import NAME_ENDINGS, is_secret_param, words_pattern
from ...credentials.placeholder import PREFIX, is_placeholder
from ..parts import KeyParts, Rule

__all__ = ["drop_credential_params", "drop_credentials", "without_credentials"]

#: The end of a credential name followed by the end of a JSON key or a form name, in bytes
#: lower-cased (``api_key"``, ``password=``), or a placeholder.
_MAY_HOLD = re.compile(("(?:" + words_pattern(NAME_ENDINGS) + r')\\?(?:"|=)|' + PREFIX).encode())


def may_hold_credential(raw: bytes) -> bool:
    """Whether a body's bytes may name a credential field or hold a placeholder."""
    return _MAY_HOLD.search(raw.lower()) is not None


def without_credentials(value: Any, *, named: bool = True) -> Any:
    """A parsed request body without its credential fields (where recording reads names: see
    :mod:`promptvcr.credentials.bodyfields`) and placeholders; ``value`` itself when it holds none.
    ``named=False``: placeholders only."""
    if named:
        value = walk_fields(value, _dropped, request=True)
    return _without_placeholders(value)


def _dropped(name: str, value: Any) -> Any:
    return DROP


def _without_placeholders(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _without_placeholders(v) for k, v in value.items() if not is_placeholder(v)}
        return value if len(out) == len(value) and all(out[k] is value[k] for k in out) else out
    if isinstance(value, list):
        items = [_without_placeholders(item) for item in value if not is_placeholder(item)]
        same = len(items) == len(value) and all(new is old for new, old in zip(items, value, strict=True))
        return value if same else items
    return value


def _form(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in pairs if not is_secret_param(k) and not is_placeholder(v)]


def drop_credential_params(*, name: str | None = None) -> Rule:
    """A rule that leaves credential query parameters, and placeholders, out of the key."""

    def rule(parts: KeyParts) -> KeyParts:
        query = parts.query
        if query and any(is_secret_param(k) or is_placeholder(v) for k, v in query):
            return replace(parts, query=tuple(_form(query)))
        return parts

    rule.__name__ = name or "drop_credential_params"
    return rule


def drop_credentials(*, also: Iterable[str] = (), name: str | None = None) -> Rule:
    """A rule that leaves every credential and placeholder of the body out of the key: form
    and multipart fields by name, JSON fields at any depth; and the top-level fields ``also``
    names (the caller's id: ``user``, ``metadata``...)."""
    caller = frozenset(also)

    def rule(parts: KeyParts) -> KeyParts:
        body = parts.body
        if isinstance(body, dict) and not caller.isdisjoint(body):
            body = {k: v for k, v in body.items() if k not in caller}
        elif isinstance(body, list) and body and isinstance(body[0], tuple):
            body = _form(pair for pair in body if pair[0] not in caller)
        if isinstance(body, (dict, list)) and (not parts.raw or may_hold_credential(parts.raw)):
            if isinstance(body, dict) and isinstance(body.get("multipart"), list):
                entries = [e for e in body["multipart"] if not is_secret_param(str(e.get("name", "")))]
                body = {**body, "multipart": without_credentials(entries, named=False)}
            elif not (isinstance(body, list) and body and isinstance(body[0], tuple)):
                body = without_credentials(body)
        return parts if body is parts.body else replace(parts, body=body)

    rule.__name__ = name or "drop_credentials"
    return rule

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
from collections.abc import Sequence
from urllib.parse import urlsplit

from ..cassettes.models import Request
from .parts import KeyParts, Rule, key_parts
from .rules import DEFAULT_RULES
from .select import rules_for

__all__ = ["apply_rules", "request_key"]


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

"""A request's key: what the request means, not how its bytes happened to be laid out.

The key is built from method, URL path, the meaningful query parameters and the body,
parsed and re-serialized canonically (sorted keys, no whitespace, ``1.0`` written as
``1``). Headers and the host are not part of it: the same call to a proxy or to a
loopback test server is the same call. The parts then pass through *rules*, plain
functions ``KeyParts -> KeyParts`` that drop what changes every run without changing the
answer. Users add their own by passing ``rules=[*DEFAULT_RULES, my_rule]``.

A key depends only on the rules, the method, the URL, the content-type header and the
body bytes, so it is computed once per distinct request: :func:`request_key` remembers
it by those (the bytes hashed as they are), and canonicalizes only a body it has not seen.
The tape computes the key of each recorded request as far as its requests need (see
:mod:`.tape`), so a request sent with the bytes it was recorded with is then a dictionary
look-up. A large cassette read from the parse cache brings the keys computed when all of
them were first (under the default rules: see :func:`known_keys`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from ..cassettes.models import Interaction, LazyRequest, Request
from ..files.loaded import LoadedInteractions
from .parts import KeyParts, Rule, parts_of
from .rules import DEFAULT_RULES
from .select import rules_for

__all__ = ["apply_rules", "computed_key", "known_keys", "offer_keys", "request_key", "sent_content_type"]

#: How many keys are remembered (all rules together) before the memory starts over.
_MEMORY_SIZE = 50_000
#: How many body bytes the memory may hold (most are a loaded cassette's own) before it starts over.
_MEMORY_BYTES = 256 << 20
_memory_bytes = 0
#: Bodies larger than this are hashed into the key every time, never held by the memory.
_MAX_REMEMBERED_BODY = 1 << 20

#: (id of the rules, method, url, content-type, body) -> the key: tuples and strings only, that
#: the garbage collector need not walk (a 10,000-interaction cassette remembers 10,000).
_memory: dict[tuple[int, str, str, str, bytes], str] = {}
#: The rules each id in :data:`_memory` stands for, held so that no other object takes the id.
_rules_by_id: dict[int, Sequence[Rule]] = {}


def apply_rules(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> KeyParts:
    """The parts of a request's key after the rules that apply to its host and path."""
    url = urlsplit(request.url)
    parts = parts_of(request, url)
    for rule in rules_for(rules, url.netloc, url.path):
        parts = rule(parts)
    return parts


def computed_key(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> str:
    """The key of ``request``, computed from scratch (what :func:`request_key` remembers)."""
    canonical = apply_rules(request, rules).canonical()
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=16).hexdigest()


def _memo(request: Request, rules: Sequence[Rule]) -> tuple[int, str, str, str, bytes] | None:
    """What :data:`_memory` knows ``request``'s key by; ``None`` for one never remembered."""
    content = request.content
    # Only an immutable set of rules can be remembered by identity (a list may change).
    if type(rules) is not tuple or len(content) > _MAX_REMEMBERED_BODY:
        return None
    return _memo_of(request.method, request.url, sent_content_type(request), content, rules)


def _memo_of(
    method: str, url: str, content_type: str, content: bytes, rules: Sequence[Rule]
) -> tuple[int, str, str, str, bytes] | None:
    """:func:`_memo` for a request given by its fields (a loaded one, not built: see .tape)."""
    if type(rules) is not tuple or len(content) > _MAX_REMEMBERED_BODY:
        return None
    if _rules_by_id.get(id(rules)) is not rules:
        if len(_rules_by_id) >= 64:  # forget every id before any may be reused
            _rules_by_id.clear()
            _memory.clear()
        _rules_by_id[id(rules)] = rules
    return (id(rules), method, url, content_type, content)


def sent_content_type(request: Request) -> str:
    """The ``content-type`` header as sent ("" without one): the one header a key depends on."""
    if type(request) is LazyRequest:
        return request.raw_content_type
    return request.headers.get("content-type", "")


def _remember(memo: tuple[int, str, str, str, bytes], key: str) -> None:
    global _memory_bytes
    if len(_memory) >= _MEMORY_SIZE or _memory_bytes > _MEMORY_BYTES:
        _memory.clear()
        _memory_bytes = 0
    _memory[memo] = key
    _memory_bytes += len(memo[4])


def request_key(request: Request, rules: Sequence[Rule] = DEFAULT_RULES) -> str:
    """The key a request is stored and looked up under."""
    memo = _memo(request, rules)
    if memo is None:
        return computed_key(request, rules)
    key = _memory.get(memo)
    if key is None:
        key = computed_key(request, rules)
        _remember(memo, key)
    return key


@cache
def _token() -> bytes:
    """Names the code that computes keys under :data:`DEFAULT_RULES`: every source file of
    this package (name, size, modification time), so that keys kept are never stale."""
    here = Path(__file__).resolve().parent
    parts = []
    for folder in (here, here / "rules"):
        with contextlib.suppress(OSError):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    parts.append(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=16).digest()


def known_keys(
    interactions: Sequence[Interaction], rules: Sequence[Rule] = DEFAULT_RULES
) -> list[str] | None:
    """The key of every interaction's request as a parse cache entry brought them (see
    :mod:`..files.parsecache`: a cassette read before under the default rules), each
    remembered as :func:`request_key` does; ``None`` when none were brought."""
    if type(interactions) is not LoadedInteractions or rules is not DEFAULT_RULES:
        return None
    keys = interactions.keys(_token())
    if keys is None:
        return None
    for (method, url, content_type, content), key in zip(interactions.request_fields(), keys, strict=True):
        memo = _memo_of(method, url, content_type, content, rules)
        if memo is not None and memo not in _memory:
            _remember(memo, key)
    return list(keys)


def offer_keys(interactions: Sequence[Interaction], rules: Sequence[Rule], keys: list[str]) -> None:
    """Offer every interaction's key, all computed, to the parse cache entry they were read
    from (under the default rules), so that the next read brings them (:func:`known_keys`)."""
    if type(interactions) is LoadedInteractions and rules is DEFAULT_RULES:
        interactions.offer_keys(_token(), keys)

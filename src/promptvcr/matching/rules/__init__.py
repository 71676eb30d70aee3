"""Normalization rules: small named functions ``KeyParts -> KeyParts``, composed in order.

Each rule's docstring names the real case it exists for. Rules marked with
:func:`for_families` run only for that provider family's requests. This module holds the
default list and the public ways to change it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..parts import Rule
from ..select import family_of, for_families, rule_name, rules_for
from .binary import base64_digests
from .defaults import empty_defaults
from .fields import drop_body_fields, drop_query_params
from .google import google_empty_config, google_field_names, google_repeated_tools, google_schema_types
from .ids import tool_call_ids
from .mcp import jsonrpc_ids, mcp_session_ids
from .provider import anthropic_beta_query, default_tool_type, drop_seed, vertex_project_location
from .redacted import drop_credential_params, drop_credentials
from .text import nfc_text, single_text_part
from .toolresults import parallel_tool_results

__all__ = [
    "DEFAULT_RULES",
    "VOLATILE_BODY_FIELDS",
    "anthropic_beta_query",
    "base64_digests",
    "default_rules",
    "default_tool_type",
    "drop_body_fields",
    "drop_credential_params",
    "drop_credentials",
    "drop_query_params",
    "drop_seed",
    "edit_rules",
    "empty_defaults",
    "family_of",
    "for_families",
    "google_empty_config",
    "google_field_names",
    "google_repeated_tools",
    "google_schema_types",
    "jsonrpc_ids",
    "mcp_session_ids",
    "nfc_text",
    "parallel_tool_results",
    "rule_name",
    "rules_for",
    "set_default_rules",
    "single_text_part",
    "tool_call_ids",
    "vertex_project_location",
]

#: Body fields that identify the caller or a cache slot, not the question asked:
#: OpenAI's ``user``, ``safety_identifier`` and ``prompt_cache_key``; OpenAI's and
#: Anthropic's ``metadata`` (``metadata.user_id`` is a per-user id).
VOLATILE_BODY_FIELDS = frozenset({"user", "metadata", "safety_identifier", "prompt_cache_key"})

#: The rules every cassette uses unless given ``rules=`` (or new defaults with
#: :func:`set_default_rules`), in order. Credentials never take
#: part in a key, wherever they sit: they are redacted from the file, so a stored request
#: could not match (see :mod:`.redacted`).
DEFAULT_RULES: tuple[Rule, ...] = (
    drop_credential_params(name="drop_credential_query_params"),
    drop_credentials(also=VOLATILE_BODY_FIELDS, name="drop_credential_and_caller_fields"),
    empty_defaults,
    anthropic_beta_query,
    vertex_project_location,
    google_field_names,
    google_repeated_tools,
    google_empty_config,
    google_schema_types,
    default_tool_type,
    single_text_part,
    tool_call_ids,
    parallel_tool_results,
    base64_digests,
    nfc_text,
    jsonrpc_ids,
    mcp_session_ids,
)


def edit_rules(
    base: Iterable[Rule] | None = None,
    *,
    add: Iterable[Rule] = (),
    remove: Iterable[str] = (),
    replace: Mapping[str, Rule] | None = None,
) -> tuple[Rule, ...]:
    """A new rule list: ``base`` (the current defaults when omitted) with rules removed and
    replaced by name, then ``add`` appended. Unknown names are an error, so a typo does
    not silently keep a rule you meant to drop."""
    rules = list(default_rules() if base is None else base)
    names = [rule_name(r) for r in rules]
    unknown = [n for n in [*remove, *(replace or {})] if n not in names]
    if unknown:
        raise ValueError(f"No rule named {', '.join(map(repr, unknown))}; the rules are: {', '.join(names)}.")
    dropped = set(remove)
    swaps = dict(replace or {})
    edited = [swaps.get(rule_name(r), r) for r in rules if rule_name(r) not in dropped]
    return (*edited, *add)


_defaults: list[tuple[Rule, ...]] = []


def default_rules() -> tuple[Rule, ...]:
    """The rules a cassette uses when given none: :data:`DEFAULT_RULES` unless changed
    globally with :func:`set_default_rules`."""
    return _defaults[-1] if _defaults else DEFAULT_RULES


def set_default_rules(rules: Iterable[Rule] | None) -> None:
    """Change the rules of every cassette created from now on (``None`` restores the
    built-in defaults), e.g. once in ``conftest.py``."""
    _defaults.clear()
    if rules is not None:
        _defaults.append(tuple(rules))

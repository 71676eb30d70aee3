"""Normalization rules: small named functions ``KeyParts -> KeyParts``, composed in order.

Each rule's docstring names the real case it exists for. Rules marked with
:func:`for_families` run only for that provider family's requests.
"""

from .binary import base64_digests
from .google import google_empty_config, google_field_names, google_repeated_tools, google_schema_types
from .ids import tool_call_ids
from .provider import anthropic_beta_query, default_tool_type, drop_seed, vertex_project_location
from .select import (
    default_rules,
    edit_rules,
    family_of,
    for_families,
    rule_name,
    rules_for,
    set_default_rules,
)
from .text import nfc_text, single_text_part

__all__ = [
    "anthropic_beta_query",
    "base64_digests",
    "default_rules",
    "default_tool_type",
    "drop_seed",
    "edit_rules",
    "family_of",
    "for_families",
    "google_empty_config",
    "google_field_names",
    "google_repeated_tools",
    "google_schema_types",
    "nfc_text",
    "rule_name",
    "rules_for",
    "set_default_rules",
    "single_text_part",
    "tool_call_ids",
    "vertex_project_location",
]

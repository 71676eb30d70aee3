"""Why two requests match or not, shown: each interaction's key input after the rules.

For each interaction: its key, its provider family, the rules that changed something,
the other interactions that share its key (they replay in recorded order), and the
normalized key input, indented, with long strings shortened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from .keyparts import KeyParts, Rule, key_parts
from .models import Interaction
from .normalize import DEFAULT_RULES, request_key
from .rules import family_of, rule_name, rules_for

__all__ = ["explain_interactions"]

_LONG_STRING = 200


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _LONG_STRING:
        return f"{value[:_LONG_STRING]}... ({len(value)} characters)"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shorten(v) for v in value]
    return value


def _input(parts: KeyParts, *, full: bool) -> str:
    data = {
        "method": parts.method,
        "path": parts.path,
        "query": [list(q) for q in parts.query],
        "body": parts.body,
    }
    return json.dumps(
        data if full else _shorten(data), indent=2, sort_keys=True, ensure_ascii=False, default=repr
    )


def explain_interactions(
    interactions: Sequence[Interaction], rules: Sequence[Rule] = DEFAULT_RULES, *, full: bool = False
) -> str:
    """One block per interaction; ``full`` keeps long strings whole."""
    keys = [request_key(i.request, rules) for i in interactions]
    blocks = []
    for position, interaction in enumerate(interactions):
        request = interaction.request
        url = urlsplit(request.url)
        parts = key_parts(request)
        changed = []
        for rule in rules_for(rules, url.netloc, url.path):
            after = rule(parts)
            if after != parts:
                changed.append(rule_name(rule))
            parts = after
        family = family_of(url.netloc, url.path) or "generic"
        lines = [f"interactions[{position}] {request.method} {request.url}"]
        lines.append(f"  key {keys[position]} (provider family: {family})")
        lines.append(f"  rules that changed it: {', '.join(changed) if changed else 'none'}")
        twins = [
            f"interactions[{i}]" for i, key in enumerate(keys) if key == keys[position] and i != position
        ]
        if twins:
            lines.append(f"  same key as {', '.join(twins)}: they replay in recorded order")
        lines.extend("  " + line for line in _input(parts, full=full).splitlines())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)

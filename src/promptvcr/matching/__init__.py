"""Matching: a request becoming a key, the tape of recorded answers, and why a request missed.

A key is the request's meaning (:mod:`.parts`), passed through the rules that apply to its
provider (:mod:`.rules`, chosen by :mod:`.select`) and hashed (:mod:`.key`). The
:class:`~.tape.Tape` plays the interactions recorded under each key in order;
:mod:`.diagnose` (with :mod:`.diffs`) explains a miss by the nearest recorded request.
:mod:`.background` decides which requests are not the test's own (telemetry, OAuth).
Pure Python, like :mod:`promptvcr.cassettes`: no HTTP client, interceptor, pytest or CLI code.
"""

from .key import apply_rules, request_key
from .parts import KeyParts, Rule, key_parts
from .rules import DEFAULT_RULES, drop_body_fields, drop_query_params

__all__ = [
    "DEFAULT_RULES",
    "KeyParts",
    "Rule",
    "apply_rules",
    "drop_body_fields",
    "drop_query_params",
    "key_parts",
    "request_key",
]

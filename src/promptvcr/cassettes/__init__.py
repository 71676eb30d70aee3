"""Requests as data: values, keys, the cassette file format, redaction and SSE streams.

Pure Python: nothing here imports an HTTP client library, so every rule about what a
cassette holds can be tested without one.
"""

from .models import Interaction, Play, Request, Response
from .normalize import DEFAULT_RULES, KeyParts, Rule, drop_body_fields, drop_query_params, request_key

__all__ = [
    "DEFAULT_RULES",
    "Interaction",
    "KeyParts",
    "Play",
    "Request",
    "Response",
    "Rule",
    "drop_body_fields",
    "drop_query_params",
    "request_key",
]

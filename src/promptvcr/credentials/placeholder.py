"""What a removed credential is replaced by: ``<redacted:WHAT>``, saying what was removed.

``<redacted:header:authorization>``, ``<redacted:field:api_key>``, ``<redacted:query:sig>``
(by name), ``<redacted:openai-key>`` (by shape), ``<redacted:sent-credential>`` (a value the
run sent as a credential), ``<redacted:env:OPENAI_API_KEY>`` (a credential of the recording
run's environment). A reviewer can tell what was there; matching ignores a placeholder
wherever it sits, and every placeholder starts with :data:`PREFIX` (older cassettes hold the
bare ``<redacted>``, which is one too).
"""

from __future__ import annotations

__all__ = ["PREFIX", "is_placeholder", "placeholder"]

PREFIX = "<redacted"


def placeholder(*what: str) -> str:
    """``<redacted:a:b>`` for ``placeholder("a", "b")``; ``<redacted>`` for nothing."""
    return f"<redacted:{':'.join(what)}>" if what else "<redacted>"


def is_placeholder(value: object) -> bool:
    """Whether a stored value is a placeholder (of any version of promptvcr)."""
    return isinstance(value, str) and value.startswith(PREFIX) and value.endswith(">")

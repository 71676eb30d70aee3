"""A last look at each cassette a recording wrote: does it hold anything like a credential?

Redaction on the way to the file removes every credential promptvcr knows of. This check
is the safety net for the ones it does not: a provider's new key header, a key pasted into
a prompt, a token in a URL path. It looks for the values of the credential variables in
the environment (the keys the recording actually used) and for the shapes of well-known
keys, and it prints where, never what: the log of a CI run must not leak the key either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Finding", "credential_values", "find_secrets"]

#: Environment variables whose names say they hold a credential.
_CREDENTIAL_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
#: Shorter values are too likely to occur by chance ("true", "1234") to be worth a finding.
_MIN_VALUE_LENGTH = 12

_KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an OpenAI or Anthropic style key (sk-...)", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}")),
    ("a Google API key (AIza...)", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}")),
    ("an AWS access key id (AKIA...)", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    ("a Groq key (gsk_...)", re.compile(r"(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{20,}")),
    ("an xAI key (xai-...)", re.compile(r"(?<![A-Za-z0-9_-])xai-[A-Za-z0-9]{20,}")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}")),
)


@dataclass(frozen=True, slots=True)
class Finding:
    line: int
    what: str


def credential_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Credential variables of the environment worth looking for: name -> value."""
    env = os.environ if environ is None else environ
    return {
        name: value.strip()
        for name, value in env.items()
        if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= _MIN_VALUE_LENGTH
    }


def find_secrets(text: str, credentials: Mapping[str, str]) -> list[Finding]:
    """Every line of ``text`` that holds a credential value or a key-shaped string."""
    findings: list[Finding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = [f"the value of ${name}" for name, value in credentials.items() if value in line]
        found.extend(what for what, shape in _KEY_SHAPES if shape.search(line))
        findings.extend(Finding(number, what) for what in found)
    return findings

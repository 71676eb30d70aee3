"""A last look at each cassette a recording wrote: does it hold one of the run's credentials?

The record path already refuses to write a value shaped like a known kind of key
(:mod:`promptvcr.secrets_scan`). A credential has no shape promptvcr can know, though,
when it is a proxy's token, a self-hosted gateway's password or an unusual key. The
recording run has the real ones in its environment: this check looks for the value of
every credential variable there (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ...) in the
file just written, and for the known shapes too, since a file may also be written by
another tool. It prints where, never what: the log of a CI run must not leak the key.
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
    """The lines of ``text`` holding a credential's value or a key-shaped string, in order."""
    from ..cassettes.secrets import scan_text

    findings = [
        Finding(number, f"the value of ${name}")
        for number, line in enumerate(text.splitlines(), start=1)
        for name, value in credentials.items()
        if value in line
    ]
    findings.extend(Finding(found.line, f"{found.kind} {found.preview}") for found in scan_text(text))
    return sorted(findings, key=lambda finding: finding.line)

"""Values shaped like secrets that are not secrets: documented examples and placeholders.

Real answers quote them all the time (a tutorial, a code sample, an error message telling
the user where to put the key). They are not findings, so such an answer is recorded as
it is. The list is deliberately narrow: each entry is a value published as an example by
its issuer, or a value no key generator produces (a placeholder word, one repeated
character). Anything else a project wants to keep is accepted per cassette, with
``use_cassette(..., allowed_secrets=[...])``.
"""

from __future__ import annotations

import base64
import json
import re

__all__ = ["DOCUMENTED_EXAMPLES", "is_documented_example"]

#: Published example credentials, exactly (AWS's documentation, RFC 7519 / jwt.io).
DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIAI44QH8DHBEXAMPLE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    }
)

#: Words no key generator writes, in any case: ``YOUR_API_KEY``, ``sk-your-key-here``,
#: ``<redacted>``, ``sk-xxxx...``, and what recorders put in a credential's place
#: (vcrpy filters' ``scrubbed``, ``filtered``, ``dummy``).
_PLACEHOLDER = re.compile(
    r"your[_\-]?(?:api|access|secret|own|key|token)|example|placeholder|replace[_\-]?me|redacted"
    r"|insert[_\-]?your|scrubbed|filtered|dummy|xxxx|\*\*\*\*|\.\.\.|…",
    re.IGNORECASE,
)
#: The claims of the example token on jwt.io (every version of the page).
_JWT_IO_SUBJECT = ("1234567890", "John Doe")


def _is_jwt_io_example(value: str) -> bool:
    parts = value.split(".")
    if len(parts) != 3:
        return False
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(claims, dict) and (claims.get("sub"), claims.get("name")) == _JWT_IO_SUBJECT


def _body(value: str, kind: str) -> str:
    """The part of a value after its fixed prefix (``sk-``, ``Bearer ``, ``ghp_``...)."""
    if kind == "bearer token":
        return value.split(None, 1)[-1]
    match = re.match(r"[A-Za-z0-9]{1,10}[-_.]", value)
    return value[match.end() :] if match else value


def is_documented_example(value: str, kind: str = "") -> bool:
    """Whether a secret-shaped ``value`` (of ``kind``, see :data:`.secrets.SECRET_KINDS`)
    is a published example or an obvious placeholder rather than a credential."""
    if value in DOCUMENTED_EXAMPLES or any(example in value for example in DOCUMENTED_EXAMPLES):
        return True
    if _PLACEHOLDER.search(value):
        return True
    body = _body(value, kind)
    if len(body) >= 16 and len(set(body.lower())) <= 2:  # sk-000000..., sk-abababab...: typed
        return True
    if kind == "bearer token" and not any(c.isdigit() for c in body):
        return True  # "the bearer of ... responsibilities": prose, not a token
    return kind == "JSON Web Token" and _is_jwt_io_example(value)

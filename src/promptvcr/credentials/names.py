"""Credential names: the headers, query parameters and fields whose value is a credential.

One list per place, compared in lower case; what is decided here is decided for recording,
import, matching and the scanner alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "SECRET_BODY_FIELDS",
    "SECRET_FIELDS_ANY_DEPTH",
    "SECRET_QUERY_PARAMS",
    "environment_credentials",
    "is_secret_field",
    "is_secret_header",
    "is_secret_param",
    "words_pattern",
]

#: Query parameters (and form or multipart fields) that carry credentials, compared in lower
#: case: API keys under every spelling (Gemini's ``key=``, Azure APIM's ``subscription-key``),
#: OAuth (``code``, ``access_token``, ``refresh_token``, ``client_secret``), passwords, and the
#: signatures of signed URLs (Azure SAS ``sig``, S3 ``X-Amz-Signature``, GCS ``X-Goog-Signature``).
#: Removed from the request URL and from every URL stored anywhere (``location``, upload URLs,
#: links in answers).
SECRET_QUERY_PARAMS = frozenset(
    {
        *("key", "api_key", "api-key", "apikey", "x-api-key", "x_api_key", "api_token"),
        *("token", "access_token", "access-token", "accesstoken", "refresh_token", "refresh-token"),
        *("id_token", "auth", "auth_token", "authorization", "session_token", "code"),
        *("client_secret", "secret", "password", "passwd", "private_key"),
        *("subscription-key", "subscription_key", "ocp-apim-subscription-key"),
        *("sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token"),
        *("x-goog-signature", "x-goog-credential", "awsaccesskeyid"),
    }
)

#: JSON fields that carry credentials at any depth (``auth.api_key``, ``providers[0].api_key``,
#: ``credentials.password``), in requests and answers alike.
SECRET_FIELDS_ANY_DEPTH = frozenset(
    {
        *("api_key", "api-key", "apikey", "x-api-key", "x_api_key", "api_token", "auth_token"),
        *("client_secret", "refresh_token", "access_token", "id_token", "session_token"),
        *("password", "passwd", "private_key", "secret_key", "secret_access_key"),
        *("aws_secret_access_key", "subscription_key", "subscription-key", "bearer_token"),
    }
)

#: Top-level JSON or form fields that carry credentials (OAuth token exchanges, key-in-body
#: APIs): the fields above and short names that mean a credential only at the top.
SECRET_BODY_FIELDS = SECRET_FIELDS_ANY_DEPTH | frozenset({"key", "token", "secret", "auth", "credentials"})

_SECRET_HEADER_NAME = re.compile(r"auth|token|secret|key|cookie|signature|password|credential|session")


@functools.lru_cache(maxsize=1024)  # the same few names in every request and response
def is_secret_header(name: str) -> bool:
    lowered = name.lower()
    if lowered == "mcp-session-id":  # a session the server invents and ends, not a credential
        return False
    return lowered in ("openai-organization", "openai-project") or bool(_SECRET_HEADER_NAME.search(lowered))


def is_secret_param(name: str) -> bool:
    return name.lower() in SECRET_QUERY_PARAMS


def is_secret_field(key: Any, top: bool) -> bool:
    if not isinstance(key, str):
        return False
    lowered = key.lower()
    return lowered in SECRET_FIELDS_ANY_DEPTH or (top and lowered in SECRET_BODY_FIELDS)


def words_pattern(words: Iterable[str]) -> str:
    """A pattern matching any of ``words``, as a trie (one alternative per first character):
    one pass over a text that tries a few characters at each position, about twice as fast
    as a substring search per word."""
    root: dict[str, Any] = {}
    for word in sorted(words):
        node = root
        for character in word:
            node = node.setdefault(character, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(character) + pattern(child) for character, child in node.items() if character]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


def environment_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    """Credential variables of an environment worth looking for: name -> value."""
    return {
        name: value.strip()
        for name, value in environ.items()
        if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= _MIN_ENV_VALUE_LENGTH
    }


#: Environment variables whose names say they hold a credential.
_CREDENTIAL_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
#: Shorter values are too likely to occur by chance ("true", "1234") to be worth a finding.
_MIN_ENV_VALUE_LENGTH = 12

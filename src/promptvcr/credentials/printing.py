"""Nothing promptvcr prints shows a credential: miss messages, drift reports, warnings, faults.

A miss prints the request that missed and how it differs from the nearest recorded one; the
live request holds the real key where the recording holds ``<redacted:...>``. Every such
text goes through :func:`safe_text` before it is shown: credential query parameters, JSON
pairs under a credential name (in a document cut short too), key shapes, and every value
this run sent as a credential or holds in its environment become placeholders. Printing
happens on a miss, never on the replay path.
"""

from __future__ import annotations

import os
import re

from ..cassettes.models import Request
from .byname import redact_query_values, redact_url
from .keyshapes import KIND_SLUGS, secret_values
from .masking import run_credentials, worth_masking
from .names import environment_credentials, is_secret_field, is_secret_header
from .placeholder import is_placeholder, placeholder

__all__ = ["safe_request", "safe_text", "safe_value"]

#: ``"name": "value"`` in JSON text, whole or cut short (a summary of a body).
_JSON_PAIR = re.compile(r'"([^"\\]{1,64})"(\s*:\s*)"((?:[^"\\]|\\.)*)"')
#: ``name=value`` outside a URL's query (a form body, a log line): what the query pass misses.
_FORM_PAIR = re.compile(r"(?<![A-Za-z0-9_.%\-])([A-Za-z0-9_.\-]{1,64})=([^&\s\"'<>]+)")


def _pair(match: re.Match[str]) -> str:
    name, colon, value = match.groups()
    if not is_secret_field(name, True) or is_placeholder(value) or not value:
        return match.group()
    return f'"{name}"{colon}"{placeholder("field", name.lower())}"'


def _form(match: re.Match[str]) -> str:
    name, value = match.groups()
    if not is_secret_field(name, True) or is_placeholder(value):
        return match.group()
    return f"{name}={placeholder('field', name.lower())}"


def safe_text(text: str) -> str:
    """``text`` with every credential promptvcr can tell replaced by its placeholder."""
    text = redact_query_values(text)
    if '"' in text:
        text = _JSON_PAIR.sub(_pair, text)
    if "=" in text:
        text = _FORM_PAIR.sub(_form, text)
    for kind, value in list(secret_values(text)):
        text = text.replace(value, placeholder(KIND_SLUGS.get(kind, "secret")))
    known = worth_masking(run_credentials()) | set(environment_credentials(os.environ).values())
    for value in sorted(known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, placeholder("sent-credential"))
    return text


def safe_value(name: str, value: object) -> object:
    """A field's value as a message may show it: its placeholder under a credential name."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and is_secret_field(name, True):
        return value if is_placeholder(value) else placeholder("field", name.lower())
    return value


def safe_request(request: Request) -> Request:
    """A copy of ``request`` that can be shown (``cassette.faults_fired``): credential headers
    as placeholders, the URL without credentials, a text body through :func:`safe_text`."""
    headers = {
        name: placeholder("header", name.lower()) if is_secret_header(name) else value
        for name, value in request.headers.items()
    }
    content = request.content
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        content = safe_text(text).encode("utf-8")
    return Request(request.method, redact_url(request.url), headers, content)

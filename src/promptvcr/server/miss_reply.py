"""A request the server cannot serve, answered as the provider's SDK surfaces an API error.

The status and the JSON body take the shape of the request's provider (see
:mod:`promptvcr.faults.provider_errors`: OpenAI's ``{"error": {"message", "type", ...}}``,
Anthropic's ``{"type": "error", "error": {...}}``, Google's ``{"error": {"code", "message",
"status"}}``), so ``openai.NotFoundError`` (Python), ``NotFoundError`` (npm), ... carry the
message: for a miss, :class:`~promptvcr.CassetteMiss`'s, which names promptvcr, the
cassette, the nearest recorded request with the fields that differ, and how to record.
"""

from __future__ import annotations

import json

from ..cassettes.models import Request, Response
from ..faults.provider_errors import error_body, error_headers

__all__ = ["MISS_STATUS", "error_response"]

#: 404: the cassette holds no answer to this request. No SDK retries it (429 and 5xx are
#: retried), so the message shows at once.
MISS_STATUS = 404


def error_response(
    request: Request, message: str, status: int = MISS_STATUS, code: str = "promptvcr_cassette_miss"
) -> Response:
    """A provider-shaped error response carrying ``message`` (and ``code`` where the shape has one)."""
    body = error_body(request, status, None)
    error = body.get("error")
    if isinstance(error, dict):
        error["message"] = message
        if "code" in error and not isinstance(error["code"], int):
            error["code"] = code
    headers = error_headers(request, status, None)
    headers["x-promptvcr"] = code
    return Response(status=status, headers=headers, chunks=[json.dumps(body, indent=2).encode()])

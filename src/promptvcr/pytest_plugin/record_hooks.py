"""vcrpy's record hooks on promptvcr's cassettes.

``before_record_request`` / ``before_record_response`` are ``use_cassette`` arguments (so also
``promptvcr_config`` and marker keys, and taken from pytest-recording's ``vcr_config``): each
gets a recorded :class:`~promptvcr.Request` or :class:`~promptvcr.Response` (see
:class:`promptvcr.files.persister.Writing`). vcrpy's hooks take other values (a
``vcr.request.Request``, a response ``dict`` with ``body.string``): wrap one in
:func:`vcr_style` (``promptvcr migrate`` does), and it gets and returns those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cassettes.models import Request, Response

__all__ = ["HOOKS", "vcr_style"]

HOOKS = ("before_record_request", "before_record_response")
Hook = Callable[[Any], Any]


def _request_to_vcr(request: Request) -> Any:
    from vcr.request import Request as VcrRequest

    return VcrRequest(request.method, request.url, request.content, dict(request.headers))


def _request_from_vcr(value: Any, original: Request) -> Request:
    body = value.body if isinstance(value.body, bytes) else (value.body or "").encode("utf-8")
    headers = {str(k).lower(): str(v) for k, v in dict(value.headers).items()}
    return dataclasses.replace(original, method=value.method, url=value.uri, headers=headers, content=body)


def _response_to_vcr(response: Response) -> dict[str, Any]:
    return {
        "status": {"code": response.status, "message": ""},
        "headers": {name: [value] for name, value in response.headers.items()},
        "body": {"string": b"".join(response.chunks)},
    }


def _response_from_vcr(value: dict[str, Any], original: Response) -> Response:
    from ..importers.vcr_convert import to_interaction

    converted = to_interaction({"method": "GET", "uri": "http://localhost/"}, value, 0).response
    same = b"".join(converted.chunks) == b"".join(original.chunks)
    return dataclasses.replace(
        original,
        status=converted.status,
        headers=converted.headers,
        chunks=original.chunks if same else converted.chunks,  # a stream keeps its events
        timing=original.timing if same else None,
    )


def vcr_style(hook: Hook) -> Hook:
    """A vcrpy ``before_record_request`` or ``before_record_response`` as promptvcr's."""

    def adapted(value: Any) -> Any:
        from ..cassettes.models import Request

        if isinstance(value, Request):
            result = hook(_request_to_vcr(value))
            return None if result is None else _request_from_vcr(result, value)
        result = hook(_response_to_vcr(value))
        return None if result is None else _response_from_vcr(result, value)

    adapted.__name__ = getattr(hook, "__name__", "hook")
    adapted.__wrapped__ = hook  # type: ignore[attr-defined]
    return adapted

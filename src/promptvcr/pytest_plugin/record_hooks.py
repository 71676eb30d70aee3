"""``before_record_request`` / ``before_record_response``: edit or drop what a test records.

Given in ``promptvcr_config`` or a marker (and taken from pytest-recording's ``vcr_config``),
each hook gets a recorded :class:`~promptvcr.Request` or :class:`~promptvcr.Response` and
returns it, changed or not, or ``None`` to leave the interaction out of the cassette. They
run on exit, before redaction and the secret scan, so a hook cannot let a secret through,
and what a hook trims (a 338-model ``/models`` answer cut to 5) is what is written.

vcrpy's hooks take other values (a ``vcr.request.Request``, a response ``dict`` with
``body.string``): wrap one in :func:`vcr_style` (``promptvcr migrate`` does), and it gets
and returns those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cassette import Cassette
    from ..cassettes.models import Interaction, Request, Response

__all__ = ["HOOKS", "make_cassette", "vcr_style"]

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


def apply(interactions: Sequence[Interaction], hooks: dict[str, Hook]) -> list[Interaction]:
    on_request, on_response = hooks.get("before_record_request"), hooks.get("before_record_response")
    kept: list[Interaction] = []
    for interaction in interactions:
        request = on_request(interaction.request) if on_request else interaction.request
        response = on_response(interaction.response) if on_response else interaction.response
        if request is not None and response is not None:
            kept.append(dataclasses.replace(interaction, request=request, response=response))
    return kept


def make_cassette(path: Any, options: dict[str, Any]) -> Cassette:
    """``Cassette(path, **options)``, with the record hooks among ``options`` applied on writing."""
    from ..cassette import Cassette

    hooks = {name: options.pop(name) for name in HOOKS if options.get(name) is not None}
    for name in HOOKS:
        options.pop(name, None)
    if not hooks:
        return Cassette(path, **options)

    class HookedCassette(Cassette):
        def _stored_form(self) -> list[dict[str, Any]]:
            recorded = self._recorded
            self._recorded = apply(recorded, hooks)
            try:
                return super()._stored_form()
            finally:
                self._recorded = recorded

    return HookedCassette(path, **options)

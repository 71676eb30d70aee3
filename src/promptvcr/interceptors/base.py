"""The one interface between an HTTP library's patch and promptvcr's core.

An interceptor converts its library's request into a :class:`Request`, asks the handler
what to do, and either serves the stored :class:`Response` or sends the request on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..cassettes.models import Request, Response

__all__ = ["Handler", "OnRecorded", "Uninstall"]


class OnRecorded(Protocol):
    """Takes the complete response of a request that went to the network, once.

    ``started()`` says the headers arrived and the body is on its way, so that a response the
    application then neither reads to the end nor closes is reported when the cassette exits,
    not silently dropped. An interceptor that always reads bodies to the end may skip it.
    """

    def __call__(self, response: Response) -> None: ...

    def started(self) -> None: ...


#: Undoes an interceptor's patches.
Uninstall = Callable[[], None]


class Handler(Protocol):
    def handle(self, request: Request) -> Response | OnRecorded | None:
        """A stored response to serve; or a callback: send it and report the response; or
        ``None``: send it and keep nothing. Raises :class:`~promptvcr.CassetteMiss` on a miss."""
        ...

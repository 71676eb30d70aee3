"""The one interface between an HTTP library's patch and promptvcr's core.

An interceptor converts its library's request into a :class:`Request`, asks the handler
what to do, and either serves the stored :class:`Response` or sends the request on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..cassettes.models import Request, Response

__all__ = ["Handler", "OnRecorded", "Uninstall"]

#: Called once with the complete response of a request that went to the network.
OnRecorded = Callable[[Response], None]

#: Undoes an interceptor's patches.
Uninstall = Callable[[], None]


class Handler(Protocol):
    def handle(self, request: Request) -> Response | OnRecorded | None:
        """A stored response to serve; or a callback: send it and report the response; or
        ``None``: send it and keep nothing. Raises :class:`~promptvcr.CassetteMiss` on a miss."""
        ...

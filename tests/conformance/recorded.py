"""What a driver needs to rebuild an SDK call from one recorded request.

The runner only builds the call: it turns the recorded request's parameters into the
SDK's own arguments and lets the SDK make the HTTP request itself. Everything the SDK
adds or orders differently is for the key to absorb, not for the runner to patch.
"""

from __future__ import annotations

import inspect
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from promptvcr.cassettes.models import Interaction, Response
from promptvcr.cassettes.wire import WIRE_HEADERS

__all__ = ["Clients", "Recorded", "split_kwargs", "urllib3_response"]


@dataclass(frozen=True, slots=True)
class Clients:
    """The HTTP clients a driver hands to the SDK: ``None`` lets the SDK build its default one
    (the replay pass, intercepted by promptvcr); the reference pass gives clients whose
    transport serves the recorded bytes directly. ``botocore`` is given each botocore client
    the driver built: the reference pass makes it answer with the recorded bytes, the replay
    pass leaves it alone. ``requests`` is a ``requests.Session`` (or ``None``)."""

    httpx2: Callable[[], Any | None]
    httpx: Callable[[], Any | None]
    botocore: Callable[[Any], None] = field(default=lambda client: None)
    requests: Callable[[], Any | None] = field(default=lambda: None)


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded interaction, and the ones after it (a driver whose SDK call spans two
    requests, such as a resumable upload, reads the second request from there)."""

    interaction: Interaction
    following: tuple[Interaction, ...] = ()

    @property
    def method(self) -> str:
        return self.interaction.request.method.upper()

    @property
    def url(self) -> str:
        return self.interaction.request.url

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def query(self, *without: str) -> dict[str, str]:
        return {
            k: v for k, v in parse_qsl(urlsplit(self.url).query, keep_blank_values=True) if k not in without
        }

    def base_url(self, suffix: str) -> str:
        """The URL up to the SDK's own path for the operation (``/chat/completions``...)."""
        parts = urlsplit(self.url)
        cut = parts.path.rfind(suffix)
        prefix = parts.path[:cut] if cut >= 0 else parts.path
        return f"{parts.scheme}://{parts.netloc}{prefix}"

    @property
    def body(self) -> Any:
        content = self.interaction.request.content
        return json.loads(content) if content else None

    @property
    def json_body(self) -> dict[str, Any]:
        body = self.body
        if not isinstance(body, dict):
            raise TypeError("the recorded request body is not a JSON object")
        return body


def split_kwargs(method: Callable[..., Any], body: Mapping[str, Any], **fixed: Any) -> dict[str, Any]:
    """Keyword arguments for an SDK method: the fields it names, the rest as ``extra_body``."""
    names = set(inspect.signature(method).parameters)
    kwargs = {k: v for k, v in body.items() if k in names and k not in fixed}
    extra = {k: v for k, v in body.items() if k not in names and k not in fixed}
    if extra:
        kwargs["extra_body"] = extra
    kwargs.update(fixed)
    return kwargs


def urllib3_response(recorded: Response) -> Any:
    """A ``urllib3.HTTPResponse`` holding ``recorded``'s bytes as recorded, for the reference
    pass of a driver whose SDK sends through urllib3 (botocore, requests): its headers less
    those of the wire (:data:`~promptvcr.cassettes.wire.WIRE_HEADERS`), with its length."""
    import urllib3

    headers = {k: v for k, v in recorded.headers.items() if k.lower() not in WIRE_HEADERS}
    headers["content-length"] = str(len(recorded.content))
    return urllib3.HTTPResponse(
        body=io.BytesIO(recorded.content),
        headers=headers,
        status=recorded.status,
        preload_content=False,
        decode_content=False,
    )

"""One small module per HTTP library; each is active once its library has been imported.

Nothing provider-specific lives here: an interceptor only converts its library's request
and response to promptvcr's values and asks a :class:`~.decision.Handler` what to do.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable

from ._lazy import install_when_imported
from .decision import PASS_THROUGH, Decision, Handler, PassThrough, Record, Recorder, Replay, Uninstall
from .unavailable import SEAM_ERRORS, guarded, skipped

__all__ = [
    "INTERCEPTORS",
    "PASS_THROUGH",
    "Decision",
    "Handler",
    "PassThrough",
    "Record",
    "Recorder",
    "Replay",
    "Uninstall",
    "install_all",
]

#: Interceptor modules and what each needs: the HTTP library first, then its helpers.
INTERCEPTORS = {
    "httpx2": ("httpx2",),
    "httpx": ("httpx", "respx"),
    "urllib3": ("urllib3",),  # requests and botocore send through it
    "aiohttp": ("aiohttp",),
    "websockets": ("websockets",),  # realtime APIs: openai's client.realtime, google-genai's live
    "mcp_stdio": ("mcp.client.stdio",),  # MCP servers the mcp SDK starts as processes
    "grpc": ("grpc",),  # Vertex AI's gRPC clients, speech, vector stores (interceptors/grpc/)
}


def _installed(library: str) -> bool:
    """Whether ``library`` can be imported, asked once per process: for a library that is not
    installed the answer is a search of every path entry, each time a cassette is entered.
    (Remembered per ``find_spec`` function, so an environment that replaces it is asked anew.)"""
    return _found(importlib.util.find_spec, library)


@functools.cache
def _found(find_spec: Callable[[str], object], library: str) -> bool:
    return find_spec(library) is not None


def _installer(name: str) -> Callable[[Handler], Uninstall] | None:
    library, *helpers = INTERCEPTORS[name]
    if not _installed(library):
        return None
    missing = [helper for helper in helpers if not _installed(helper)]
    if missing and name == "httpx":
        # httpx comes with many libraries that never send through it: fail its requests, not the cassette.
        return _httpx_refused
    if missing:
        # Failing closed: traffic of an installed library must never reach the network unseen.
        raise RuntimeError(
            f"{library} is installed but promptvcr cannot intercept it without {', '.join(missing)}. "
            f"Install it: pip install 'promptvcr[{name}]'"
        )
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except SEAM_ERRORS as error:  # a module of the library moved: the interceptor steps aside
        return skipped(name, library, error)
    install: Callable[[Handler], Uninstall] = module.install
    return guarded(name, library, install)


class RespxMissing(RuntimeError):
    """An httpx request while a cassette is active, in an environment without respx."""


def _httpx_refused(handler: Handler) -> Uninstall:
    """Without respx, httpx requests fail closed with one clear message; nothing else changes."""
    import httpx

    message = (
        "promptvcr cannot intercept this httpx request: respx is not installed, so it was not sent. "
        "Install it: pip install 'promptvcr[httpx]'"
    )

    def refuse(self: object, request: object) -> httpx.Response:
        raise RespxMissing(message)

    async def refuse_async(self: object, request: object) -> httpx.Response:
        raise RespxMissing(message)

    sync_before = httpx.HTTPTransport.handle_request
    async_before = httpx.AsyncHTTPTransport.handle_async_request
    httpx.HTTPTransport.handle_request = refuse  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = refuse_async  # type: ignore[method-assign]

    def undo() -> None:
        httpx.HTTPTransport.handle_request = sync_before  # type: ignore[method-assign]
        httpx.AsyncHTTPTransport.handle_async_request = async_before  # type: ignore[method-assign]

    return undo


def install_all(handler: Handler) -> Uninstall:
    """Patch every HTTP library the process has imported, and any it imports while this is
    in place (see :mod:`._lazy`); the returned function undoes them all."""
    return install_when_imported(handler, {INTERCEPTORS[name][0]: name for name in INTERCEPTORS}, _installer)

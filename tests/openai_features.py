"""What the installed openai can do, for the tests that need more than every openai line has.

``nox -s "compat(openai-1)"`` runs the suite against openai 1, which sends through httpx;
openai 3 sends through httpx2. A test that hands openai an httpx2 client tests something
openai 1 cannot do, so it is skipped there, saying why; the reason is read from the installed
openai (what its clients are), never from its version string.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from types import ModuleType

import openai
import pytest


def http_library() -> ModuleType:
    """The HTTP library openai sends through (``httpx2`` for openai 3, ``httpx`` before): the
    one its ``DefaultHttpxClient`` is a client of. Its ``Response`` is what ``cast_to`` takes."""
    library = openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0]
    return importlib.import_module(library)


@functools.cache
def _on_httpx2() -> str | None:
    library = http_library().__name__
    if library == "httpx2":
        return None
    return (
        f"openai {openai.__version__} sends through {library}, not httpx2 (its DefaultHttpxClient "
        f"is an {library}.Client): this test passes openai an httpx2 client, which openai 3 takes"
    )


@functools.cache
def _aiohttp_client() -> str | None:
    make = getattr(openai, "DefaultAioHttpClient", None)
    if make is None:
        return f"openai {openai.__version__} has no DefaultAioHttpClient (its aiohttp client)"
    try:
        client = make()
    except RuntimeError as error:  # openai's stand-in when its aiohttp extra is not installed
        return f"openai {openai.__version__}: {error} (pip install 'openai[aiohttp]')"
    asyncio.run(client.aclose())
    return None


#: The test passes openai an httpx2 client (openai 3 and newer).
needs_openai_on_httpx2 = pytest.mark.skipif(_on_httpx2() is not None, reason=_on_httpx2() or "")

#: The test uses ``openai.DefaultAioHttpClient`` (openai's ``aiohttp`` extra).
needs_openai_aiohttp_client = pytest.mark.skipif(
    _aiohttp_client() is not None, reason=_aiohttp_client() or ""
)

"""Every private name of another library that promptvcr touches, in one place.

When httpx2, httpx or respx rename one of these, this is the only file to change.
"""

from __future__ import annotations

__all__ = ["AIOHTTP_RESPONSE_PAYLOAD", "CLIENT_TRANSPORT_SEAM", "URLLIB3_ATTEMPT_SEAM", "respx_mocker_base"]

#: ``Client._transport_for_url(url)`` picks the transport for each request after the
#: client has applied auth, cookies and redirects. Wrapping what it returns sees every
#: transport (the default pool, mounts, proxies, openai's aiohttp transport) and every
#: client, including ones created before the cassette was entered. httpx and httpx2
#: share it; respx patches the same seam for httpx.
CLIENT_TRANSPORT_SEAM = "_transport_for_url"


def respx_mocker_base() -> type:
    """respx's ``Mocker`` base class: subclasses register themselves under their ``name``
    and a ``MockRouter(using=name)`` then patches through them."""
    from respx.mocks import Mocker

    return Mocker


#: ``HTTPConnectionPool._make_request(conn, method, url, body=, headers=, ...)`` (urllib3 2.x)
#: sends one attempt of a request and returns its response. ``urlopen`` wraps it with
#: retries, redirects and the pool's bookkeeping, and ``requests`` and botocore call
#: ``urlopen``: patching the attempt sees every request of all three exactly once.
URLLIB3_ATTEMPT_SEAM = "_make_request"


#: ``ResponseHandler._payload``: the body reader of the response being parsed. aiohttp's
#: own read timeout (``ResponseHandler._on_read_timeout``) fails it along with the
#: protocol; an injected read timeout in mid-body does the same.
AIOHTTP_RESPONSE_PAYLOAD = "_payload"

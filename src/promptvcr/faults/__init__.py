"""Faults: replay what happens when the provider misbehaves, against real recorded traffic.

Declare faults on a cassette; each fires on the n-th request that matches its selector::

    from promptvcr import faults

    two_429s = faults.http_error(429, retry_after=0.2, times=2)
    with promptvcr.use_cassette("chat.yaml", faults=[two_429s]) as cassette:
        client.chat.completions.create(...)   # two 429s, then the recorded answer
    assert len(cassette.faults_fired) == 2

* :func:`http_error` answers with the provider's real error body and headers (429 with
  ``retry-after``, 500, 503, 529 overloaded, ...), chosen from the request's host and path.
* :func:`connect_timeout` and :func:`read_timeout` raise the HTTP client's own timeout
  exceptions (``httpx2.ConnectTimeout``, ``httpx.ReadTimeout``, ...).
* :func:`cut_stream` ends the connection after the k-th event of the recorded stream,
  as a server that goes away does; :func:`malformed_event` cuts one event's JSON in half.

An HTTP error or a timeout replaces the answer without using it up, in every record mode:
the recorded answer is served to the retry after it, so a client's ``max_retries`` logic
runs against real data. Faults that break a recorded answer (cut, malformed, a read
timeout after some events) need one: they fire on requests the cassette replays, and let
a request that is being recorded through unchanged.
"""

from .plan import FaultFired, FaultPlan
from .spec import Fault, FaultKind, connect_timeout, cut_stream, http_error, malformed_event, read_timeout

__all__ = [
    "Fault",
    "FaultFired",
    "FaultKind",
    "FaultPlan",
    "connect_timeout",
    "cut_stream",
    "http_error",
    "malformed_event",
    "read_timeout",
]

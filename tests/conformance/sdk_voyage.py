"""The driver for the voyageai SDK, which sends with ``requests`` (so through urllib3).

voyageai keeps one ``requests.Session`` per thread, made from ``voyageai.requestssession``
when the thread first sends. Each call therefore runs in a thread of its own: the reference
pass hands voyageai a session whose adapter answers with the recorded bytes (never reaching
urllib3, so never promptvcr), the replay pass lets voyageai build its default session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from promptvcr.cassettes.models import Response

from .recorded import Clients, Recorded, urllib3_response

__all__ = ["drive_voyage", "recorded_session"]

#: ``voyageai.requestssession`` is module state: one driver call sets it at a time.
_SESSION_LOCK = threading.Lock()


def recorded_session(next_response: Callable[[], Response]) -> Any:
    """A ``requests.Session`` whose every request is answered with the next recorded response."""
    import requests

    class RecordedAdapter(requests.adapters.HTTPAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            return self.build_response(request, urllib3_response(next_response()))

    session = requests.Session()
    session.mount("https://", RecordedAdapter())
    session.mount("http://", RecordedAdapter())
    return session


def drive_voyage(rec: Recorded, clients: Clients) -> Any:
    import voyageai
    from voyageai.client import Client

    body = rec.json_body
    if not rec.path.endswith("/embeddings") or body.get("encoding_format") not in (None, "base64"):
        raise LookupError(f"no voyageai call sends {rec.method} {rec.path} with this body")
    client = Client(api_key="pa-conformance", max_retries=0, base_url=rec.base_url("/embeddings"))

    def embed() -> Any:
        return client.embed(
            body["input"],
            model=body.get("model"),
            input_type=body.get("input_type"),
            truncation=body.get("truncation", True),
            output_dtype=body.get("output_dtype"),
            output_dimension=body.get("output_dimension"),
        )

    with _SESSION_LOCK:
        previous = voyageai.requestssession
        voyageai.requestssession = clients.requests()
        try:
            with ThreadPoolExecutor(1) as fresh_thread:
                result = fresh_thread.submit(embed).result()
        finally:
            voyageai.requestssession = previous
    return {"embeddings": result.embeddings, "total_tokens": result.total_tokens}

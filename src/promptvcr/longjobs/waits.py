"""The waits a server declares in its answer, served as none on replay.

A poll helper sleeps for ``openai-poll-after-ms`` between two polls; every SDK's retry sleeps
for ``retry-after-ms`` or ``retry-after`` before it sends again. Live, those waits give the
provider time; on replay the next answer is already on the tape, so waiting for it only makes
a test slow. ``timing="recorded"`` (or a speed factor) keeps them: the recorded pace includes them.

``retry-after-ms`` is served as 1, not 0: the openai and anthropic SDKs read 0 as "no advice" and
fall back to their own backoff (half a second and more), so 1 ms is the least wait they obey.
``retry-after`` (whole seconds, by the HTTP standard) is served as 0.
"""

from __future__ import annotations

import dataclasses

from ..cassettes.models import Response

__all__ = ["DECLARED_WAITS", "declares_waits", "without_waits"]

#: Each header that declares a wait -> the value it is served with on replay.
DECLARED_WAITS: dict[str, str] = {"openai-poll-after-ms": "0", "retry-after-ms": "1", "retry-after": "0"}


def declares_waits(response: Response) -> bool:
    headers = response.headers
    return "openai-poll-after-ms" in headers or "retry-after" in headers or "retry-after-ms" in headers


def without_waits(response: Response) -> Response:
    """A copy of ``response`` whose declared waits are the least each header's readers obey."""
    headers = {name: DECLARED_WAITS.get(name, value) for name, value in response.headers.items()}
    return dataclasses.replace(response, headers=headers)

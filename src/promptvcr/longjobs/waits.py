"""The waits a server declares in its answer, served as none on replay.

A poll helper sleeps for ``openai-poll-after-ms`` between two polls; every SDK's retry sleeps
for ``retry-after-ms`` or ``retry-after`` before it sends again after an error answer (429,
5xx...). Live, those waits give the provider time; on replay the next answer is already on the
tape, so waiting for it only makes a test slow. ``timing="recorded"`` (or a speed factor) keeps
them: the recorded pace includes them. Only a wait a client acts on is served as none: a
``retry-after`` on a successful answer (Anthropic sends one on some streams) is what the
provider said and nothing sleeps on it, so it replays as recorded.

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


#: The waits a client sleeps on after an error answer only: a retry's.
_RETRY_WAITS = frozenset({"retry-after", "retry-after-ms"})


def _acted_on(name: str, response: Response) -> bool:
    return name in DECLARED_WAITS and (response.status >= 400 or name not in _RETRY_WAITS)


def declares_waits(response: Response) -> bool:
    """Whether ``response`` declares a wait that a client sleeps on (see the module)."""
    return any(_acted_on(name, response) for name in ("openai-poll-after-ms", "retry-after", "retry-after-ms")
               if name in response.headers)  # fmt: skip


def without_waits(response: Response) -> Response:
    """A copy of ``response`` whose declared waits are the least each header's readers obey."""
    headers = {
        name: DECLARED_WAITS[name] if _acted_on(name, response) else value
        for name, value in response.headers.items()
    }
    return dataclasses.replace(response, headers=headers)

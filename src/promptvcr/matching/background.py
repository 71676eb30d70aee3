"""Background traffic: requests a test did not ask for, that must neither fail it nor leak.

Telemetry exporters (LangSmith, PostHog, Sentry, Logfire, ...) run beside the code under
test. Their requests are *ignored*: answered at once, locally, with an empty ``204``, in
every mode, so a test neither depends on them nor sends anything anywhere. OAuth token
endpoints are *passed through*: the request goes to the network as it is and is never
written to a cassette, since its answer is a credential. A host matches an entry when it
is the entry or one of its subdomains (``sentry.io`` covers ``o1.ingest.sentry.io``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Literal
from urllib.parse import urlsplit

from ..cassettes.models import Response

__all__ = ["DEFAULT_IGNORE_HOSTS", "DEFAULT_PASSTHROUGH_HOSTS", "BackgroundHosts", "Treatment"]

#: Telemetry and tracing exporters of LLM stacks: answered locally with ``204 No Content``.
DEFAULT_IGNORE_HOSTS = frozenset(
    {
        "api.smith.langchain.com",
        "posthog.com",
        "telemetry.crewai.com",
        "api.segment.io",
        "sentry.io",
        "logfire-api.pydantic.dev",
        "logfire-us.pydantic.dev",
        "logfire-eu.pydantic.dev",
        "cloud.langfuse.com",
        "api.honeycomb.io",
    }
)

#: OAuth token endpoints (google-auth, Azure AD, AWS STS): sent as they are, never recorded.
DEFAULT_PASSTHROUGH_HOSTS = frozenset(
    {
        "oauth2.googleapis.com",
        "sts.googleapis.com",
        "login.microsoftonline.com",
        "sts.amazonaws.com",
    }
)

Treatment = Literal["ignored", "passthrough"]


def _normalize(hosts: Iterable[str]) -> frozenset[str]:
    if isinstance(hosts, str):
        raise TypeError(f"hosts must be a collection of host names, not the string {hosts!r}")
    if type(hosts) is frozenset:  # the defaults, given to every cassette: normalized once
        return _normalized(hosts)
    return _normalized.__wrapped__(hosts)


@functools.lru_cache(maxsize=64)
def _normalized(hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(host.strip().lower().lstrip(".") for host in hosts if host.strip())


def _matches(host: str, entries: frozenset[str]) -> bool:
    if host in entries:
        return True
    parts = host.split(".")
    return any(".".join(parts[i:]) in entries for i in range(1, len(parts)))


_Verdicts = dict[str, "tuple[str, Treatment] | None"]
_shared: dict[tuple[frozenset[str], frozenset[str]], tuple[_Verdicts, _Verdicts]] = {}


def _verdicts(ignore: frozenset[str], passthrough: frozenset[str]) -> tuple[_Verdicts, _Verdicts]:
    """The verdicts by host and by URL that every cassette with these host sets shares."""
    if len(_shared) >= 64:  # sets made per test: start over rather than grow
        _shared.clear()
    return _shared.setdefault((ignore, passthrough), ({}, {}))


class BackgroundHosts:
    """Which hosts are background traffic, and how each is treated."""

    def __init__(self, ignore: Iterable[str], passthrough: Iterable[str]) -> None:
        self.ignore = _normalize(ignore)
        self.passthrough = _normalize(passthrough)
        # Every request asks; a suite talks to a handful of hosts, so each is judged once per
        # process, not once per cassette: every cassette with the same host sets shares them.
        self._by_host, self._by_url = _verdicts(self.ignore, self.passthrough)

    def treatment(self, url: str) -> tuple[str, Treatment] | None:
        """The request's host and treatment, or ``None`` for ordinary traffic."""
        if not self.ignore and not self.passthrough:
            return None
        try:  # the same URL again (one endpoint, many calls): no parsing at all
            return self._by_url[url]
        except KeyError:
            pass
        if len(self._by_url) >= 1024:
            self._by_url.clear()
            self._by_host.clear()
        self._by_url[url] = found = self._by_host_of(url)
        return found

    def _by_host_of(self, url: str) -> tuple[str, Treatment] | None:
        host = (urlsplit(url).hostname or "").lower()
        try:
            return self._by_host[host]
        except KeyError:
            pass
        found: tuple[str, Treatment] | None = None
        if _matches(host, self.ignore):
            found = host, "ignored"
        elif _matches(host, self.passthrough):
            found = host, "passthrough"
        self._by_host[host] = found
        return found

    @staticmethod
    def answer() -> Response:
        """What an ignored request gets: success, and nothing to parse."""
        return Response(status=204, headers={}, chunks=[])

"""A cassette as ``promptvcr serve`` uses it: written as it records, and knowing its upstreams.

Each recording is written as soon as it completes, as in-process (:mod:`promptvcr.files.saving`):
a server killed with SIGKILL (the OOM killer, a CI timeout, ``docker kill``) loses at most the
requests in flight. What a served cassette adds, because a server is a long-lived process that
other programs stop as they like and read in other languages:

- **What its stop cut short**, in :attr:`cut_short`: a response still arriving when the server
  stopped, written as far as it arrived (``end: closed``), which makes the server exit non-zero.
- **Its upstreams kept.** A request recorded through the server keeps, in the stored header
  ``x-promptvcr-upstream``, the upstream it was sent to (``openai=http://127.0.0.1:8000``), so
  that a later replay finds ``openai`` there without the ``--upstream`` given at recording.
- **Its misses kept with their messages**, for the admin stop and the report: a client that
  swallowed the provider-shaped 404 still has its test failed by them.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

from ..cassette import Cassette
from ..cassettes.models import Request
from ..errors import CassetteMiss
from ..interceptors.decision import Decision, Record

__all__ = ["UPSTREAM_HEADER", "ServedCassette"]

#: Stored on each request recorded through the server: ``NAME=URL`` of the upstream it went to.
UPSTREAM_HEADER = "x-promptvcr-upstream"


class ServedCassette(Cassette):
    """A :class:`~promptvcr.Cassette` entered by the server; see the module's docstring."""

    def __init__(self, path: str | Path, **options: Any) -> None:
        super().__init__(path, **options)
        kept = self.writing.request_headers | {UPSTREAM_HEADER}
        self.writing = dataclasses.replace(self.writing, request_headers=kept)
        self._misses_lock = threading.Lock()
        #: Each miss answered to a client: the request and the message it was given.
        self.miss_messages: list[tuple[Request, str]] = []
        #: Writing errors (a refused secret, a full disk), one line each.
        self.errors: list[str] = []
        #: Responses the server's stop cut short: written as far as they arrived.
        self.cut_short: list[Request] = []
        #: Upstream name -> the URLs the cassette's requests were recorded from, latest first.
        self.upstreams: dict[str, list[str]] = {}
        self._urls: set[str] = set()
        #: Recordings being written in a thread (see .relay): a stop waits for them.
        self._writes = 0
        self._writes_ended = threading.Condition()

    def write_started(self) -> None:
        """A recording is handed to a thread to be written (:mod:`.relay`)."""
        with self._writes_ended:
            self._writes += 1

    def write_ended(self) -> None:
        """That thread is done with it: written, or its error raised."""
        with self._writes_ended:
            self._writes -= 1
            self._writes_ended.notify_all()

    def wait_for_writes(self) -> None:
        """Until no recording is being written: leaving the cassette before one is would count
        it out of the report, or merge a rewrite before it reaches the file set aside. A write
        always ends (it is on disk or it failed), so there is no time limit."""
        with self._writes_ended:
            self._writes_ended.wait_for(lambda: self._writes == 0)

    def __enter__(self) -> ServedCassette:
        super().__enter__()
        self.miss_messages, self.errors, self.cut_short = [], [], []
        for interaction in self.interactions:
            self._learn(interaction.request)
        return self

    def _learn(self, request: Request) -> None:
        self._urls.add(_plain(request.url))
        name, sep, url = request.headers.get(UPSTREAM_HEADER, "").partition("=")
        if sep:
            known = self.upstreams.setdefault(name, [])
            if url in known:
                known.remove(url)
            known.insert(0, url)

    def upstream_for(self, name: str, rest: str) -> str | None:
        """The URL ``name`` was recorded from, for a request to ``rest``: the latest one whose
        URL for ``rest`` the cassette holds, else the latest; ``None`` when never recorded."""
        known = self.upstreams.get(name)
        if not known:
            return None
        for url in known:
            if _plain(f"{url}/{rest}") in self._urls:
                return url
        return known[0]

    @property
    def recording(self) -> bool:
        """Whether a recording is under way: an answer still arriving, a websocket session not
        yet closed on both sides (written when it is), a recording being written."""
        return bool(self._unfinished) or self._writes > 0

    def handle(self, request: Request) -> Decision:
        try:
            decision = super().handle(request)
        except CassetteMiss as miss:
            with self._misses_lock:
                self.miss_messages.append((request, str(miss)))
            raise
        if isinstance(decision, Record) and self.record_mode.writes_cassette:
            self._learn(request)
        return decision


def _plain(url: str) -> str:
    """``url`` without its query, a websocket's with its HTTP scheme: what tells two upstreams apart."""
    url = url.split("?", 1)[0]
    return "http" + url[2:] if url.startswith("ws") else url

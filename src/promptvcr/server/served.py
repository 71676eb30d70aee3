"""A cassette as ``promptvcr serve`` uses it: written as it records, and knowing its upstreams.

Three differences from an in-process :class:`~promptvcr.Cassette`, each because a server is a
long-lived process that other programs stop as they like:

- **Written at once.** In record mode each interaction is appended to the file as soon as its
  response is complete (the persister's own append, under the file's lock), not when the
  server stops: a server killed with SIGKILL (the OOM killer, a CI timeout, ``docker kill``)
  loses at most the requests in flight. A response still arriving when the server is stopped
  is written as far as it arrived (``end: closed``) and listed in :attr:`cut_short`.
- **Its upstreams kept.** A request recorded through the server keeps, in the stored header
  ``x-promptvcr-upstream``, the upstream it was sent to (``openai=http://127.0.0.1:8000``), so
  that a later replay finds ``openai`` there without the ``--upstream`` given at recording.
- **Its misses kept with their messages**, for the admin stop and the report: a client that
  swallowed the provider-shaped 404 still has its test failed by them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cassette import Cassette
from ..cassettes.models import Request, Response
from ..errors import CassetteError, CassetteMiss
from ..files import persister, storage
from ..interceptors.decision import Decision, Record
from ..policies.modes import RecordMode

__all__ = ["UPSTREAM_HEADER", "ServedCassette"]

#: Stored on each request recorded through the server: ``NAME=URL`` of the upstream it went to.
UPSTREAM_HEADER = "x-promptvcr-upstream"


class ServedCassette(Cassette):
    """A :class:`~promptvcr.Cassette` entered by the server; see the module's docstring."""

    def __init__(self, path: str | Path, **options: Any) -> None:
        super().__init__(path, **options)
        kept = self.writing.request_headers | {UPSTREAM_HEADER}
        self.writing = persister.Writing(
            kept,
            self.writing.response_headers,
            self.writing.allowed_secrets,
            self.writing.before_record_request,
            self.writing.before_record_response,
        )
        self._write_lock = threading.Lock()
        self._loaded_count = 0
        self._written = 0
        #: The file as last written (its signature), so the next append adds to it without
        #: parsing it again (see :func:`promptvcr.files.persister.append`).
        self._on_disk = persister.Loaded([], exists=False)
        #: Each miss answered to a client: the request and the message it was given.
        self.miss_messages: list[tuple[Request, str]] = []
        #: Writing errors (a refused secret, a full disk), one line each.
        self.errors: list[str] = []
        #: Responses the server's stop cut short: written as far as they arrived.
        self.cut_short: list[Request] = []
        #: Upstream name -> the URLs the cassette's requests were recorded from, latest first.
        self.upstreams: dict[str, list[str]] = {}
        self._urls: set[str] = set()

    def __enter__(self) -> ServedCassette:
        super().__enter__()
        held = self.interactions
        self._loaded_count = len(held) if self.record_mode is RecordMode.RECORD else 0
        self._written = 0
        self._on_disk = self._loaded
        self.miss_messages, self.errors, self.cut_short = [], [], []
        for interaction in held:
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

    def handle(self, request: Request) -> Decision:
        try:
            decision = super().handle(request)
        except CassetteMiss as miss:
            with self._write_lock:
                self.miss_messages.append((request, str(miss)))
            raise
        if isinstance(decision, Record) and self.record_mode is RecordMode.RECORD:
            self._learn(request)
            return Record(_WrittenAtOnce(decision.recorder, self.flush))
        return decision

    def flush(self) -> None:
        """Append what was recorded and not written yet (record mode); errors go to :attr:`errors`."""
        with self._write_lock:
            held = self.interactions
            new = held[self._loaded_count + self._written :]
            if not new:
                return
            self._written += len(new)  # a refused one is not tried again
            try:
                self.writing.append(self.path, new, self._on_disk)
                text = storage.read_text(self.path)  # hashed, not parsed: 1,000 recordings stay linear
            except CassetteError as error:
                self.errors.append(str(error))
                text = None
            self._on_disk = persister.Loaded([], exists=text is not None, signature=_signature(text))

    def _save(self, body_raised: bool) -> None:
        if self.record_mode is RecordMode.RECORD:
            self.flush()  # written as each completed: only what is left
        else:
            super()._save(body_raised)


def _signature(text: str | None) -> tuple[int, int] | None:
    return None if text is None else (len(text), hash(text))


def _plain(url: str) -> str:
    """``url`` without its query, a websocket's with its HTTP scheme: what tells two upstreams apart."""
    url = url.split("?", 1)[0]
    return "http" + url[2:] if url.startswith("ws") else url


class _WrittenAtOnce:
    """The cassette's recorder, then the write of what it recorded."""

    __slots__ = ("_flush", "_recorder")

    def __init__(self, recorder: Any, flush: Callable[[], None]) -> None:
        self._recorder, self._flush = recorder, flush

    def started(self) -> None:
        self._recorder.started()

    def __call__(self, response: Response) -> None:
        self._recorder(response)
        self._flush()

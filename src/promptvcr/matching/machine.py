"""The replaying machine: a live request seen as its recording holds it, an answer given back
with this machine's own values.

A cassette recorded on one machine holds ``<home>``, ``<project>``, ``<user>``... where that
machine's values were (:mod:`promptvcr.identity`, applied by :mod:`promptvcr.files.redaction`).
Replaying elsewhere, the code under test sends *this* machine's paths and names: the request
is keyed with them replaced the same way, so the recording matches on any machine; and the
answer's placeholders become this machine's values, so the code reads paths that exist where
it runs (a websocket's or an MCP server's frames too, on both sides: the code's own frames are
compared as it sends them here). Only the placeholders an interaction's marker lists
(``identity: [home, user]``) are restored: an answer that says ``<home>`` itself is left as
the provider wrote it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence

from ..cassettes.bodyfiles import SLICE
from ..cassettes.largebody import ChunkedText
from ..cassettes.largejson import stand_in
from ..cassettes.models import Interaction, Request, Response
from ..cassettes.spool import ChunksOnDisk, SpooledChunks, byte_slices
from ..cassettes.timing import Timing
from ..cassettes.wsframes import Frame, WebSocketSession, with_session
from ..identity import Identity, IdentityOptions, Restorer, restorer

__all__ = ["Machine"]


class Machine:
    """This machine's values for one use of a cassette (read when it is entered), and the
    cassette's ``interactions`` (loaded)."""

    def __init__(self, options: IdentityOptions | None, interactions: Sequence[Interaction] = ()) -> None:
        self._values = () if options is None else options.values()
        self._identity = Identity(self._values) if self._values else None
        self._restorers: dict[tuple[str, ...], Restorer | None] = {}
        self._interactions = interactions
        self._marked: bool | None = None

    def seen(self, request: Request) -> Request:
        """``request`` with this machine's values replaced in its URL and body, as its recording
        holds them; ``request`` itself when it holds none (one search in C), or, not even
        searched, when the cassette holds no placeholder of ours (most: nothing recorded held
        the machine's values, or it was recorded with ``identity=False`` or before, and its
        requests match as they are). Headers are left: no default rule keys on a header that
        holds a path or a name."""
        identity = self._identity
        if identity is None or not self._holds_placeholders():  # looked at once a use
            return request
        url, content = identity.text(request.url), identity.content(request.content)
        strings = request.strings
        if strings:  # a large request's document: its long strings are looked into too
            content, strings = _strings_seen(identity, content, strings)
        if url == request.url and content == request.content:
            return request
        return Request(request.method, url, request.headers, content, strings)

    def _holds_placeholders(self) -> bool:
        if self._marked is None:  # at the first request: most uses send none
            loaded = self._interactions
            marked = getattr(loaded, "identity_marked", None)
            self._marked = marked() if marked is not None else any(i.identity for i in loaded)
        return self._marked

    def answer(self, interaction: Interaction, response: Response) -> Response:
        """``response`` (of ``interaction``) with the placeholders its marker lists restored to
        this machine's values, in its headers and body; ``response`` itself when it has none."""
        if not interaction.identity or not self._values:
            return response
        if interaction.identity in self._restorers:
            back = self._restorers[interaction.identity]
        else:
            back = self._restorers[interaction.identity] = restorer(self._values, interaction.identity)
        if back is None:
            return response
        if (session := response.websocket) is not None:  # both sides: the code's frames are compared
            frames = [_restored_frame(frame, back) for frame in session.frames]
            return with_session(response, WebSocketSession(frames, session.transport))
        kind = response.content_type
        json_text = kind.endswith(("json", "event-stream", "ndjson"))
        timing = response.timing
        if isinstance(response.chunks, ChunksOnDisk):  # a body file: restored into a spool, a slice at a time
            slices = back.content_pieces(byte_slices(response.chunks, SLICE), json_text=json_text)
            chunks: Sequence[bytes] = SpooledChunks(slices)
            if timing is not None and len(timing.chunks) != len(chunks):  # slices cut elsewhere now
                timing = Timing(timing.headers)
        else:
            chunks = [back.content(chunk, json_text=json_text) for chunk in response.chunks]
        return dataclasses.replace(
            response,
            headers={name: back.text(value) for name, value in response.headers.items()},
            chunks=chunks,
            timing=timing,
        )


def _strings_seen(
    identity: Identity, document: bytes, strings: Mapping[str, Sequence[bytes]]
) -> tuple[bytes, Mapping[str, Sequence[bytes]]]:
    """A large request's document and long strings (:mod:`promptvcr.cassettes.largejson`) with
    the machine's values replaced in the strings, a slice at a time, as the recording's writer
    replaced them (the same walk); a string changed gets the stand-in of its new bytes."""
    from ..credentials.masking import Masker  # what replaces a value a slice at a time: rarely needed

    masker = Masker(substitution=identity)
    seen: dict[str, Sequence[bytes]] = {}
    for name, chunks in strings.items():
        body = ChunkedText(chunks)
        replaced = masker.data({name: body})[name]
        if replaced is body:
            seen[name] = chunks
            continue
        digest, size = hashlib.sha256(), 0
        for piece in byte_slices(replaced.chunks, SLICE):
            digest.update(piece)
            size += len(piece)
        now = stand_in(size, digest.hexdigest())
        seen[now] = replaced.chunks
        document = document.replace(json.dumps(name).encode(), json.dumps(now).encode())
    return document, seen


def _restored_frame(frame: Frame, back: Restorer) -> Frame:
    """A websocket or MCP frame with this machine's values: the server's, as the code reads them;
    the code's own, as it sends them on this machine (so that they match)."""
    if frame.kind not in ("text", "binary") or (b"<" not in frame.data and b"%3C" not in frame.data):
        return frame
    json_text = frame.data.lstrip()[:1] in (b"{", b"[")
    return dataclasses.replace(frame, data=back.content(frame.data, json_text=json_text))

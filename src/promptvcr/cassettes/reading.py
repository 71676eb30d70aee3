"""A cassette's stored items made into interactions: all of them checked when the file is
read, the headers and bodies of most made only when first used.

Reading a large cassette was mostly making bytes: each stored ``json`` body encoded back to
the bytes it replays, each header mapping copied (issue 22: 10,000 interactions in JSON took
0.32 s to read, of which ``json.loads`` was 0.09), while a test replays few of them. So an
item in the form nearly every recording has is checked here for everything that could stop
it being built, and its request and response are made with their headers and bodies left to
first use (:class:`~.models.StoredRequest`, :class:`~.models.StoredResponse`). That form
(:func:`_deferred`): a request and a response whose bodies are each a ``json`` document in
one of the two styles almost every body has (compact, or ``json.dumps``'s separators), or no
body, with nothing else beside them but headers, a status, timing and the date. Any other
item (an event stream, text, base64, an unusual style, a websocket session, an answer cut
short) is built at once, as before. Either way an error in any item is reported when the
cassette is read, never in the middle of a test.

A ``json`` body can always be encoded only when the document holds plain JSON values: one
read from JSON text, or from YAML without PyYAML's full loader (which may give dates or
bytes), and without a lone surrogate (an escape such as ``\\ud800``, which UTF-8 cannot
encode). Other documents are built at once whole (``plain=False``).
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import CassetteFormatError
from .bodies import BODY_KEYS, decode_body
from .models import Interaction, Request, Response, equal_values, values_of
from .playback import ENDS, ended
from .storedjson import encodes, json_body
from .timing import Timing, timing_from_data
from .wsframes import session_from_data, with_session

__all__ = [
    "StoredRequest",
    "StoredResponse",
    "interaction_from_data",
    "interactions",
    "unreadable",
]


def interactions(items: Sequence[Any], path: Path, *, plain: bool) -> list[Interaction]:
    """The interactions of a cassette's stored ``items``; ``plain`` when the document holds
    plain JSON values only (see the module docstring): only then are bodies left to first use.
    Raises :class:`~promptvcr.CassetteFormatError` for any item that cannot be read."""
    if not plain:
        return [interaction_from_data(item, path, index) for index, item in enumerate(items)]
    built = []
    for index, item in enumerate(items):
        interaction = _deferred(item, path, index)
        built.append(interaction_from_data(item, path, index) if interaction is None else interaction)
    return built


_ITEM_KEYS = frozenset({"request", "response", "recorded"})
_REQUEST_KEYS = frozenset({"method", "url", "headers", "json", "style"})
_RESPONSE_KEYS = frozenset({"status", "headers", "json", "style", "timing"})


def _deferred(data: Any, path: Path, index: int) -> Interaction | None:
    """``data`` as an interaction whose headers and bodies are made on first use, or ``None``
    when it is not in the form that can be built so without fail (see the module docstring):
    it is then built at once, and its errors reported."""
    if type(data) is not dict or not data.keys() <= _ITEM_KEYS:
        return None
    req, resp = data.get("request"), data.get("response")
    if type(req) is not dict or type(resp) is not dict:
        return None
    if not (req.keys() <= _REQUEST_KEYS and resp.keys() <= _RESPONSE_KEYS):
        return None
    method, url, status = req.get("method"), req.get("url"), resp.get("status")
    if type(method) is not str or type(url) is not str or type(status) is not int or not 100 <= status <= 599:
        return None
    if not (_plain_part(req) and _plain_part(resp)):
        return None
    timing: Timing | None = None
    if "timing" in resp:
        try:
            timing = timing_from_data(resp["timing"], 1 if "json" in resp else 0)
        except ValueError:
            return None
    recorded = data.get("recorded")
    source, where = _kept(data), (path, index)
    return Interaction(
        StoredRequest.of(method.upper(), url, source, where),
        StoredResponse.of(status, timing, source, where),
        None if recorded is None else _date(recorded, path, index),
    )


def _plain_part(part: dict[str, Any]) -> bool:
    """Whether ``part``'s headers and body are made without fail from plain values: headers
    that are a mapping or none, and no body, or a ``json`` document in a simple style (see
    :func:`.storedjson.encodes`)."""
    headers = part.get("headers")
    if headers is not None and type(headers) is not dict:
        return False
    if "json" in part:
        return encodes(part)
    return "style" not in part


#: A stored item is kept, until its request's and response's headers and bodies are made, as
#: :mod:`marshal` writes it: one ``bytes`` instead of the dozens of containers of a parsed
#: document, which every garbage collection would walk again (issue 22: 59 ms for the first one
#: after reading 10,000 interactions, against 10 ms with this), and the form the parse cache keeps.
_kept = marshal.dumps


class StoredRequest(Request):
    """A :class:`~.models.Request` read from a cassette, its headers and body made on first use.

    The method and URL are there from the start (what a report of unused interactions reads);
    the headers and body are made together when either is first read, from the stored item
    kept as ``source`` (see :data:`_kept`), item ``where[1]`` of the cassette ``where[0]``,
    exactly as :func:`interaction_from_data` makes them. It compares equal to a ``Request``
    with the same values, and is copied or pickled as one.
    """

    __slots__ = ("_source", "_where")

    _source: bytes | None
    _where: tuple[Path, int]

    @classmethod
    def of(cls, method: str, url: str, source: bytes, where: tuple[Path, int]) -> StoredRequest:
        request = cls.__new__(cls)
        request.method = method
        request.url = url
        request._source = source
        request._where = where
        return request

    @property
    def unmade(self) -> bytes | None:
        """What the headers and body are to be made from, or ``None`` once they are."""
        return self._source

    def __getattr__(self, name: str) -> Any:
        # Only reached for a slot still unset: the headers or body, made now, once; or the
        # source of one built by ``dataclasses.replace`` (made from its values).
        if name == "headers" or name == "content":
            path, index = self._where
            stored = marshal.loads(self._source)["request"]  # type: ignore[arg-type]
            self.headers = _headers(stored.get("headers"), path, index, "request")
            self.content = b"".join(_body(stored, path, index, "request"))
            self._source = None  # made once: what it held may go
            return getattr(self, name)
        if name == "_source":
            return None
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return equal_values(Request, self, other) if isinstance(other, Request) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[Request], tuple[Any, ...]]:
        return Request, values_of(Request)(self)


class StoredResponse(Response):
    """A :class:`~.models.Response` read from a cassette, its headers and chunks made on first
    use (see :class:`StoredRequest`): most of a large cassette's answers are never replayed.
    Only an answer with one plain body is stored so (see :func:`_deferred`): its status and
    timing are there from the start, it ended ``complete``, and it is no websocket session.
    """

    __slots__ = ("_source", "_where")

    _source: bytes | None
    _where: tuple[Path, int]

    @classmethod
    def of(cls, status: int, timing: Timing | None, source: bytes, where: tuple[Path, int]) -> StoredResponse:
        response = cls.__new__(cls)
        response.status = status
        response.timing = timing
        response.playback = None
        response.end = "complete"
        response.websocket = None
        response.wire_headers = None
        response.usage = None
        response._source = source
        response._where = where
        return response

    @property
    def unmade(self) -> bytes | None:
        """What the headers and chunks are to be made from, or ``None`` once they are."""
        return self._source

    def __getattr__(self, name: str) -> Any:
        # As StoredRequest's: the headers or chunks, made now, once.
        if name == "headers" or name == "chunks":
            path, index = self._where
            stored = marshal.loads(self._source)["response"]  # type: ignore[arg-type]
            self.headers = _headers(stored.get("headers"), path, index, "response")
            self.chunks = _body(stored, path, index, "response")
            self._source = None
            return getattr(self, name)
        if name == "_source":
            return None
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return equal_values(Response, self, other) if isinstance(other, Response) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[Response], tuple[Any, ...]]:
        return Response, values_of(Response)(self)


def _date(value: Any, path: Path, index: int) -> datetime:
    """A stored date (text; a hand-written YAML timestamp is read as one too), in UTC."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            return _utc_date(str(value))
        except ValueError:
            raise unreadable(
                path,
                f"interactions[{index}].recorded is {value!r}, expected a date like 2026-11-24T06:00:00Z.",
            ) from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


@functools.lru_cache(maxsize=1024)  # interactions recorded in the same second share their date
def _utc_date(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def unreadable(path: Path, what: str) -> CassetteFormatError:
    """The error for a cassette file that cannot be read: what is wrong, and what to do."""
    return CassetteFormatError(
        f"Cassette {path} cannot be read: {what}\n"
        f"It was left untouched. Fix or delete it, then record it again "
        f"(PROMPTVCR_RECORD_MODE=rewrite).",
        path=path,
    )


def _headers(value: Any, path: Path, index: int, part: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        where = f"interactions[{index}].{part}"
        raise unreadable(path, f"{where}.headers is a {type(value).__name__}, expected a mapping.")
    return {str(k).lower(): str(v) for k, v in value.items()}


def _body(data: dict[str, Any], path: Path, index: int, part: str) -> list[bytes]:
    if "json" in data and not ("events" in data or "frames" in data or "text" in data or "base64" in data):
        try:  # the common case, checked without building the list of body keys
            content = json_body(data)  # the common styles, by a kept encoder (see .storedjson)
        except (ValueError, TypeError):
            content = None  # decode_body reports it
        if content is not None:
            return [content]
    present = [key for key in BODY_KEYS if key in data]
    if len(present) > 1:
        where = f"interactions[{index}].{part}"
        raise unreadable(path, f"{where} has more than one body ({', '.join(present)}); keep one.")
    try:
        return decode_body(data)
    except (ValueError, TypeError) as error:
        where = f"interactions[{index}].{part}"
        raise unreadable(path, f"{where}.{present[0]} is not a valid body ({error}).") from None


def interaction_from_data(data: Any, path: Path, index: int) -> Interaction:
    # Messages name the item (``interactions[3].response``); built only for an error.
    if not isinstance(data, dict) or not isinstance(data.get("request"), dict):
        raise unreadable(path, f"interactions[{index}] has no request mapping.")
    if not isinstance(data.get("response"), dict):
        raise unreadable(path, f"interactions[{index}] has no response mapping.")
    req, resp = data["request"], data["response"]
    if "uri" in req or isinstance(resp.get("status"), dict):
        raise unreadable(
            path, f"it is a vcrpy cassette. Convert it with: promptvcr import-vcr {path} --out DIR"
        )
    method, url = req.get("method"), req.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise unreadable(path, f"interactions[{index}].request needs a method and a url.")
    status = resp.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise unreadable(
            path, f"interactions[{index}].response.status is {status!r}, expected an HTTP status code."
        )
    request = Request(
        method.upper(),
        url,
        _headers(req.get("headers"), path, index, "request"),
        b"".join(_body(req, path, index, "request")),
    )
    response = Response(
        status, _headers(resp.get("headers"), path, index, "response"), _body(resp, path, index, "response")
    )
    if "websocket" in resp:
        try:
            response = with_session(response, session_from_data(resp["websocket"]))
        except ValueError as error:
            raise unreadable(path, f"interactions[{index}].response.{error}.") from None
    if "timing" in resp:
        try:
            response.timing = timing_from_data(resp["timing"], len(response.chunks))
        except ValueError as error:
            raise unreadable(path, f"interactions[{index}].response.{error}.") from None
    if "end" in resp:
        end = resp["end"]
        if end not in ENDS:
            raise unreadable(
                path, f"interactions[{index}].response.end is {end!r}, expected one of {', '.join(ENDS)}."
            )
        response.end = end
        response.playback = ended(end, len(response.chunks), f" in {path}")
    recorded = data.get("recorded")
    return Interaction(request, response, None if recorded is None else _date(recorded, path, index))

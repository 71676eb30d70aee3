"""Cassette files: YAML (default) or JSON, read with a safe loader, written for review.

Layout::

    interactions:
    - request:  {method, url, headers, <body>}
      response: {status, headers, <body>}
    version: 1

Each interaction recorded by promptvcr also holds ``recorded: "2026-11-24T06:00:00Z"``, the
date it was recorded (UTC, quoted so that YAML reads it as text), which ``max_age`` measures;
older cassettes have none and load as before (their age is unknown). A response also holds
``timing: {headers: s, chunks: [s, ...]}`` (see :mod:`.timing`); it is optional, so
cassettes written without it load as before.
``version`` comes last on purpose: a file cut short loses it, so truncation is reported
as such instead of silently replaying fewer interactions. Bodies use the keys of
:mod:`.bodies`. Secrets are removed here, on the way to the file, for every mode.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import CassetteFormatError
from . import jsonwriter
from .bodies import BODY_KEYS, decode_body, drop_stale_raw, encode_chunks, stored_chunk_count
from .models import Interaction, Request, Response
from .playback import ENDS, ended
from .redact import (
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    keep_headers,
    may_need_redaction,
    redact_form_fields,
    redact_json_fields,
    redact_query_values,
    redact_url,
)
from .scantext import json_text, scan_text
from .storedjson import json_body
from .timing import timing_from_data, timing_to_data
from .wsframes import session_from_data, session_to_data, with_session

__all__ = [
    "FORMAT_VERSION",
    "appended_pieces",
    "date_text",
    "dump_pieces",
    "dumps",
    "interaction_from_data",
    "interaction_to_data",
    "is_json_path",
    "load_document",
    "loads",
    "stored_with_text",
]

FORMAT_VERSION = 1


def is_json_path(path: Path) -> bool:
    return path.suffix.lower() == ".json"


def _redact_body(data: dict[str, Any], content_type: str) -> None:
    """Credential fields and query values out of the stored body in ``data``, in place."""
    for key in ("json", "events", "frames"):
        if key in data:
            data[key] = redact_json_fields(original := data[key])
            drop_stale_raw(data, key, original)
    if isinstance(data.get("text"), str):
        form = content_type == _FORM
        data["text"] = redact_form_fields(data["text"]) if form else redact_query_values(data["text"])


_FORM = "application/x-www-form-urlencoded"


def date_text(moment: datetime) -> str:
    """A recorded date as stored: ISO 8601 in UTC to the second, ``2026-11-24T06:00:00Z``.
    Interactions recorded in the same second share the text of the last one written."""
    global _last_date
    if moment.tzinfo is not None and moment.tzinfo is not timezone.utc:
        moment = moment.astimezone(timezone.utc)
    second = (moment.second, moment.minute, moment.hour, moment.day, moment.month, moment.year)
    last = _last_date
    if last[0] == second and type(moment) is datetime:
        return last[1]
    text = moment.replace(tzinfo=None, microsecond=0).isoformat() + "Z"
    if type(moment) is datetime:
        _last_date = (second, text)  # one assignment: for threads
    return text


_last_date: tuple[tuple[int, ...], str] = ((), "")


def _date(value: Any, path: Path, index: int) -> datetime:
    """A stored date (text; a hand-written YAML timestamp is read as one too), in UTC."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            return _utc_date(str(value))
        except ValueError:
            raise _fail(
                path,
                f"interactions[{index}].recorded is {value!r}, expected a date like 2026-11-24T06:00:00Z.",
            ) from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


@functools.lru_cache(maxsize=1024)  # interactions recorded in the same second share their date
def _utc_date(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def interaction_to_data(
    interaction: Interaction,
    *,
    request_headers: Iterable[str] = REQUEST_HEADERS,
    response_headers: Iterable[str] = RESPONSE_HEADERS,
) -> dict[str, Any]:
    """The stored form of an interaction, with every credential removed."""
    return _to_data(interaction, request_headers, response_headers, redact_bodies=True)


def stored_with_text(
    interaction: Interaction,
    *,
    request_headers: Iterable[str] = REQUEST_HEADERS,
    response_headers: Iterable[str] = RESPONSE_HEADERS,
    for_scan: bool = False,
) -> tuple[dict[str, Any], str | None]:
    """:func:`interaction_to_data`, and its text as ``json.dumps(..., ensure_ascii=False)``
    writes it (``None`` for data JSON cannot hold: a large body), or ``for_scan`` a text the
    credential searches find the same things in (:func:`.scantext.scan_text`). The bodies' fields are
    looked at one by one only when that text shows a credential field name or a URL query
    (see :func:`.redact.may_need_redaction`), or a body is a form; else they are kept as
    parsed, which is what redaction would have left of them."""
    types = (interaction.request.content_type, interaction.response.content_type)  # read once
    data = _to_data(interaction, request_headers, response_headers, redact_bodies=False, types=types)
    text = scan_text(data, interaction) if for_scan else json_text(data)
    if text is None or may_need_redaction(text, text.lower()) or _FORM in types:
        _redact_body(data["request"], types[0])
        _redact_body(data["response"], types[1])
        text = json_text(data)
    return data, text


def _to_data(
    interaction: Interaction,
    request_headers: Iterable[str],
    response_headers: Iterable[str],
    *,
    redact_bodies: bool,
    types: tuple[str, str] | None = None,
) -> dict[str, Any]:
    req, resp = interaction.request, interaction.response
    req_type, resp_type = types or (req.content_type, resp.content_type)
    request: dict[str, Any] = {"method": req.method.upper(), "url": redact_url(req.url)}
    if headers := keep_headers(req.headers, request_headers):
        request["headers"] = headers
    request_body = encode_chunks([req.content], req_type)
    if redact_bodies:
        _redact_body(request_body, req_type)
    request.update(request_body)
    response: dict[str, Any] = {"status": resp.status}
    if headers := keep_headers(resp.headers, response_headers):
        response["headers"] = headers
    dated = {} if interaction.recorded is None else {"recorded": date_text(interaction.recorded)}
    if resp.websocket is not None:  # its frames, each with its own time (see .wsframes)
        return {
            "request": request,
            "response": {**response, "websocket": session_to_data(resp.websocket)},
            **dated,
        }
    body = encode_chunks(resp.chunks, resp_type, streamed_events=resp.is_event_stream)
    if redact_bodies:
        _redact_body(body, resp_type)
    response.update(body)
    if resp.end != "complete":
        response["end"] = resp.end
    if resp.timing is not None:
        response["timing"] = timing_to_data(
            resp.timing, resp.chunks, body_key=next(iter(body), ""), stored_chunks=stored_chunk_count(body)
        )
    return {"request": request, "response": response, **dated}


def _fail(path: Path, what: str) -> CassetteFormatError:
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
        raise _fail(path, f"{where}.headers is a {type(value).__name__}, expected a mapping.")
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
        raise _fail(path, f"{where} has more than one body ({', '.join(present)}); keep one.")
    try:
        return decode_body(data)
    except (ValueError, TypeError) as error:
        where = f"interactions[{index}].{part}"
        raise _fail(path, f"{where}.{present[0]} is not a valid body ({error}).") from None


def interaction_from_data(data: Any, path: Path, index: int) -> Interaction:
    # Messages name the item (``interactions[3].response``); built only for an error.
    if not isinstance(data, dict) or not isinstance(data.get("request"), dict):
        raise _fail(path, f"interactions[{index}] has no request mapping.")
    if not isinstance(data.get("response"), dict):
        raise _fail(path, f"interactions[{index}] has no response mapping.")
    req, resp = data["request"], data["response"]
    if "uri" in req or isinstance(resp.get("status"), dict):
        raise _fail(path, f"it is a vcrpy cassette. Convert it with: promptvcr import-vcr {path} --out DIR")
    method, url = req.get("method"), req.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise _fail(path, f"interactions[{index}].request needs a method and a url.")
    status = resp.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise _fail(
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
            raise _fail(path, f"interactions[{index}].response.{error}.") from None
    if "timing" in resp:
        try:
            response.timing = timing_from_data(resp["timing"], len(response.chunks))
        except ValueError as error:
            raise _fail(path, f"interactions[{index}].response.{error}.") from None
    if "end" in resp:
        end = resp["end"]
        if end not in ENDS:
            raise _fail(
                path, f"interactions[{index}].response.end is {end!r}, expected one of {', '.join(ENDS)}."
            )
        response.end = end
        response.playback = ended(end, len(response.chunks), f" in {path}")
    recorded = data.get("recorded")
    return Interaction(request, response, None if recorded is None else _date(recorded, path, index))


def load_document(text: str, path: Path) -> list[dict[str, Any]]:
    """The stored interactions of a cassette file's text, checked for version and shape."""
    if is_json_path(path):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise _fail(path, f"it is not valid JSON: {error}.") from None
    else:
        document = _yaml_document(text, path)
    if not isinstance(document, dict):
        raise _fail(path, "the top level is not a mapping with 'interactions' and 'version'.")
    version = document.get("version")
    if version is None:
        raise _fail(
            path,
            "it has no 'version' field, which a promptvcr cassette ends with: the file was cut short, "
            "or it is not a promptvcr cassette.",
        )
    if type(version) is not int:  # ``true`` equals 1 in Python, and ``1.0`` is no format version
        raise _fail(path, f"'version' is {version!r}, not a format version number (this promptvcr writes 1).")
    if version != FORMAT_VERSION:
        raise _fail(
            path,
            f"format version {version!r} is unknown; this promptvcr reads version {FORMAT_VERSION}. "
            f"A newer promptvcr may have written it: upgrade promptvcr.",
        )
    interactions = document.get("interactions") or []
    if not isinstance(interactions, list):
        raise _fail(path, "'interactions' is not a list.")
    return interactions


def _yaml_document(text: str, path: Path) -> Any:
    """The YAML text's document. PyYAML (and the readers built on it) is imported here, at
    the first YAML text parsed: a process that replays from the parse cache, or only JSON,
    never pays its import (~15 ms, a quarter of what entering a first cassette costs)."""
    import yaml

    from . import yamlreader

    try:
        return yamlreader.load(text)
    except yamlreader.TooDeep:
        depth = yamlreader.MAX_YAML_DEPTH
        raise _fail(path, f"it is nested more than {depth} levels deep; no recording is.") from None
    except yamlreader.Refused as error:
        raise _fail(path, f"{error}.") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise _fail(path, f"it is not valid YAML{at}: {error.problem}.") from None
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise _fail(path, f"it is not valid YAML: {error}.") from None


def loads(text: str, path: Path) -> list[Interaction]:
    """The interactions of a cassette file's text; ``CassetteFormatError`` for anything else."""
    return [interaction_from_data(item, path, index) for index, item in enumerate(load_document(text, path))]


def _yaml_items(data: list[dict[str, Any]]) -> Iterator[str]:
    from .yamlwriter import Flow, sequence_items  # with PyYAML: on the first YAML write

    for item in data:
        response = item.get("response") if isinstance(item, dict) else None
        if isinstance(response, dict) and isinstance(response.get("timing"), dict):
            response["timing"] = Flow(response["timing"])
    return sequence_items(data)


def dump_pieces(data: list[dict[str, Any]], path: Path) -> Iterator[str]:
    """File text for interactions already in stored form (see :func:`interaction_to_data`),
    in pieces: a writer streams them to disk, so a large body is never held as one string."""
    if is_json_path(path):
        yield from jsonwriter.document_pieces(data, FORMAT_VERSION)
        return
    if not data:
        yield f"interactions: []\nversion: {FORMAT_VERSION}\n"
        return
    yield "interactions:\n"
    yield from _yaml_items(data)
    yield f"version: {FORMAT_VERSION}\n"


#: Lines at the left margin of a YAML cassette other than its items (``- ``), comments and
#: blank lines: in the layout promptvcr writes, exactly the two keys of the document.
_TOP_LEVEL_LINE = re.compile(r"^(?!- )[^\s#].*$", re.MULTILINE)
_VERSION_LINE = f"version: {FORMAT_VERSION}\n"
#: The items start at the left margin, after any comments and blank lines.
_ITEMS_START = re.compile(r"interactions:\n(?:[ \t]*(?:#[^\n]*)?\n)*- ")


def appended_pieces(text: str, data: list[dict[str, Any]], path: Path) -> Iterator[str] | None:
    """``text`` with ``data`` appended as its last interactions, without parsing ``text``;
    ``None`` when ``text`` is not in the layout this needs (the caller then merges parsed data).

    For a file the caller has read and loaded before (so it is a valid cassette): record
    mode appends without re-reading every stored interaction, and what was in the file
    (comments a reviewer added, its quoting) stays exactly as it was.
    """
    if is_json_path(path) or not _ITEMS_START.match(text) or not text.endswith("\n" + _VERSION_LINE):
        return None
    if _TOP_LEVEL_LINE.findall(text) != ["interactions:", _VERSION_LINE.rstrip("\n")]:
        return None

    def pieces() -> Iterator[str]:
        yield text[: -len(_VERSION_LINE)]
        yield from _yaml_items(data)
        yield _VERSION_LINE

    return pieces()


def dumps(data: list[dict[str, Any]], path: Path) -> str:
    """The whole file text (see :func:`dump_pieces`), for callers that want one string."""
    return "".join(dump_pieces(data, path))

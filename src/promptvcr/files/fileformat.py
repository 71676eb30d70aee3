"""Cassette files: YAML (default) or JSON, written for review (read by :mod:`.reading`).

Layout::

    interactions:
    - request:  {method, url, headers, <body>}
      response: {status, headers, <body>}
    version: 1

Each interaction recorded by promptvcr also holds ``recorded: "2026-11-24T06:00:00Z"``, the
date it was recorded (UTC, quoted so that YAML reads it as text), which ``max_age`` measures;
older cassettes have none and load as before (their age is unknown). ``identity: [home, user]``
lists the placeholders of the recording machine's values it holds (:mod:`promptvcr.identity`).
A response also holds
``timing: {headers: s, chunks: [s, ...]}`` (see :mod:`.timing`); it is optional, so
cassettes written without it load as before.
``version`` comes last on purpose: a file cut short loses it, so truncation is reported
as such instead of silently replaying fewer interactions. Bodies use the keys of
:mod:`.bodies`. Secrets are removed here, on the way to the file, for every mode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..cassettes.bodies import STRINGS, drop_stale_raw, encode_chunks, encode_request_body, stored_chunk_count
from ..cassettes.bodyfiles import body_folder, slice_count, stored_reference, write_body_file
from ..cassettes.largebody import ChunkedBody
from ..cassettes.largejson import leaves_replaced, stand_in
from ..cassettes.models import Interaction
from ..cassettes.timing import timing_to_data
from ..cassettes.wsframes import STORED_AS, session_to_data
from ..credentials.byname import (
    may_need_redaction,
    redact_form_fields,
    redact_json_fields,
    redact_query_values,
    redact_url,
    redact_urls,
)
from ..credentials.headers import REQUEST_HEADERS, RESPONSE_HEADERS, keep_headers
from ..credentials.recordtext import json_text, scan_text
from . import jsonwriter
from .reading import FORMAT_VERSION, interaction_from_data, is_json_path, load_document, loads, read

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
    "read",
    "stored_with_text",
]


def _redact_body(data: dict[str, Any], content_type: str, *, request: bool) -> None:
    """Credential fields and query values out of the stored body in ``data``, in place: by
    name in a body (its top; deeper in a request, see :mod:`..credentials.bodyfields`), never in
    a stream's events (what a model produced: only the URLs in them)."""
    for key in ("json", "events", "frames"):
        if key in data:
            original = data[key]
            data[key] = (
                redact_json_fields(original, request=request) if key == "json" else redact_urls(original)
            )
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
        _redact_body(data["request"], types[0], request=True)
        _redact_body(data["response"], types[1], request=False)
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
    request_body = encode_request_body(req.content, req.strings, req_type)
    if redact_bodies:
        _redact_body(request_body, req_type, request=True)
    request.update(request_body)
    response: dict[str, Any] = {"status": resp.status}
    if headers := keep_headers(resp.headers, response_headers):
        response["headers"] = headers
    dated: dict[str, Any] = {}
    if interaction.recorded is not None:
        dated["recorded"] = date_text(interaction.recorded)
    if interaction.identity:  # the recording machine's placeholders it holds (see promptvcr.identity)
        dated["identity"] = list(interaction.identity)
    if resp.websocket is not None:  # its frames, each with its own time (see .wsframes)
        return {
            "request": request,
            "response": {
                **response,
                STORED_AS[resp.websocket.transport]: session_to_data(resp.websocket, redact_json_fields),
            },
            **dated,
        }
    body = encode_chunks(resp.chunks, resp_type, streamed_events=resp.is_event_stream)
    if redact_bodies:
        _redact_body(body, resp_type, request=False)
    response.update(body)
    large = any(isinstance(value, ChunkedBody) for value in body.values())  # to be a body file
    if resp.end != "complete":
        response["end"] = resp.end
    if resp.timing is not None:
        response["timing"] = timing_to_data(
            resp.timing,
            resp.chunks,
            body_key="file" if large else next(iter(body), ""),
            stored_chunks=stored_chunk_count(body),
        )
    return {"request": request, "response": response, **dated}


def _yaml_items(data: list[dict[str, Any]]) -> Iterator[str]:
    from .yamlwriter import Flow, sequence_items  # with PyYAML: on the first YAML write

    for item in data:
        response = item.get("response") if isinstance(item, dict) else None
        if isinstance(response, dict) and isinstance(response.get("timing"), dict):
            response["timing"] = Flow(response["timing"])
    return sequence_items(data)


def _body_files_written(data: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """``data`` with each large body (a :class:`ChunkedBody`, masked already) written as a body
    file beside the cassette at ``path`` and replaced by its reference (see :mod:`.bodyfiles`),
    in place. Called as the file's text is made, so every body file is on disk before the
    cassette that refers to it is. A timing measured on the body before a credential was
    masked in it (another length, maybe another count of slices) keeps its headers only."""
    folder: Path | None = None
    for item in data:
        if not isinstance(item, dict):
            continue
        for part in ("request", "response"):
            stored = item.get(part)
            if not isinstance(stored, dict):
                continue
            if STRINGS in stored:  # a large request's long strings
                folder = body_folder(path) if folder is None else folder
                _strings_written(stored, folder)
            for key, value in list(stored.items()):
                if not isinstance(value, ChunkedBody):
                    continue
                folder = body_folder(path) if folder is None else folder
                reference = write_body_file(folder, value.chunks)
                kept = [
                    (k, v) if k != key else ("file", stored_reference(reference)) for k, v in stored.items()
                ]
                stored.clear()  # the reference where the body was: before the timing
                stored.update(kept)
                timing = stored.get("timing")
                if isinstance(timing, dict) and len(timing.get("chunks") or ()) != slice_count(
                    reference.size
                ):
                    del timing["chunks"]
    return data


def _strings_written(stored: dict[str, Any], folder: Path) -> None:
    """A large request's long strings (:data:`~promptvcr.cassettes.bodies.STRINGS`) written
    as body files, in place: each named by its stand-in in the document (a string a
    credential was masked in has another digest, so its stand-in is renamed); one whose stand-in
    the document no longer holds (a credential field, removed by name) is not written."""
    renamed: dict[str, str] = {}
    document = json.dumps(stored.get("json"))  # a stand-in is ASCII: written as it is, quoted
    for name, body in stored.pop(STRINGS).items():
        if f'"{name}"' not in document:  # removed by name with its field (a credential)
            continue
        reference = write_body_file(folder, body.chunks)
        if (now := stand_in(reference.size, reference.sha256)) != name:
            renamed[name] = now
    if renamed and "json" in stored:
        stored["json"] = leaves_replaced(stored["json"], lambda value: renamed.get(value, value))
        stored.pop("raw", None)  # it holds the stand-ins as they were


def dump_pieces(data: list[dict[str, Any]], path: Path) -> Iterator[str]:
    """File text for interactions already in stored form (see :func:`interaction_to_data`),
    in pieces: a writer streams them to disk, so a large body is never held as one string;
    a large body that is not JSON is written beside it (:func:`_body_files_written`)."""
    data = _body_files_written(data, path)
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
        yield from _yaml_items(_body_files_written(data, path))
        yield _VERSION_LINE

    return pieces()


def dumps(data: list[dict[str, Any]], path: Path) -> str:
    """The whole file text (see :func:`dump_pieces`), for callers that want one string."""
    return "".join(dump_pieces(data, path))

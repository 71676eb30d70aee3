"""Reading a cassette file: its text parsed, its version and every item checked, in compact form.

A file that cannot be read raises :class:`~promptvcr.CassetteFormatError` naming the item
and field at fault (``interactions[3].response.status``), before anything is replayed or
replaced. Each item is checked straight into the compact form (:mod:`.compactform`), which
the caches keep and interactions are made from; the layout itself is :mod:`.fileformat`'s.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ..cassettes.bodies import BODY_KEYS, decode_body
from ..cassettes.bodyfiles import BodyFile, BodyFileError, body_folder, reference_of
from ..cassettes.largebody import ChunkedBody
from ..cassettes.models import Interaction, Request, Response
from ..cassettes.playback import ENDS, ended
from ..cassettes.spool import ChunksOnDisk
from ..cassettes.timing import timing_from_data
from ..cassettes.wsframes import session_from_data, with_session
from ..errors import CassetteFormatError
from . import compactform
from .compactform import Compact
from .storedjson import json_body

__all__ = [
    "FORMAT_VERSION",
    "TooCostly",
    "document_interactions",
    "fail",
    "interaction_from_data",
    "is_json_path",
    "load_document",
    "loads",
    "parse_document",
    "read",
    "read_stored",
]

FORMAT_VERSION = 1


def is_json_path(path: Path) -> bool:
    return path.suffix.lower() == ".json"


class TooCostly(CassetteFormatError):
    """A file that would cost more to read than a cassette may: an alias bomb, nesting too deep."""


def fail(path: Path, what: str, kind: type[CassetteFormatError] = CassetteFormatError) -> CassetteFormatError:
    return kind(
        f"Cassette {path} cannot be read: {what}\n"
        f"It was left untouched. Fix or delete it, then record it again "
        f"(PROMPTVCR_RECORD_MODE=rewrite).",
        path=path,
    )


def _date(value: Any, path: Path, index: int) -> datetime:
    """A stored date (text; a hand-written YAML timestamp is read as one too), in UTC."""
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            return _utc_date(str(value))
        except ValueError:
            raise fail(
                path,
                f"interactions[{index}].recorded is {value!r}, expected a date like 2026-11-24T06:00:00Z.",
            ) from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


@functools.lru_cache(maxsize=1024)  # interactions recorded in the same second share their date
def _utc_date(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _headers(value: Any, path: Path, index: int, part: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        where = f"interactions[{index}].{part}"
        raise fail(path, f"{where}.headers is a {type(value).__name__}, expected a mapping.")
    for name, text in value.items():  # as promptvcr writes them: copied as they are
        if type(name) is not str or type(text) is not str or not name.islower():
            return {str(k).lower(): str(v) for k, v in value.items()}
    return dict(value)


def _body(data: dict[str, Any], path: Path, index: int, part: str) -> Sequence[bytes]:
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
        raise fail(path, f"{where} has more than one body ({', '.join(present)}); keep one.")
    try:
        if present == ["file"]:  # a large body beside the cassette: read as it is served
            return BodyFile(body_folder(path), reference_of(data["file"]))
        if present and isinstance(value := data[present[0]], ChunkedBody):  # stored form made in memory
            return value.chunks
        return decode_body(data)
    except (ValueError, TypeError) as error:
        where = f"interactions[{index}].{part}"
        if isinstance(error, BodyFileError):
            raise fail(path, f"{where}.{present[0]}: {error}.") from None
        raise fail(path, f"{where}.{present[0]} is not a valid body ({error}).") from None


def _checked(data: Any, path: Path, index: int) -> Compact | Interaction:
    """One item of the file, checked, in compact form; built whole when it holds a websocket
    session, which that form cannot. Messages name the item (``interactions[3].response``)."""
    if not isinstance(data, dict) or not isinstance(data.get("request"), dict):
        raise fail(path, f"interactions[{index}] has no request mapping.")
    if not isinstance(data.get("response"), dict):
        raise fail(path, f"interactions[{index}] has no response mapping.")
    req, resp = data["request"], data["response"]
    if "uri" in req or isinstance(resp.get("status"), dict):
        raise fail(path, f"it is a vcrpy cassette. Convert it with: promptvcr import-vcr {path} --out DIR")
    method, url = req.get("method"), req.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise fail(path, f"interactions[{index}].request needs a method and a url.")
    status = resp.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise fail(
            path, f"interactions[{index}].response.status is {status!r}, expected an HTTP status code."
        )
    request_headers = _headers(req.get("headers"), path, index, "request")
    content = b"".join(_body(req, path, index, "request"))
    response_headers = _headers(resp.get("headers"), path, index, "response")
    chunks: Sequence[bytes] = _body(resp, path, index, "response")
    session = None
    if isinstance(chunks, ChunksOnDisk) and "file" not in resp:
        # a large body of stored form made in memory (the HTML report masks what it shows):
        # its chunks as they are, in an interaction built whole (the compact form holds bytes)
        session = Response(status, response_headers, chunks)
    elif "websocket" in resp or "stdio" in resp:  # its frames are its chunks (see .wsframes.with_session)
        transport: Literal["websocket", "stdio"] = "websocket" if "websocket" in resp else "stdio"
        try:
            frames = session_from_data(resp[transport], transport)
            session = with_session(Response(status, response_headers, chunks), frames)
        except ValueError as error:
            raise fail(path, f"interactions[{index}].response.{error}.") from None
        chunks = session.chunks
    timing = None
    if "timing" in resp:
        try:
            timing = timing_from_data(resp["timing"], len(chunks))
        except ValueError as error:
            raise fail(path, f"interactions[{index}].response.{error}.") from None
    end = resp.get("end", "complete")
    if end not in ENDS:
        expected = ", ".join(ENDS)
        raise fail(path, f"interactions[{index}].response.end is {end!r}, expected one of {expected}.")
    recorded = data.get("recorded")
    date = None if recorded is None else _date(recorded, path, index)
    identity = _identity(data.get("identity", ()), path, index)
    if session is not None:  # a websocket session, or a body on disk (see above)
        if timing is not None:
            session.timing = timing
        session.end, session.playback = end, ended(end, len(chunks), f" in {path}")
        return Interaction(Request(method.upper(), url, request_headers, content), session, date, identity)
    return (
        method.upper(),
        url,
        compactform.flat_headers(request_headers),
        content,
        status,
        compactform.flat_headers(response_headers),
        tuple(chunks.reference) if isinstance(chunks, BodyFile) else tuple(chunks),
        None if timing is None else (timing.headers, tuple(timing.chunks)),
        end,
        None if date is None else compactform.date_of(date),
        identity,
    )


def _identity(names: Any, path: Path, index: int) -> tuple[str, ...]:
    """The placeholders of the recording machine an interaction holds (see :mod:`promptvcr.identity`)."""
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        expected = "expected a list of placeholder names"
        raise fail(path, f"interactions[{index}].identity is {names!r}, {expected}.")
    return tuple(names)


def interaction_from_data(data: Any, path: Path, index: int) -> Interaction:
    """The interaction an item of the file holds; ``CassetteFormatError`` for a broken one."""
    item = _checked(data, path, index)
    return item if isinstance(item, Interaction) else compactform.interaction(item, f" in {path}", path)


def parse_document(text: str, path: Path) -> Any:
    """A cassette file's text parsed (JSON or YAML, aliases within their budget), unchecked."""
    if is_json_path(path):
        try:
            return json.loads(text)
        except RecursionError:
            raise fail(path, "it is nested too deep to read; no recording is.", TooCostly) from None
        except ValueError as error:
            raise fail(path, f"it is not valid JSON: {error}.") from None
    return _yaml_document(text, path)


def load_document(text: str, path: Path) -> list[dict[str, Any]]:
    """The stored interactions of a cassette file's text, checked for version and shape."""
    return document_interactions(parse_document(text, path), path)


def document_interactions(document: Any, path: Path) -> list[dict[str, Any]]:
    """The stored interactions of a parsed cassette file, checked for version and shape."""
    if not isinstance(document, dict):
        raise fail(path, "the top level is not a mapping with 'interactions' and 'version'.")
    version = document.get("version")
    if version is None:
        raise fail(
            path,
            "it has no 'version' field, which a promptvcr cassette ends with: the file was cut short, "
            "or it is not a promptvcr cassette.",
        )
    if type(version) is not int:  # ``true`` equals 1 in Python, and ``1.0`` is no format version
        raise fail(path, f"'version' is {version!r}, not a format version number (this promptvcr writes 1).")
    if version != FORMAT_VERSION:
        raise fail(
            path,
            f"format version {version!r} is unknown; this promptvcr reads version {FORMAT_VERSION}. "
            f"A newer promptvcr may have written it: upgrade promptvcr.",
        )
    interactions = document.get("interactions") or []
    if not isinstance(interactions, list):
        raise fail(path, "'interactions' is not a list.")
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
        raise fail(path, f"it is nested more than {depth} levels deep; no recording is.", TooCostly) from None
    except yamlreader.Refused as error:
        raise fail(path, f"{error}.", TooCostly) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise fail(path, f"it is not valid YAML{at}: {error.problem}.") from None
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        raise fail(path, f"it is not valid YAML: {error}.") from None


def read(text: str, path: Path) -> tuple[list[Interaction], list[Compact] | None]:
    """The interactions of a cassette file's text, and their compact form for the caches
    (``None`` when one of them does not fit it); ``CassetteFormatError`` for anything else.
    The compact form shares the interactions' containers: write it before they are used."""
    return read_stored(load_document(text, path), path)


def read_stored(stored_items: list[Any], path: Path) -> tuple[list[Interaction], list[Compact] | None]:
    """:func:`read`, from the stored interactions of a parsed file."""
    where = f" in {path}"
    interactions: list[Interaction] = []
    compact: list[Compact] | None = []
    for index, stored in enumerate(stored_items):
        item = _checked(stored, path, index)
        if isinstance(item, Interaction):  # a websocket session: the file has no compact form
            interactions.append(item)
            compact = None
        else:
            interactions.append(compactform.interaction(item, where, path))
            if compact is not None:
                compact.append(item)
    return interactions, compact


def loads(text: str, path: Path) -> list[Interaction]:
    """The interactions of a cassette file's text; ``CassetteFormatError`` for anything else."""
    return read(text, path)[0]

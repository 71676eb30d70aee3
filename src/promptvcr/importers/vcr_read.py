"""Reading a vcrpy cassette file into its (request, response) mappings, whatever its layout.

Three layouts exist in the wild, and each is recognised by its shape, not its name:

``interactions``  plain vcrpy YAML (``interactions: [{request, response}]``), also what
                  pydantic-ai's ``parsed_body`` serializer writes (with or without ``version``)
``two-lists``     LangChain's serializer: gzipped YAML of vcrpy's in-memory form, two
                  parallel lists ``requests:`` and ``responses:``
``json``          vcrpy's JSON serializer: the ``interactions`` layout as JSON

A promptvcr cassette has the ``interactions`` layout too; its requests carry ``url`` and
promptvcr's body keys instead of vcrpy's ``uri`` and ``body``. It is reported as the
``promptvcr`` layout, so that an import or a migration leaves it as it is.

Everything is read with a safe loader: a cassette is data, never code.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..files import yamlreader

__all__ = ["RawCassette", "VcrReadError", "read_vcr_bytes", "read_vcr_file"]

_GZIP_MAGIC = b"\x1f\x8b"


class VcrReadError(Exception):
    """A file that is not a vcrpy cassette in any layout promptvcr knows; the message says why."""


@dataclass(frozen=True, slots=True)
class RawCassette:
    """The mappings of one vcrpy cassette, in recorded order, and the layout they came in."""

    layout: str
    pairs: list[tuple[Any, Any]]
    #: Top-level keys holding data besides the interactions (cassetter's ``ws_interactions``):
    #: a conversion of the pairs alone would drop them, so such a file is never converted.
    extra: tuple[str, ...] = ()


def _text(data: bytes, compressed: bool) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        what = "the gunzipped content" if compressed else "it"
        raise VcrReadError(
            f"{what} is not UTF-8 text (byte {error.start} is {data[error.start : error.start + 1]!r}): "
            f"binary data, not a YAML or JSON cassette."
        ) from None


def _parse(text: str, *, as_json: bool) -> Any:
    if as_json:
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as error:
            raise VcrReadError(f"it is not valid JSON: {error}.") from None
    try:
        return yamlreader.load(text)
    except yamlreader.TooDeep:
        raise VcrReadError(f"it is nested more than {yamlreader.MAX_YAML_DEPTH} levels deep.") from None
    except yaml.constructor.ConstructorError as error:
        raise VcrReadError(
            f"it uses a YAML tag the safe loader refuses ({error.problem}); cassettes written with "
            f"Python object tags (!!python/...) must be re-recorded or converted by hand."
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise VcrReadError(f"it is not valid YAML{at}: {error.problem}.") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise VcrReadError(f"it is not valid YAML: {error}.") from None


_VCR_ONLY = frozenset({"uri", "body", "parsed_body", "content"})
_PROMPTVCR_BODIES = frozenset({"json", "events", "frames", "text", "base64", "chunks", "end", "timing"})


def _is_promptvcr(interactions: list[Any]) -> bool:
    """promptvcr's own file: every request has ``url`` and none of vcrpy's fields."""
    parts = [
        part
        for item in interactions
        if isinstance(item, dict)
        for part in (item.get("request"), item.get("response"))
        if isinstance(part, dict)
    ]
    requests = [item.get("request") for item in interactions if isinstance(item, dict)]
    if not parts or not all(isinstance(r, dict) and "url" in r for r in requests):
        return False
    return not any(_VCR_ONLY & set(part) for part in parts) and (
        any(_PROMPTVCR_BODIES & set(part) for part in parts)
        or all(isinstance(r, dict) and "uri" not in r for r in requests)
    )


def _layout(document: Any, compressed: bool) -> RawCassette:
    if not isinstance(document, dict):
        kind = "empty" if document is None else f"a {type(document).__name__}"
        raise VcrReadError(f"the top level is {kind}, expected a mapping with 'interactions' (vcrpy).")
    if "interactions" in document:
        extra = tuple(str(k) for k, v in document.items() if k not in ("interactions", "version") and v)
        interactions = document["interactions"] or []
        if not isinstance(interactions, list):
            raise VcrReadError(f"'interactions' is a {type(interactions).__name__}, expected a list.")
        if _is_promptvcr(interactions) and not extra:
            return RawCassette("promptvcr", [(i.get("request"), i.get("response")) for i in interactions])
        pairs = []
        for item in interactions:
            if not isinstance(item, dict):
                pairs.append((None, None))
            else:
                pairs.append((item.get("request"), item.get("response")))
        return RawCassette("interactions", pairs, extra)
    if "requests" in document and "responses" in document:
        requests, responses = document["requests"] or [], document["responses"] or []
        if not isinstance(requests, list) or not isinstance(responses, list):
            raise VcrReadError("'requests' and 'responses' must both be lists.")
        if len(requests) != len(responses):
            raise VcrReadError(
                f"it has {len(requests)} requests but {len(responses)} responses; the lists must pair up."
            )
        return RawCassette(
            "two-lists" + ("+gzip" if compressed else ""), list(zip(requests, responses, strict=True))
        )
    if {"request_sample", "response_sample"} & set(document) or {"kind", "direction"} <= set(document):
        raise VcrReadError(
            "it is not an HTTP cassette (gRPC or WebSocket samples); promptvcr replays HTTP only."
        )
    found = ", ".join(sorted(map(str, document))[:6]) or "nothing"
    raise VcrReadError(
        f"unknown layout: the top level has {found}; expected 'interactions' (vcrpy) "
        f"or 'requests' and 'responses' (LangChain)."
    )


def read_vcr_bytes(data: bytes, name: str = "") -> RawCassette:
    """The raw interactions of a cassette's bytes; :class:`VcrReadError` says what is wrong."""
    compressed = data[:2] == _GZIP_MAGIC
    if compressed:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise VcrReadError(f"it starts like gzip but cannot be decompressed ({error}).") from None
    if not data.strip():
        raise VcrReadError("it is empty.")
    text = _text(data, compressed)
    if name.endswith((".json", ".json.gz")):
        document = _parse(text, as_json=True)
    else:
        try:  # vcrpy's JSON serializer under a .yaml name; JSON is also YAML, only slower to load
            document = json.loads(text) if text.lstrip()[:1] == "{" else _parse(text, as_json=False)
        except (ValueError, RecursionError):
            document = _parse(text, as_json=False)
    return _layout(document, compressed)


def read_vcr_file(path: Path) -> RawCassette:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise VcrReadError(f"it cannot be read: {error.strerror or error}.") from None
    return read_vcr_bytes(data, path.name)

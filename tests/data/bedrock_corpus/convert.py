"""Convert the vcrpy cassettes in ``original/`` (pydantic-ai's corpus) to promptvcr cassettes.

Run from the repository root: ``python tests/data/bedrock_corpus/convert.py``. It writes
``<name>.yaml`` beside this script for each ``original/<name>.yaml``. A small converter of
its own, so this test data does not depend on promptvcr's importer (another module with its
own tests): bodies as pydantic-ai's loader reads them (``parsed_body`` is ``json.dumps``-ed),
header values as text, the first value of each header, then promptvcr's own writer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat

HERE = Path(__file__).parent


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _headers(headers: dict[str, list[Any]] | None) -> dict[str, str]:
    return {name.lower(): _text(values[0]) for name, values in (headers or {}).items() if values}


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _body(side: dict[str, Any], response: bool) -> bytes:
    if "parsed_body" in side:
        return json.dumps(side["parsed_body"]).encode("utf-8")
    body = side.get("body")
    if response and isinstance(body, dict):
        body = body.get("string")
    return b"" if body is None else _bytes(body)


def convert(path: Path) -> str:
    document = yaml.safe_load(path.read_text())
    data = []
    for item in document["interactions"]:
        req, resp = item["request"], item["response"]
        request = Request(req["method"].upper(), req["uri"], _headers(req.get("headers")), _body(req, False))
        response = Response(resp["status"]["code"], _headers(resp.get("headers")), [_body(resp, True)])
        data.append(fileformat.interaction_to_data(Interaction(request, response)))
    return fileformat.dumps(data, HERE / path.name)


if __name__ == "__main__":
    for original in sorted((HERE / "original").glob("*.yaml")):
        (HERE / original.name).write_text(convert(original))
        print(f"wrote {HERE / original.name}")

"""Rules for one provider family's quirks; each is selected by host and path (see :mod:`.select`)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..parts import KeyParts
from ..select import for_families

__all__ = ["anthropic_beta_query", "default_tool_type", "drop_seed", "vertex_project_location"]


@for_families("anthropic")
def anthropic_beta_query(parts: KeyParts) -> KeyParts:
    """``?beta=true`` left out of Anthropic keys.

    Real case: anthropic SDKs before 2.0 marked ``client.beta.*`` calls with ``?beta=true``
    and later ones do not; the beta features themselves are chosen by the
    ``anthropic-beta`` header and the body. All 81 anthropic corpus cassettes carry it.
    """
    if not any(k == "beta" for k, _ in parts.query):
        return parts
    return replace(parts, query=tuple((k, v) for k, v in parts.query if k != "beta"))


_VERTEX_PATH = re.compile(r"/projects/[^/]+/locations/[^/]+/")


@for_families("google")
def vertex_project_location(parts: KeyParts) -> KeyParts:
    """Vertex AI's project and location left out of the path.

    Real case: ``google-vertex`` cassettes were recorded in one GCP project and region and
    replay in CI under another; the model and request are the same (pydantic-ai's own
    matcher ignores them too). The host already is not part of any key.
    """
    if "/projects/" not in parts.path:
        return parts
    return replace(parts, path=_VERTEX_PATH.sub("/projects/-/locations/-/", parts.path, count=1))


def _with_type(tool: Any) -> Any:
    if isinstance(tool, dict) and "function" in tool and "type" not in tool:
        return {"type": "function", **tool}
    return tool


@for_families("mistral")
def default_tool_type(parts: KeyParts) -> KeyParts:
    """A tool without ``type`` is a ``"function"`` tool, as Mistral documents.

    Real case: pydantic-ai sent Mistral tools as ``{"function": {...}}``; the mistralai
    SDK fills in ``"type": "function"`` (``mistral/test_tool_choice_matrix[...]``).
    """
    body = parts.body
    if not isinstance(body, dict) or not isinstance(body.get("tools"), list):
        return parts
    tools = [_with_type(t) for t in body["tools"]]
    if all(a is b for a, b in zip(tools, body["tools"], strict=True)):
        return parts
    return replace(parts, body={**body, "tools": tools})


def drop_seed(parts: KeyParts) -> KeyParts:
    """``seed`` (and Mistral's ``random_seed``) left out of the key. Not a default rule.

    A seed changes the answer, so it is part of the key unless a framework fills it in at
    random per call, as some agent frameworks do; then add this rule to that cassette.
    """
    body = parts.body
    if isinstance(body, dict) and ("seed" in body or "random_seed" in body):
        return replace(parts, body={k: v for k, v in body.items() if k not in ("seed", "random_seed")})
    return parts

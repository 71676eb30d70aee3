"""What a folder of cassettes holds: per cassette and per interaction, provider, model, tokens.

The ``ls``, ``stats`` and ``prune`` commands read cassettes only through here, so they agree
on what a cassette is: a ``.yaml``/``.yml``/``.json`` file that loads as a promptvcr cassette.
Other files in the folder (READMEs, vcrpy cassettes, data) are reported as skipped, never
touched. Tokens are the provider's own ``usage`` counts (see :mod:`.cassettes.tokens`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..cassettes.eventstream import is_event_stream as is_aws_event_stream
from ..cassettes.models import Interaction, Response
from ..cassettes.providers import provider_label
from ..cassettes.tokens import Tokens, tokens_of
from ..errors import CassetteError
from ..files import guarded

__all__ = ["CASSETTE_SUFFIXES", "CassetteSummary", "InteractionSummary", "find_cassettes", "summarize"]

CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")
#: Model named in the URL: Gemini ``models/<id>:generateContent`` (the ``:`` starts the method),
#: Bedrock ``/model/<id>/invoke`` (the ``:`` is part of the id: ``...-v1:0``, sent raw or as ``%3A``).
_URL_MODEL = re.compile(r"/models/([^/:]+)|/model/([^/]+)")


@dataclass(frozen=True)
class InteractionSummary:
    provider: str
    model: str
    streamed: bool
    tokens: Tokens


@dataclass(frozen=True)
class CassetteSummary:
    path: Path
    size: int
    modified: float
    """Seconds since the epoch, from the file system."""
    interactions: tuple[InteractionSummary, ...]

    @property
    def providers(self) -> list[str]:
        return sorted({i.provider for i in self.interactions})

    @property
    def models(self) -> list[str]:
        return sorted({i.model for i in self.interactions if i.model})

    @property
    def streamed(self) -> str:
        """``yes``, ``no`` or ``mixed``: whether its answers were streamed."""
        kinds = {i.streamed for i in self.interactions}
        return "mixed" if len(kinds) > 1 else ("yes" if kinds == {True} else "no")

    @property
    def unknown_tokens(self) -> int:
        """How many answers recorded no usage (their tokens are unknown, not zero)."""
        return sum(1 for i in self.interactions if i.tokens.total == 0)

    @property
    def tokens(self) -> Tokens:
        total = Tokens()
        for interaction in self.interactions:
            total += interaction.tokens
        return total


def model_of(interaction: Interaction) -> str:
    """The model a request asked for: its JSON body's ``model``, else the one its URL names."""
    request = interaction.request
    if "json" in request.content_type:
        try:
            body = json.loads(request.content)
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            return str(body["model"])
    found = _URL_MODEL.search(request.path)
    return unquote(found.group(1) or found.group(2)) if found else ""


def _streamed(response: Response) -> bool:
    """SSE events and AWS event-stream frames (Bedrock's streams) both give the answer piece by piece."""
    return response.is_event_stream or is_aws_event_stream(response.content_type)


def summarize_interaction(interaction: Interaction) -> InteractionSummary:
    request = interaction.request
    return InteractionSummary(
        provider=provider_label(request.url, request.headers, request.content),
        model=model_of(interaction),
        streamed=_streamed(interaction.response),
        tokens=tokens_of(interaction.response),
    )


def summarize(path: Path) -> CassetteSummary:
    """Read one cassette; raises :class:`~promptvcr.errors.CassetteError` when it is not one."""
    interactions = guarded.read_interactions(path)
    if interactions is None:
        raise guarded.missing(path)
    stat = path.stat()
    return CassetteSummary(
        path=path,
        size=stat.st_size,
        modified=stat.st_mtime,
        interactions=tuple(summarize_interaction(i) for i in interactions),
    )


def cassette_files(paths: Iterable[Path]) -> list[Path]:
    """The cassette files ``paths`` name: each file as given, each folder's cassette files
    (by suffix, sorted), for the commands and views that take files or folders."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in CASSETTE_SUFFIXES and p.is_file()))
        else:
            found.append(path)
    return found


def find_cassettes(root: Path) -> Iterator[tuple[Path, CassetteSummary | CassetteError]]:
    """Every candidate file under ``root`` (sorted), with its summary or why it is not a cassette."""
    candidates = (
        [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in CASSETTE_SUFFIXES)
    )
    for path in candidates:
        if not path.is_file() or any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            yield path, summarize(path)
        except CassetteError as error:
            yield path, error

"""Import keeps every response header of real recorded traffic: each interaction of the corpus
subset (tests/corpus, pydantic-ai's vcrpy cassettes) is imported, replayed through a real
httpx client (the transport the OpenAI, Anthropic, Groq, Mistral and Google SDKs use), and
each header the client gets is compared with the source's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import yaml

import promptvcr
from promptvcr.cassettes.wire import WIRE_HEADERS
from promptvcr.files import fileformat
from promptvcr.importers import import_vcr

#: tests/conftest.py's corpus (imported by path: several folders hold a conftest module).
CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "pydantic-ai"


def _source_value(values: Any) -> str:
    return ", ".join(str(v) for v in values) if isinstance(values, list) else str(values)


def test_every_response_header_of_the_corpus_replays_as_the_source_held_it(tmp_path: Path) -> None:
    report = import_vcr([CORPUS], tmp_path / "out")
    assert not report.failed and not report.partial, report.summary()
    # The only things import removed are the requests' cookies (pydantic-ai's cassettes keep them).
    removed = Counter(name for file in report.files for name in file.removed_secrets)
    assert set(removed) == {"cookie header"}, removed

    compared: Counter[str] = Counter()
    wire: Counter[str] = Counter()
    interactions = 0
    for file in report.files:
        assert file.output is not None
        sources = yaml.safe_load(file.source.read_text(encoding="utf-8"))["interactions"]
        stored = fileformat.loads(file.output.read_text(encoding="utf-8"), file.output)
        assert len(stored) == len(sources), file.source
        # passthrough_hosts=(): the corpus's OAuth token answer replays too, like the rest.
        with promptvcr.use_cassette(file.output, passthrough_hosts=()) as used, httpx.Client() as client:
            for source, interaction in zip(sources, stored, strict=True):
                interactions += 1
                request = interaction.request
                headers = {"content-type": request.headers.get("content-type", "")}
                got = client.request(request.method, request.url, content=request.content, headers=headers)
                for name, values in (source["response"].get("headers") or {}).items():
                    lowered = name.lower()
                    if lowered in WIRE_HEADERS:
                        # The body is stored decoded and served anew: its framing is the one
                        # the replay states (the corpus's own content-length is often stale:
                        # pydantic-ai re-serializes bodies, see tests/corpus/README.md).
                        wire[lowered] += 1
                        assert "transfer-encoding" not in got.headers
                        if lowered == "content-length" and "content-length" in got.headers:
                            assert got.headers["content-length"] == str(len(got.content))
                        elif lowered == "content-length":  # an event stream is served event by event
                            assert got.headers["content-type"].startswith("text/event-stream")
                        continue
                    compared[lowered] += 1
                    assert ", ".join(got.headers.get_list(name)) == _source_value(values), (
                        f"{file.source.name}: {name}"
                    )
        assert [play.outcome for play in used.played] == ["replayed"] * len(sources), file.source

    # What this corpus holds, so a header lost on the way fails here by name.
    assert interactions == 126 and sum(compared.values()) + sum(wire.values()) == 880
    for name in ("x-amzn-bedrock-input-token-count", "x-amzn-bedrock-output-token-count", "ratelimit"):
        assert compared[name] >= 1, name
    for name in ("retry-after", "etag", "last-modified", "openai-processing-ms", "mistral-correlation-id"):
        assert compared[name] >= 1, name
    assert compared["access-control-allow-credentials"] == 4  # CORS's "true", not a credential

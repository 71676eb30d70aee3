"""The conformance run: import each vcrpy cassette, drive the real SDK with each recorded
request twice, once served the recorded bytes directly (the reference) and once replayed by
promptvcr from the imported cassette, and compare what the SDK made of the two."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from promptvcr.cassette import use_cassette
from promptvcr.cassettes.models import Response
from promptvcr.errors import CassetteMiss
from promptvcr.importers import import_vcr
from promptvcr.importers.vcr import CASSETTE_SUFFIXES
from promptvcr.matching.parts import Rule

from .compare import dump, missing_facts
from .recorded import Clients, Recorded
from .routes import route

__all__ = ["Outcome", "iter_cassettes", "run_cassette", "run_corpus"]

Status = Literal["equal", "failed", "skipped", "not-imported"]


@dataclass(frozen=True, slots=True)
class Outcome:
    provider: str
    cassette: str
    index: int
    sdk: str
    status: Status
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Result:
    kind: Literal["ok", "error", "miss", "crash"]
    value: Any


def _sdk_error(error: Exception) -> dict[str, Any] | None:
    response = getattr(error, "response", None)
    if isinstance(response, dict) and "Error" in response:  # botocore's ClientError
        metadata = response.get("ResponseMetadata", {})
        details = {k: v for k, v in response.items() if k != "ResponseMetadata"}
        return {
            "error": type(error).__name__,
            "status": metadata.get("HTTPStatusCode"),
            "body": dump(details),
        }
    status = getattr(error, "status_code", None) or getattr(error, "code", None)
    if not isinstance(status, int):
        status = getattr(response, "status_code", None) or getattr(error, "http_status", None)
    if not isinstance(status, int):
        return None
    body = getattr(error, "body", None)
    if body is None:
        body = (
            getattr(error, "details", None)
            or getattr(error, "response_json", None)
            or getattr(error, "json_body", None)
        )
    return {"error": type(error).__name__, "status": status, "body": dump(body)}


_SDK_PACKAGES = frozenset(
    {
        "openai",
        "anthropic",
        "google",
        "groq",
        "mistralai",
        "cohere",
        "huggingface_hub",
        "botocore",
        "voyageai",
    }
)


def _call(driver: Callable[[Recorded, Clients], Any], rec: Recorded, clients: Clients) -> _Result:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _Result("ok", dump(driver(rec, clients)))
    except CassetteMiss as miss:
        return _Result("miss", str(miss))
    except Exception as error:  # an SDK's HTTP error is a result to compare; anything else is a crash
        as_status = _sdk_error(error)
        if as_status is not None:
            return _Result("error", as_status)
        if type(error).__module__.split(".")[0] in _SDK_PACKAGES:
            # An SDK's own error about the answer (an error event in a stream): a result too.
            return _Result("error", {"error": type(error).__name__, "message": str(error)})
        return _Result("crash", f"{type(error).__name__}: {error}")


def _reference_clients(responses: list[Response]) -> Clients:
    """Clients whose transport answers with the recorded responses, bytes as recorded, one
    per request in recorded order (an SDK call may span several requests)."""
    queue = list(responses)

    def next_response() -> Response:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def answer(module: Any) -> Callable[[Any], Any]:
        def handler(_: Any) -> Any:
            response = next_response()
            return module.Response(
                response.status, headers=list(response.headers.items()), content=response.content
            )

        return handler

    def httpx2_client() -> Any:
        import httpx2

        return httpx2.Client(transport=httpx2.MockTransport(answer(httpx2)))

    def httpx_client() -> Any:
        import httpx

        return httpx.Client(transport=httpx.MockTransport(answer(httpx)))

    def serve_botocore(client: Any) -> None:
        from .sdk_bedrock import serve_recorded

        serve_recorded(client, next_response)

    def requests_session() -> Any:
        from .sdk_voyage import recorded_session

        return recorded_session(next_response)

    return Clients(
        httpx2=httpx2_client, httpx=httpx_client, botocore=serve_botocore, requests=requests_session
    )


_DEFAULT_CLIENTS = Clients(httpx2=lambda: None, httpx=lambda: None)


def _judge(reference: _Result, replayed: _Result, response: Response) -> tuple[Status, str]:
    if replayed.kind == "miss":
        first = str(replayed.value).splitlines()
        return "failed", "cassette miss: " + " | ".join(line.strip() for line in first[3:6])
    if reference.kind == "crash":
        return "failed", f"SDK cannot parse the recorded response: {reference.value}"
    if replayed.kind != reference.kind or replayed.value != reference.value:
        if replayed.kind == "crash":
            return "failed", f"replay crashed: {replayed.value}"
        return "failed", "SDK result through replay differs from the recorded response"
    if replayed.kind == "ok":
        missing = missing_facts(response, replayed.value)
        if missing:
            return "failed", f"recorded facts missing from the SDK result: {missing[:3]}"
    return "equal", ""


def run_cassette(
    source: Path, provider: str, workdir: Path, rules: Iterable[Rule] | None = None
) -> list[Outcome]:
    """Every interaction of one vcrpy cassette, driven through its SDK and judged."""
    report = import_vcr([source], workdir).files[0]
    name = source.name
    if report.error is not None or report.output is None:
        return [Outcome(provider, name, -1, "", "not-imported", report.error or "not written")]
    outcomes = [Outcome(provider, name, -1, "", "not-imported", reason) for reason in report.skipped]
    interactions = report.interactions
    recs = [Recorded(i, tuple(interactions[n + 1 :])) for n, i in enumerate(interactions)]
    routes = [route(rec) for rec in recs]
    references = [
        _call(r.driver, rec, _reference_clients([i.response for i in interactions[n:]])) if r.driver else None
        for n, (rec, r) in enumerate(zip(recs, routes, strict=True))
    ]
    # Every recorded request is replayed, OAuth token exchanges and telemetry included.
    options: dict[str, Any] = {"record_mode": "replay", "ignore_hosts": (), "passthrough_hosts": ()}
    if rules is not None:
        options["rules"] = tuple(rules)
    replays: list[_Result | None] = []
    try:
        with use_cassette(report.output, **options):
            for rec, r in zip(recs, routes, strict=True):
                replays.append(_call(r.driver, rec, _DEFAULT_CLIENTS) if r.driver else None)
    except CassetteMiss:
        # The cassette raises at exit a miss the code caught (so that a test never passes on a
        # swallowed miss). Here each call's result, a miss or the SDK error that wrapped one,
        # is a row of the table already: the run goes on to the next cassette.
        pass
    for index, (rec, r, reference, replayed) in enumerate(
        zip(recs, routes, references, replays, strict=True)
    ):
        if r.continues_previous and outcomes:
            previous = outcomes[-1]
            reason = f"sent by the SDK call of interactions[{index - 1}]" + (
                f"; {previous.reason}" if previous.reason else ""
            )
            outcomes.append(Outcome(provider, name, index, r.sdk, previous.status, reason))
            continue
        if r.driver is None or reference is None or replayed is None:
            outcomes.append(Outcome(provider, name, index, r.sdk, "skipped", r.skip))
            continue
        status, reason = _judge(reference, replayed, rec.interaction.response)
        outcomes.append(Outcome(provider, name, index, r.sdk, status, reason))
    return outcomes


def iter_cassettes(root: Path) -> Iterator[tuple[str, Path]]:
    """``(provider, file)`` for every cassette under ``root``; the provider is the file's folder."""
    for file in sorted(root.rglob("*")):
        if file.is_file() and file.name.lower().endswith(CASSETTE_SUFFIXES):
            yield file.parent.name, file


def run_corpus(
    root: Path,
    *,
    providers: Iterable[str] | None = None,
    rules: Iterable[Rule] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    wanted = set(providers) if providers else None
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="promptvcr-conformance-") as tmp:
        for provider, file in iter_cassettes(root):
            if wanted is not None and provider not in wanted:
                continue
            for outcome in run_cassette(file, provider, Path(tmp), rules):
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
    return outcomes

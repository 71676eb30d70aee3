"""The key remembered per distinct request is the key computed from scratch: users' cassettes
still match. Every request of the corpus subset, as recorded and as an interceptor hands it
over (headers read lazily), first and second time, under the default rules and others."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest

from promptvcr import DEFAULT_RULES, Request
from promptvcr.cassettes.models import LazyRequest
from promptvcr.importers import convert_vcr_file
from promptvcr.matching.key import computed_key, request_key
from promptvcr.matching.rules import edit_rules

CORPUS = Path(__file__).parents[1] / "corpus" / "pydantic-ai"


def corpus_requests() -> list[Request]:
    found = []
    for path in sorted(CORPUS.glob("*/*.yaml")):
        found.extend(interaction.request for interaction in convert_vcr_file(path).interactions)
    assert len(found) > 50
    return found


def lazy(request: Request) -> LazyRequest:
    headers = dict(request.headers)
    return LazyRequest.of(
        request.method, request.url, headers, request.content, headers.get("content-type", "")
    )


@pytest.mark.parametrize("rules", [DEFAULT_RULES, edit_rules(DEFAULT_RULES, remove=["tool_call_ids"]), ()])
def test_remembered_key_is_the_computed_key(rules: tuple[object, ...]) -> None:
    for request in corpus_requests():
        expected = computed_key(request, rules)  # type: ignore[arg-type]
        assert request_key(request, rules) == expected  # type: ignore[arg-type]
        assert request_key(request, rules) == expected  # type: ignore[arg-type]  # remembered
        assert request_key(lazy(request), rules) == expected  # type: ignore[arg-type]


def test_a_list_of_rules_is_never_remembered_and_gives_the_same_key() -> None:
    request = corpus_requests()[0]
    assert request_key(request, list(DEFAULT_RULES)) == computed_key(request, DEFAULT_RULES)


def test_the_content_type_takes_part_in_what_is_remembered() -> None:
    as_json = Request("POST", "http://h/v1/x", {"content-type": "application/json"}, b'"a"')
    as_text = Request("POST", "http://h/v1/x", {"content-type": "text/plain"}, b'"a"')
    assert request_key(as_json) == computed_key(as_json)
    assert request_key(as_text) == computed_key(as_text)
    assert request_key(as_json) != request_key(as_text)


def test_a_lazy_request_reads_its_headers_only_when_asked_and_stands_for_a_request() -> None:
    reads = []

    class Headers:
        def items(self) -> list[tuple[str, str]]:
            reads.append(1)
            return [("content-type", "application/json"), ("x-a", "1")]

    request = LazyRequest.of("POST", "http://h/v1/x", Headers(), b"{}", "application/json")
    request_key(request)
    assert request.content_type == "application/json" and not reads
    plain = Request("POST", "http://h/v1/x", {"content-type": "application/json", "x-a": "1"}, b"{}")
    assert request == plain and plain == request and len(reads) == 1
    assert request.headers["x-a"] == "1" and len(reads) == 1


def test_a_lazy_request_replaced_or_copied_is_whole() -> None:
    request = LazyRequest.of(
        "POST", "http://h/v1/x", {"content-type": "text/plain; a=b"}, b"hi", "text/plain; a=b"
    )
    changed = dataclasses.replace(request, headers={"content-type": "application/json"}, content=b"{}")
    assert changed.content_type == "application/json"
    assert request_key(changed) == computed_key(Request("POST", "http://h/v1/x", changed.headers, b"{}"))
    copied = copy.deepcopy(request)
    assert type(copied) is Request and copied == request and copied.content_type == "text/plain"
    assert pickle.loads(pickle.dumps(request)) == request

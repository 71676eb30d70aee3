"""The public API: parse, repair, RepairError and replaceable steps."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import promptvcr.repair as repair_package
from promptvcr.repair import DEFAULT_STEPS, Job, RepairError, decode_valid, parse, repair, run

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_valid_json_is_returned_as_json_loads_reads_it(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json.dumps(parse(text)) == json.dumps(json.loads(text))


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=10_000))
def test_truncated_json_never_raises_anything_but_repair_error(value: Any, cut: int) -> None:
    text = json.dumps({"answer": value}, indent=1)
    with contextlib.suppress(RepairError):
        parse(text[: cut % (len(text) + 1)])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}[]()\",:'\\ \n#/`*aTn0.-_[CONTENT]/", max_size=60))
def test_garbage_never_raises_anything_but_repair_error(text: str) -> None:
    try:
        parse(text, schema={"type": "object", "properties": {"a": {"type": "integer"}}})
    except RepairError as error:
        assert error.stage in {"extract", "syntax"}


def test_repair_returns_canonical_json_text() -> None:
    assert repair("```json\n{'名': True,}\n```") == '{"名": true}'
    assert repair("[1, 2,", indent=2) == "[\n  1,\n  2\n]"


def test_tags_argument_takes_a_custom_pair() -> None:
    text = 'Thinking...\n<<OUT>>{"a": 1}<</OUT>> and {"a": 2}'
    assert parse(text, tags=("<<OUT>>", "<</OUT>>")) == {"a": 1}


def test_repair_error_names_the_stage_and_shows_an_excerpt() -> None:
    with pytest.raises(RepairError) as caught:
        parse("Sorry, I can't do that.\n" * 20)
    error = caught.value
    assert error.stage == "extract"
    assert "Sorry, I can" in error.excerpt and len(error.excerpt) < 100
    assert "stage 'extract'" in str(error) and "\\n" in str(error)
    assert isinstance(error, ValueError)


def test_a_failing_custom_step_is_reported_by_name() -> None:
    def explode(job: Job) -> Job:
        raise KeyError("boom")

    with pytest.raises(RepairError, match="explode") as caught:
        parse('{"a": 1', steps=(*DEFAULT_STEPS[:3], explode))
    assert caught.value.stage == "explode"


def test_steps_are_replaceable_plain_functions() -> None:
    def upper_keys(job: Job) -> Job:
        return job._replace(value={key.upper(): item for key, item in job.value.items()})

    assert parse('{"a": 1,}', steps=(*DEFAULT_STEPS, upper_keys)) == {"A": 1}
    assert run(Job(text='{"a": 1}'), (decode_valid,)).value == {"a": 1}
    with pytest.raises(RepairError, match="no step produced a value"):
        parse('{"a": 1,}', steps=(decode_valid,))


def test_text_must_be_str() -> None:
    with pytest.raises(TypeError):
        parse(b'{"a": 1}')  # type: ignore[arg-type]


def test_public_names() -> None:
    assert set(repair_package.__all__) >= {"parse", "repair", "RepairError", "DEFAULT_STEPS"}
    for name in repair_package.__all__:
        assert hasattr(repair_package, name)


def test_no_http_library_and_no_other_promptvcr_module_is_imported() -> None:
    loaded = {name for name in sys.modules if name.startswith("promptvcr.repair")}
    assert loaded
    code = "\n".join(
        open(module.__file__, encoding="utf-8").read()  # noqa: SIM115
        for name, module in sys.modules.items()
        if name.startswith("promptvcr.repair") and getattr(module, "__file__", None)
    )
    for forbidden in ("httpx", "requests", "aiohttp", "urllib", "from promptvcr", "import promptvcr"):
        assert forbidden not in code


def test_tags_must_be_a_pair() -> None:
    with pytest.raises(TypeError, match="pair"):
        parse("{}", tags=("[CONTENT]",))  # type: ignore[arg-type]

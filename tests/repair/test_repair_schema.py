"""Schema-driven steps: key names, type coercion, and choosing between candidates."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from promptvcr.repair import parse
from promptvcr.repair.choose import choose_value
from promptvcr.repair.job import Candidate
from promptvcr.repair.schemas.coerce import coerce
from promptvcr.repair.schemas.keys import canonical_key, fix_keys
from promptvcr.repair.schemas.schema import conforms, load_schema

PROPS = {"Original Requirements": {}, "Product Goals": {}, "Id": {}, "kind": {}}


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("original requirements", "Original Requirements"),
        ("PRODUCT GOALS", "Product Goals"),
        ("original_requirements", "Original Requirements"),
        ("Original Requirement", "Original Requirements"),  # one typo in a long key
        ("id", "Id"),
        ("ip", "ip"),  # short keys get no typo allowance
        ("Extra Info", "Extra Info"),  # not in the schema: left alone
    ],
)
def test_canonical_key(key: str, meant: str) -> None:
    assert canonical_key(key, PROPS, set()) == meant


def test_an_ambiguous_key_keeps_its_spelling() -> None:
    assert canonical_key("name", {"Name": {}, "NAME": {}}, set()) == "name"


def test_keys_are_fixed_recursively_and_values_never_change() -> None:
    schema = {
        "type": "object",
        "properties": {
            "User": {"type": "object", "properties": {"First Name": {}, "Last Name": {}}},
            "Items": {"type": "array", "items": {"type": "object", "properties": {"Name": {}}}},
        },
    }
    value = {"user": {"first name": "first name", "LAST NAME": "x"}, "items": [{"NAME": "a"}, {"name": "b"}]}
    assert fix_keys(value, schema, schema) == {
        "User": {"First Name": "first name", "Last Name": "x"},
        "Items": [{"Name": "a"}, {"Name": "b"}],
    }


def test_a_key_is_not_renamed_onto_one_that_is_present() -> None:
    schema = {"type": "object", "properties": {"Title": {}}}
    assert fix_keys({"title": 1, "Title": 2}, schema, schema) == {"title": 1, "Title": 2}


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "integer"}, "42", 42),
        ({"type": "number"}, "0.5", 0.5),
        ({"type": "boolean"}, "True", True),
        ({"type": "string"}, 7, "7"),
        ({"type": "object"}, '{"a": 1}', {"a": 1}),
        ({"type": "object"}, [{"a": 1}], {"a": 1}),
        ({"type": "array"}, {"a": 1}, [{"a": 1}]),
        ({"type": "integer"}, "forty", "forty"),  # no guessing
        ({"type": "integer"}, True, True),  # a bool is not an integer, and not converted
        ({"type": ["integer", "string"]}, "5", "5"),  # the schema is not explicit
    ],
)
def test_coercion_only_where_the_schema_is_explicit(
    schema: dict[str, Any], value: Any, expected: Any
) -> None:
    assert coerce(value, schema, schema) == expected


def test_conforms_is_a_loose_shape_check() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert conforms({"a": 1, "extra": True}, schema, schema)
    assert not conforms({"b": 1}, schema, schema)
    assert not conforms({"a": True}, schema, schema)
    assert not conforms([{"a": 1}], schema, schema)


def candidates(text: str, *pieces: str) -> tuple[tuple[Candidate, Any], ...]:
    found = []
    for piece in pieces:
        start = text.index(piece)
        found.append((Candidate(piece, start, start + len(piece), "text"), json.loads(piece)))
    return tuple(found)


def test_choosing_between_candidates() -> None:
    text = '{"a": 1}\nWait, that was wrong. Corrected:\n{"a": 2}'
    assert choose_value(text, candidates(text, '{"a": 1}', '{"a": 2}'), None) == {"a": 2}
    text = '{"a": 1}\nand also\n{"a": 2}'
    assert choose_value(text, candidates(text, '{"a": 1}', '{"a": 2}'), None) == {"a": 1}
    text = '{"a": 1}\n{"a": 2}'
    assert choose_value(text, candidates(text, '{"a": 1}', '{"a": 2}'), None) == [{"a": 1}, {"a": 2}]
    text = '{"a": 1}\n{"a": 1}'
    assert choose_value(text, candidates(text, '{"a": 1}', '{"a": 1}'), None) == {"a": 1}
    schema = {"type": "object", "required": ["b"]}
    text = '{"a": 1}\n{"b": 2}'
    assert choose_value(text, candidates(text, '{"a": 1}', '{"b": 2}'), schema) == {"b": 2}


class Address(pydantic.BaseModel):
    street_name: str
    zip_code: int


class Person(pydantic.BaseModel):
    full_name: str
    home: Address
    tags: list[str] = []
    nickname: str | None = None


def test_pydantic_models_are_accepted_and_nested_refs_followed() -> None:
    schema = load_schema(Person)
    assert schema is not None and "$defs" in schema
    text = "{'Full_Name': 'Ada', 'HOME': {'streetName': 'Main', 'zip code': '12345'}, 'Nickname': None,}"
    value = parse(text, schema=Person)
    assert value == {"full_name": "Ada", "home": {"street_name": "Main", "zip_code": 12345}, "nickname": None}
    assert Person.model_validate(value).home.zip_code == 12345


def test_a_schema_must_be_a_dict_or_a_model() -> None:
    with pytest.raises(TypeError, match="model_json_schema"):
        parse("{}", schema="not a schema")


class DuckModel:
    """Not pydantic: anything with ``model_json_schema()`` is accepted."""

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Item"}},
            "$defs": {"Item": {"type": "object", "properties": {"Count": {"type": "integer"}}}},
        }


def test_any_class_with_model_json_schema_is_a_schema() -> None:
    assert parse("{'ITEM': {'count': '3'}}", schema=DuckModel) == {"item": {"Count": 3}}

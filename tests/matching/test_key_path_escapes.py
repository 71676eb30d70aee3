"""The key reads a path by what it names: an escape of a character that a path segment may hold
as it is (``%3A`` for ``:``) is the same path, so a Bedrock model id escaped by botocore
(``...-v1%3A0``) matches one the anthropic SDK sent unescaped (``...-v1:0``)."""

from __future__ import annotations

import pytest

from promptvcr import Request
from promptvcr.matching.key import request_key


def _key(path: str) -> str:
    return request_key(Request("POST", f"https://bedrock-runtime.us-east-1.amazonaws.com{path}", {}, b"{}"))


@pytest.mark.parametrize(
    ("escaped", "plain"),
    [
        (
            "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/count-tokens",
            "/model/anthropic.claude-sonnet-4-20250514-v1:0/count-tokens",
        ),
        ("/model/a%3a0/converse", "/model/a:0/converse"),
        ("/users/%7Ebob/%40home", "/users/~bob/@home"),
        ("/%41%42c", "/ABc"),
        ("/a%2fb", "/a%2Fb"),  # the escape of a slash stays an escape, in one spelling
    ],
)
def test_escapes_that_name_the_same_path_give_the_same_key(escaped: str, plain: str) -> None:
    assert _key(escaped) == _key(plain)


@pytest.mark.parametrize(
    ("escaped", "plain"),
    [
        ("/a%2Fb", "/a/b"),  # one segment holding a slash is not two segments
        ("/model/m%3Bv1/invoke", "/model/m;v1/invoke"),  # some servers split a segment on ";"
        ("/a%25b", "/a%b"),
        ("/model/a%3A0/converse", "/model/a%3A1/converse"),
    ],
)
def test_escapes_that_change_the_path_change_the_key(escaped: str, plain: str) -> None:
    assert _key(escaped) != _key(plain)

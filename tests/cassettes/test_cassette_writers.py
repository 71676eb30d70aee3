"""The cassette writers: what they write reads back as exactly the data that was written.

The YAML writer decides quoting itself instead of asking PyYAML, so the property that
matters is checked over generated data with both loaders promptvcr may use (libyaml's
and the pure-Python one), with strings built from the characters YAML treats specially.
Large bodies are written from their chunks and must read back as the whole body.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.cassettes.largebody import LARGE_BODY_BYTES, ChunkedBase64, ChunkedText
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat, storage, yamlreader, yamlwriter
from promptvcr.files.yamlwriter import sequence_items

SETTINGS = property_settings(300)

#: Pieces YAML gives a meaning of their own: indicators, reserved words, numbers, dates,
#: breaks it folds or refuses, and the spaces and tabs a block scalar is picky about.
TRICKY = [
    *("yes", "No", "ON", "off", "y", "n", "null", "Null", "~", "true", "FALSE", "<<", "=", ".inf", ".nan"),
    *("1", "-1", "0x1F", "0o17", "1_000", "1e3", "1.0e+20", "2024-01-01", "12:30:00", "+1"),
    *(": ", ":", " #", "#", "- ", "-", "? ", "|", ">", "'", '"', "\\", "`", "@", "%", "!", "&a", "*a"),
    *("[", "]", "{", "}", ",", "---", "...", "\n", "\n\n", "\r", "\r\n", "\t", " ", "  ", "\x00", "\x07"),
    *("\x7f", "\x85", "\xa0", "\u2028", "\u2029", "\ufeff", "\ufffe", "é", "你好", "😀", "a", "text"),
]
strings = st.one_of(
    st.text(max_size=20),
    st.lists(st.sampled_from(TRICKY), max_size=6).map("".join),
    st.lists(st.sampled_from(TRICKY) | st.text(max_size=4), max_size=8).map("".join),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | strings,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=25,
)
LOADERS = [getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader]


def _yaml_text(items: list[Any]) -> str:
    return "items:\n" + "".join(sequence_items(items))


@SETTINGS
@given(st.lists(json_values, min_size=1, max_size=3))
def test_written_yaml_reads_back_as_the_same_data_with_either_loader(items: list[Any]) -> None:
    text = _yaml_text(items)
    for loader in LOADERS:
        assert yaml.load(text, Loader=loader) == {"items": items}, text


@SETTINGS
@given(st.lists(st.dictionaries(strings, json_values, max_size=3), max_size=3))
def test_a_cassette_document_reads_back_in_both_formats(data: list[dict[str, Any]]) -> None:
    for name in ("c.yaml", "c.json"):
        path = Path(name)
        text = fileformat.dumps(json.loads(json.dumps(data)), path)
        document = json.loads(text) if name.endswith(".json") else yaml.load(text, Loader=LOADERS[0])
        assert document == {"interactions": data, "version": fileformat.FORMAT_VERSION}


def test_strings_stay_plain_when_nothing_could_misread_them() -> None:
    item = {
        "role": "user",
        "content": "What is the capital of France? Answer in one word, please.",
        "url": "http://127.0.0.1:8000/v1/chat/completions?a=b#c",
        "reserved": "yes",
        "number": "42",
        "colon": "key: value",
        "lines": "first line\nsecond line\n",
        "no_final_break": "one\ntwo",
        "trailing_breaks": "one\n\n",
        "space_first": " indented\nnext",
    }
    assert _yaml_text([item]) == (
        "items:\n"
        "- role: user\n"
        "  content: What is the capital of France? Answer in one word, please.\n"
        "  url: http://127.0.0.1:8000/v1/chat/completions?a=b#c\n"
        '  reserved: "yes"\n'
        '  number: "42"\n'
        '  colon: "key: value"\n'
        "  lines: |\n"
        "    first line\n"
        "    second line\n"
        "  no_final_break: |-\n"
        "    one\n"
        "    two\n"
        "  trailing_breaks: |+\n"
        "    one\n"
        "\n"
        '  space_first: " indented\\nnext"\n'
    )


def test_what_the_fast_path_leaves_is_written_by_pyyaml_and_reads_back() -> None:
    items = [
        {"when": datetime.date(2024, 1, 2), "plain": "x"},  # a date a person wrote by hand
        {"k" * 2000: "a key longer than a YAML simple key"},
        {"infinite": float("inf")},
    ]
    for item in items:
        text = _yaml_text([item])
        assert yaml.load(text, Loader=yaml.SafeLoader) == {"items": [item]}


def _large_interaction(chunks: list[bytes], content_type: str) -> Interaction:
    request = Request("POST", "http://127.0.0.1/upload", {"content-type": "application/json"}, b'{"a":1}')
    return Interaction(request, Response(200, {"content-type": content_type}, chunks))


@pytest.mark.parametrize("name", ["big.yaml", "big.json"])
def test_a_large_text_body_is_written_from_its_chunks_and_reads_back_whole(tmp_path: Path, name: str) -> None:
    line = "é" * 1000 + ' "quoted" \\ \t tab\n'
    body = (line * (LARGE_BODY_BYTES // len(line) + 10)).encode("utf-8")
    chunks = [body[i : i + 65_531] for i in range(0, len(body), 65_531)]  # cuts through characters
    data = fileformat.interaction_to_data(_large_interaction(chunks, "text/plain"))
    assert isinstance(data["response"]["text"], ChunkedText)
    path = tmp_path / name
    storage.write_atomic(path, fileformat.dump_pieces([data], path))
    (loaded,) = fileformat.loads(path.read_text(encoding="utf-8"), path)
    assert loaded.response.content == body
    assert loaded.request.content == b'{"a":1}'


@pytest.mark.parametrize("name", ["big.yaml", "big.json"])
def test_a_large_binary_body_is_written_as_base64_from_its_chunks(tmp_path: Path, name: str) -> None:
    body = bytes(range(256)) * (LARGE_BODY_BYTES // 256 + 7)
    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)]  # not multiples of three
    data = fileformat.interaction_to_data(_large_interaction(chunks, "application/octet-stream"))
    assert isinstance(data["response"]["base64"], ChunkedBase64)
    assert str(data["response"]["base64"]) == base64.b64encode(body).decode("ascii")
    path = tmp_path / name
    storage.write_atomic(path, fileformat.dump_pieces([data], path))
    (loaded,) = fileformat.loads(path.read_text(encoding="utf-8"), path)
    assert loaded.response.content == body


def test_a_large_json_body_is_still_stored_parsed() -> None:
    body = json.dumps({"data": [{"embedding": [0.5] * 1000}] * 1000}).encode()
    assert len(body) > LARGE_BODY_BYTES
    data = fileformat.interaction_to_data(_large_interaction([body], "application/json"))
    assert data["response"]["json"]["data"][0]["embedding"][0] == 0.5


def test_a_failure_while_writing_pieces_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("interactions: []\nversion: 1\n")

    def pieces() -> Any:
        yield "interactions:\n"
        raise RuntimeError("the writer broke half-way")

    with pytest.raises(RuntimeError):
        storage.write_atomic(path, pieces())
    assert path.read_text() == "interactions: []\nversion: 1\n"
    assert os.listdir(tmp_path) == ["c.yaml"]


def test_an_event_holding_half_a_surrogate_pair_is_kept_as_text_and_saves(tmp_path: Path) -> None:
    body = b'data: {"a":"\\ud83d"}\n\ndata: {"a":"ok"}\n\n'
    request = Request("POST", "http://127.0.0.1/v1/chat/completions", {}, b"")
    response = Response(200, {"content-type": "text/event-stream"}, [body])
    path = tmp_path / "c.yaml"
    storage.write_atomic(
        path, fileformat.dump_pieces([fileformat.interaction_to_data(Interaction(request, response))], path)
    )
    (loaded,) = fileformat.loads(path.read_text(encoding="utf-8"), path)
    assert loaded.response.content == body


# The reader: the objects built from libyaml's events are the safe loader's, for any text.

dumped_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | strings
    | st.binary(max_size=8)
    | st.dates()
    | st.datetimes(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=20,
)


def _outcome(load: Any, text: str) -> str:
    try:
        return repr(load(text))
    except yaml.YAMLError as error:
        return f"error {type(error).__name__}"


def _same_as_the_safe_loader(text: str) -> None:
    expected = _outcome(lambda t: yaml.load(t, Loader=LOADERS[0]), text)
    ours = _outcome(yamlreader.load, text)
    if ours == "error Refused":  # only a structure without end (``&x [*x]``) is refused at this size
        assert "[...]" in expected or "{...}" in expected or expected.startswith("error "), text
        return
    assert ours == expected, text


@SETTINGS
@given(dumped_values, st.sampled_from([False, True, None]), st.booleans())
def test_the_reader_builds_what_the_safe_loader_builds(value: Any, flow: bool | None, alias: bool) -> None:
    document = {"a": value, "b": value} if alias else value  # the same object twice: an anchor and alias
    for text in (
        yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True),
        _yaml_text([document]) if not isinstance(value, (bytes, datetime.date)) else "a: 1\n",
    ):
        _same_as_the_safe_loader(text)


@SETTINGS
@given(
    st.lists(
        st.sampled_from(TRICKY) | st.sampled_from(["k", "- ", ": ", "\n  ", "&x ", "*x", "!!str "]),
        max_size=12,
    )
)
def test_the_reader_agrees_with_the_safe_loader_on_any_text(pieces: list[str]) -> None:
    _same_as_the_safe_loader("".join(pieces))
    _same_as_the_safe_loader("k: " + "".join(pieces) + "\n")


def test_the_reader_refuses_deep_nesting_without_crashing() -> None:
    for text in ("[" * 50_000 + "]" * 50_000, "- " * 50_000 + "x"):
        with pytest.raises(yamlreader.TooDeep):
            yamlreader.load(text)


def test_a_cassette_promptvcr_wrote_is_read_without_the_full_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    request = Request("POST", "http://127.0.0.1/v1/chat", {"content-type": "application/json"}, b'{"n":1.5}')
    response = Response(200, {"content-type": "text/event-stream"}, [b'data: {"a":[true,null,"yes"]}\n\n'])
    data = [fileformat.interaction_to_data(Interaction(request, response))]
    text = fileformat.dumps(data, Path("c.yaml"))
    monkeypatch.setattr(yaml, "load", lambda *args, **kwargs: pytest.fail("the full loader was used"))
    (loaded,) = fileformat.loads(text, Path("c.yaml"))
    assert loaded.request.content == b'{"n":1.5}'
    assert loaded.response.content == response.content


def test_a_large_body_in_an_item_pyyaml_writes_is_written_whole(tmp_path: Path) -> None:
    body = b"line\n" * (LARGE_BODY_BYTES // 5 + 1)
    item = {"request": {"json": {"k" * 2000: 1}}, "response": {"text": ChunkedText([body])}}
    path = tmp_path / "c.yaml"
    storage.write_atomic(path, fileformat.dump_pieces([item], path))
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADERS[0])
    reference = document["interactions"][0]["response"]["file"]  # beside it (cassettes.bodyfiles)
    assert (tmp_path / reference["path"]).read_bytes() == body and reference["size"] == len(body)


def test_a_timing_is_written_as_the_flow_writer_writes_it() -> None:
    """Issue 22: a mapping of figures (a response's timing) is written without a call per
    figure: the same text as the general flow writer, for keys seen before or not, floats of
    every size, ints, empty and mixed lists; a value it does not write goes to the general one."""
    chosen = random.Random(22)
    written = 0
    figures = [0.0, -0.0, 0.004, 1e-7, 1e20, 123.456, 5e-324, 1.7976931348623157e308]
    others: list[Any] = [0, 3, True, None, "0.1", float("nan"), float("inf"), [0.1, 2], {"a": 0.1}]
    for _ in range(3000):
        timing: dict[Any, Any] = {}
        for key in chosen.sample(["headers", "chunks", "headerz", "x y", 7], chosen.randint(0, 3)):
            kind = chosen.random()
            if kind < 0.45:
                timing[key] = chosen.choice(figures)
            elif kind < 0.9:
                timing[key] = [chosen.choice(figures) for _ in range(chosen.randint(0, 4))]
            else:
                timing[key] = chosen.choice(others)
        try:
            general: str | None = yamlwriter._flow(timing)
        except yamlwriter._NotSimple:
            general = None
        try:
            quick = yamlwriter._figures(timing)
        except yamlwriter._NotSimple:
            assert general is None, timing
            continue
        assert quick is None or quick == general, timing
        written += quick is not None
    assert written > 1000


def test_items_are_handed_on_in_runs_and_a_large_body_in_its_own_pieces() -> None:
    """Issue 22: the writer hands items on in runs of about 64 KB rather than one by one; the
    text is exactly each item's text in order, and a large body still comes in slices, never
    joined with its neighbours or held whole."""
    chosen = random.Random(22)
    large = ChunkedText([b"line\n" * (LARGE_BODY_BYTES // 5 + 1)])
    items: list[Any] = []
    for number in range(3000):
        items.append(
            {"request": {"method": "POST", "n": number}, "response": {"text": "x" * chosen.randint(0, 900)}}
        )
        if number in (5, 1500, 2999):
            items.append({"request": {"method": "GET"}, "response": {"text": large}})
        if number == 700:
            items.append({"response": {"text": "x", "bad": float("nan")}})  # the fallback writer's
    pieces = list(sequence_items(items))
    assert "".join(pieces) == "".join("".join(sequence_items([item])) for item in items)
    assert len(pieces) < len(items) // 10
    assert max(len(piece) for piece in pieces) < 2 * 1024 * 1024  # slices of the large body

"""import-vcr: each vcrpy input form converts and replays through a real SDK; broken files
are reported clearly and never stop the rest; no credential reaches the output."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import vcr
import yaml
from fake_provider import FakeProvider
from vcr.persisters.filesystem import CassetteNotFoundError

import promptvcr
from promptvcr.cli import main
from promptvcr.importers import import_vcr

CORPUS = Path(__file__).parents[1] / "corpus" / "pydantic-ai"
SECRET = "sk-live-DO-NOT-LEAK-123"


def _record_with_vcrpy(path: Path, vcr_instance: Any = None) -> None:
    """A genuine vcrpy cassette: vcrpy patches httpx, which talks to the loopback provider."""
    recorder = vcr_instance or vcr.VCR()
    with FakeProvider() as fake, recorder.use_cassette(str(path), record_mode="all"):
        headers = {"authorization": f"Bearer {SECRET}", "cookie": "session=abc"}
        with httpx.Client(base_url=fake.openai_base_url, headers=headers) as client:
            plain = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
            client.post("/chat/completions", params={"api_key": SECRET}, json=plain).raise_for_status()
            streamed = {**plain, "stream": True, "messages": [{"role": "user", "content": "stream it"}]}
            client.post("/chat/completions", json=streamed).raise_for_status()


def _replay_with_openai(cassette: Path) -> tuple[str, str]:
    with promptvcr.use_cassette(cassette) as used:
        client = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=0)
        plain = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}]
        )
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "stream it"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert [p.outcome for p in used.played] == ["replayed", "replayed"]
    return plain.choices[0].message.content or "", text


def test_plain_vcrpy_yaml_with_gzip_binary_bodies_replays_through_the_openai_sdk(tmp_path: Path) -> None:
    source = tmp_path / "vcr" / "chat.yaml"
    _record_with_vcrpy(source)
    raw = source.read_text()
    assert "!!binary" in raw and "content-encoding" in raw  # what vcrpy really writes for gzip

    report = import_vcr([source], tmp_path / "out")

    assert [f.ok for f in report.files] == [True]
    assert report.files[0].layout == "interactions"
    output = tmp_path / "out" / "chat.yaml"
    text = output.read_text()
    assert SECRET not in text and "session=abc" not in text
    said = report.files[0].describe()  # each change, with its interaction and field (issue 53)
    assert "interactions[0].request.headers.authorization: header authorization (removed)" in said
    assert "interactions[0].request.url: query api_key (removed)" in said
    plain, streamed = _replay_with_openai(output)
    assert plain == "echo 1: hello"
    assert streamed.startswith("echo 2:")


def test_vcrpy_json_serializer_is_read_too(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    _record_with_vcrpy(source, vcr.VCR(serializer="json", decode_compressed_response=True))
    report = import_vcr([source], tmp_path / "out")
    assert report.files[0].ok
    assert _replay_with_openai(tmp_path / "out" / "chat.json")[0] == "echo 1: hello"


class _LangChainSerializer:
    """LangChain's test serializer: vcrpy's in-memory dict (two lists) as gzipped YAML."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> bytes:
        data = dict(cassette_dict)
        data["requests"] = [request._to_dict() for request in data["requests"]]
        return gzip.compress(yaml.safe_dump(data).encode("utf-8"))

    @staticmethod
    def deserialize(data: bytes) -> dict[str, Any]:
        raise NotImplementedError


class _LangChainPersister:
    @staticmethod
    def load_cassette(path: str, serializer: Any) -> Any:
        raise CassetteNotFoundError()

    @staticmethod
    def save_cassette(path: str, cassette_dict: dict[str, Any], serializer: Any) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(serializer.serialize(cassette_dict))


def test_langchain_gzipped_two_list_form(tmp_path: Path) -> None:
    recorder = vcr.VCR()
    recorder.register_serializer("langchain", _LangChainSerializer)
    recorder.register_persister(_LangChainPersister)
    source = tmp_path / "chat.yaml.gz"
    recorder.serializer = "langchain"
    _record_with_vcrpy(source, recorder)
    assert source.read_bytes()[:2] == b"\x1f\x8b"

    report = import_vcr([source], tmp_path / "out")

    assert report.files[0].ok and report.files[0].layout == "two-lists+gzip"
    output = tmp_path / "out" / "chat.yaml"
    assert SECRET not in output.read_text()
    assert _replay_with_openai(output)[0] == "echo 1: hello"


def test_pydantic_ai_parsed_body_cassettes_keep_every_interaction_in_order(tmp_path: Path) -> None:
    sources = sorted((CORPUS / "groq").glob("*.yaml"))
    assert sources, "the committed corpus subset is missing"
    report = import_vcr([CORPUS / "groq"], tmp_path / "out")
    assert all(f.ok for f in report.files), report.summary()
    for file in report.files:
        raw = yaml.safe_load(file.source.read_text())["interactions"]
        stored = promptvcr.files.fileformat.loads(file.output.read_text(), file.output)  # type: ignore[union-attr]
        assert [i.request.url for i in stored] == [r["request"]["uri"] for r in raw]
        assert [i.response.status for i in stored] == [r["response"]["status"]["code"] for r in raw]


def test_a_folder_keeps_its_structure_and_the_cli_reports_each_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    shutil.copytree(CORPUS / "mistral", src / "mistral")
    (src / "broken.yaml").write_text("interactions: [\n")
    code = main(["import-vcr", str(src), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 1
    assert f"FAILED {src / 'broken.yaml'}: it is not valid YAML at line 2, column 1" in out
    assert "Files marked FAILED or PARTIAL were not (fully) converted" in out
    converted = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*.yaml"))
    assert converted == sorted(Path("mistral") / p.name for p in (src / "mistral").glob("*.yaml"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"interactions:\n- request: {method: POST\n", "it is not valid YAML at line 3"),
        (
            b"cassette:\n  - 1\n",
            "unknown layout: the top level has cassette; expected 'interactions' (vcrpy)",
        ),
        (
            bytes(range(256)) * 4,
            "is not UTF-8 text (byte 128 is b'\\x80'): binary data, not a YAML or JSON cassette",
        ),
        (b"\x1f\x8b\x08\x00garbage", "it starts like gzip but cannot be decompressed"),
        (b"", "it is empty."),
        (b"- 1\n- 2\n", "the top level is a list, expected a mapping with 'interactions' (vcrpy)."),
        (b"!!python/object:os.system {}\n", "it uses a YAML tag the safe loader refuses"),
        (b"requests: [{}]\nresponses: []\n", "it has 1 requests but 0 responses; the lists must pair up."),
        (
            b"request_sample: {}\nresponse_sample: {}\n",
            "it is not an HTTP cassette (gRPC or WebSocket samples)",
        ),
    ],
)
def test_broken_files_are_reported_with_the_reason_and_write_nothing(
    tmp_path: Path, content: bytes, message: str
) -> None:
    source = tmp_path / "bad.yaml"
    source.write_bytes(content)
    report = import_vcr([source], tmp_path / "out")
    (file,) = report.files
    assert file.error is not None and message in file.error, file.error
    assert file.describe().startswith(f"FAILED {source}: ")
    assert not (tmp_path / "out").exists()


def test_an_unconvertible_interaction_is_named_and_the_rest_is_kept(tmp_path: Path) -> None:
    source = tmp_path / "partial.yaml"
    good = {
        "request": {"method": "post", "uri": "https://api.openai.com/v1/models", "body": None, "headers": {}},
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {},
            "body": {"string": '{"data": []}'},
        },
    }
    no_status = {"request": good["request"], "response": {"headers": {}, "body": {"string": ""}}}
    bad_gzip = {  # gzip's magic, then not gzip: a body cut short (a plain body is kept, issue 53)
        "request": good["request"],
        "response": {
            **good["response"],
            "headers": {"content-encoding": ["gzip"]},
            "body": {"string": b"\x1f\x8bnot gzip"},
        },
    }
    source.write_text(yaml.safe_dump({"interactions": [good, no_status, bad_gzip], "version": 1}))
    (file,) = import_vcr([source], tmp_path / "out").files
    assert file.skipped == [
        "interactions[1].response.status is None, expected an HTTP status code.",
        "interactions[2].response says content-encoding 'gzip' but its body does not decompress "
        "(Unknown compression method).",
    ]
    stored = promptvcr.files.fileformat.loads((tmp_path / "out" / "partial.yaml").read_text(), source)
    assert [(i.request.method, i.response.status) for i in stored] == [("POST", 200)]
    assert file.describe().startswith("PARTIAL")


def test_form_body_and_header_secrets_never_reach_the_output(tmp_path: Path) -> None:
    source = tmp_path / "oauth.yaml"
    token = {
        "request": {
            "method": "POST",
            "uri": "https://oauth2.googleapis.com/token",
            "body": f"grant_type=refresh_token&client_secret={SECRET}&refresh_token={SECRET}",
            "headers": {"content-type": ["application/x-www-form-urlencoded"], "x-goog-api-key": [SECRET]},
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": ["application/json"], "set-cookie": [SECRET]},
            "body": {"string": f'{{"access_token": "{SECRET}", "expires_in": 3599}}'},
        },
    }
    source.write_text(yaml.safe_dump({"interactions": [token], "version": 1}))
    report = import_vcr([source], tmp_path / "out")
    assert report.files[0].ok
    text = (tmp_path / "out" / "oauth.yaml").read_text()
    assert SECRET not in text
    assert "expires_in: 3599" in text and "grant_type=refresh_token" in text


def test_a_secret_shaped_value_outside_the_known_places_stops_the_file(tmp_path: Path) -> None:
    key = "gsk_" + "Q7x" * 17  # a Groq-key shape, pasted into a prompt
    source = tmp_path / "pasted.yaml"
    interaction = {
        "request": {
            "method": "POST",
            "uri": "https://api.groq.com/openai/v1/chat/completions",
            "headers": {"content-type": ["application/json"]},
            "body": json.dumps({"model": "m", "messages": [{"role": "user", "content": f"my key is {key}"}]}),
        },
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "{}"}},
    }
    source.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    (file,) = import_vcr([source], tmp_path / "out").files
    assert file.error is not None
    assert "1 value(s) shaped like a secret, so nothing was written: interactions[0]" in file.error
    assert "Groq API key" in file.error and key not in file.error
    assert not (tmp_path / "out" / "pasted.yaml").exists()

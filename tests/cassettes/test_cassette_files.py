"""Cassette files: what they hold, and a clear error (with nothing lost) for every bad one."""

from __future__ import annotations

import gzip
from pathlib import Path

import httpx2
import pytest
import sdk_calls
import yaml
from fake_provider import FakeProvider

import promptvcr
from promptvcr import CassetteFormatError

VALID = """\
interactions:
- request:
    method: GET
    url: http://127.0.0.1:9/raw/json
  response:
    status: 200
    headers: {content-type: application/json}
    json: {ok: true}
version: 1
"""


def load_error(path: Path, mode: str = "replay") -> str:
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(CassetteFormatError) as error, promptvcr.use_cassette(path, record_mode=mode):
        pass
    if before is not None:
        assert path.read_bytes() == before, "a cassette that could not be read must never be rewritten"
    return str(error.value)


@pytest.mark.parametrize("mode", ["replay", "record", "rewrite"])
def test_corrupt_yaml_is_reported_with_its_position_in_every_mode(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "corrupt.yaml"
    path.write_text("interactions:\n- request: {method: GET\nversion: 1\n")
    # libyaml (the C loader used when present) and the pure-Python loader word the problem differently.
    problem = (
        "did not find expected ',' or '}'"
        if hasattr(yaml, "CSafeLoader")
        else "expected ',' or '}', but got ':'"
    )
    assert load_error(path, mode) == (
        f"Cassette {path} cannot be read: it is not valid YAML at line 3, column 8: {problem}.\n"
        "It was left untouched. Fix or delete it, then record it again (PROMPTVCR_RECORD_MODE=rewrite)."
    )


@pytest.mark.parametrize(
    ("written", "read"), [("true", "True"), ("1.0", "1.0"), ("'1'", "'1'"), ("[1]", "[1]")]
)
def test_a_version_that_is_no_number_is_refused(tmp_path: Path, written: str, read: str) -> None:
    """``true`` equals 1 in Python: it used to load as version 1."""
    path = tmp_path / "odd.yaml"
    path.write_text(VALID.replace("version: 1", f"version: {written}"))
    assert load_error(path).startswith(
        f"Cassette {path} cannot be read: 'version' is {read}, "
        "not a format version number (this promptvcr writes 1)."
    )
    json_path = tmp_path / "odd.json"
    json_path.write_text('{"interactions": [], "version": true}')
    assert "'version' is True, not a format version number" in load_error(json_path)


def test_unknown_version(tmp_path: Path) -> None:
    path = tmp_path / "future.yaml"
    path.write_text(VALID.replace("version: 1", "version: 7"))
    assert load_error(path, "record") == (
        f"Cassette {path} cannot be read: format version 7 is unknown; this promptvcr reads version 1. "
        "A newer promptvcr may have written it: upgrade promptvcr.\n"
        "It was left untouched. Fix or delete it, then record it again (PROMPTVCR_RECORD_MODE=rewrite)."
    )


def test_truncated_file_is_not_replayed_as_a_shorter_cassette(tmp_path: Path) -> None:
    path = tmp_path / "cut.yaml"
    path.write_text(VALID.rsplit("version", 1)[0])  # cut at an interaction boundary: still valid YAML
    assert load_error(path) == (
        f"Cassette {path} cannot be read: it has no 'version' field, which a promptvcr cassette ends with: "
        "the file was cut short, or it is not a promptvcr cassette.\n"
        "It was left untouched. Fix or delete it, then record it again (PROMPTVCR_RECORD_MODE=rewrite)."
    )


def test_truncated_json_cassette(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"interactions": [{"request": {"method": "GET"')
    assert load_error(path, "record").startswith(f"Cassette {path} cannot be read: it is not valid JSON: ")


def test_a_directory_is_not_a_cassette(tmp_path: Path) -> None:
    path = tmp_path / "dir.yaml"
    path.mkdir()
    assert load_error(path, "record") == (
        f"Cassette {path} is a directory, not a file. "
        f"Give use_cassette a file path such as {path / 'cassette.yaml'}."
    )


def test_a_binary_file_is_not_a_cassette(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert load_error(path) == (
        f"Cassette {path} is not UTF-8 text (byte 0 is b'\\x89'); it may be a binary file saved under "
        "a cassette name. It was left untouched."
    )


def test_a_vcrpy_cassette_points_to_the_importer(tmp_path: Path) -> None:
    path = tmp_path / "vcr.yaml"
    path.write_text(
        "interactions:\n- request: {method: GET, uri: 'http://x/', body: null, headers: {}}\n"
        "  response: {status: {code: 200, message: OK}, headers: {}, body: {string: ''}}\nversion: 1\n"
    )
    assert "it is a vcrpy cassette. Convert it with: promptvcr import-vcr" in load_error(path)


def test_a_bad_interaction_is_named_by_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(VALID.replace("status: 200", "status: OK"))
    assert "interactions[0].response.status is 'OK', expected an HTTP status code." in load_error(path)


def test_non_json_and_binary_bodies_round_trip(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "raw.yaml"
    with promptvcr.use_cassette(path, record_mode="record"), httpx2.Client() as client:
        text = client.get(f"{provider.base_url}/raw/text")
        binary = client.get(f"{provider.base_url}/raw/binary")
        echoed = client.post(
            f"{provider.base_url}/raw/echo",
            content=b"\x00\xffnot json",
            headers={"content-type": "application/octet-stream"},
        )
    stored = yaml.safe_load(path.read_text())["interactions"]
    assert stored[0]["response"]["text"] == text.text and "\n" in text.text
    assert "|" in path.read_text().split("text:", 1)[1].splitlines()[0]  # multi-line text is a block scalar
    assert stored[1]["response"]["base64"]
    assert stored[2]["request"]["base64"] == "AP9ub3QganNvbg=="

    with promptvcr.use_cassette(path), httpx2.Client() as client:
        assert client.get("http://127.0.0.1:9/raw/text").text == text.text
        assert client.get("http://127.0.0.1:9/raw/binary").content == bytes(range(256)) == binary.content
        replayed = client.post(
            "http://127.0.0.1:9/raw/echo",
            content=b"\x00\xffnot json",
            headers={"content-type": "application/octet-stream"},
        )
        assert replayed.content == echoed.content


def test_compressed_responses_are_stored_decoded_and_replayed_consistently(
    tmp_path: Path, provider: FakeProvider
) -> None:
    path = tmp_path / "gzip.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        recorded = sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "compress " * 50}]
        )
    assert provider.requests[0].headers["accept-encoding"].startswith("gzip")
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert stored["json"]["choices"][0]["message"]["content"] == recorded.choices[0].message.content
    assert "content-encoding" not in stored.get("headers", {})

    with promptvcr.use_cassette(path), httpx2.Client() as client:
        response = client.post(
            "http://127.0.0.1:9/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "compress " * 50}]},
        )
    assert "content-encoding" not in response.headers
    assert int(response.headers["content-length"]) == len(response.content)
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(response.content)


def test_no_secret_from_the_request_reaches_the_cassette(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "secrets.yaml"
    secrets = [
        "sk-test-SECRET-openai-0123456789",
        "org-SECRET-ORG",
        "proj_SECRET",
        "AIza-SECRET-QUERY",
        "cookie-SECRET",
    ]
    with promptvcr.use_cassette(path, record_mode="record"):
        client = sdk_calls.openai_client(
            provider.base_url,
            organization="org-SECRET-ORG",
            project="proj_SECRET",
            default_headers={"cookie": "s=cookie-SECRET"},
        )
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        sdk_calls.anthropic_client(provider.base_url).messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
        with httpx2.Client() as raw:
            raw.post(
                f"{provider.base_url}/raw/echo?key=AIza-SECRET-QUERY&alt=sse",
                json={"client_secret": "cookie-SECRET", "q": 1},
                headers={"x-goog-api-key": "AIza-SECRET-QUERY", "api-key": "AIza-SECRET-QUERY"},
            )
            raw.get(f"{provider.base_url}/raw/set-cookie")
    text = path.read_text()
    for secret in [*secrets, "sk-ant-test-SECRET-anthropic-0123", "__cf_bm", "Bearer"]:
        assert secret not in text
    assert "alt=sse" in text  # only the credential left the query
    assert (
        "<redacted:field:client_secret>" in text
    )  # the body's credential field is replaced, not silently dropped

    with promptvcr.use_cassette(path) as cassette, httpx2.Client() as raw:
        raw.post(
            "http://127.0.0.1:9/raw/echo?key=OTHER-KEY&alt=sse", json={"client_secret": "another", "q": 1}
        )
    assert cassette.played[0].hit, "credentials take no part in the key"


def test_response_headers_code_reads_are_stored_and_noise_is_not(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """Issue 41: request ids, rate limits and processing times are what SDKs and routers
    read (``._request_id``); dates and server banners are review noise."""
    path = tmp_path / "headers.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    headers = yaml.safe_load(path.read_text())["interactions"][0]["response"]["headers"]
    assert {"content-type", "x-request-id", "x-ratelimit-remaining-requests", "openai-processing-ms"} <= set(
        headers
    )
    assert not {"date", "server"} & set(headers)
    with promptvcr.use_cassette(path):
        answer = sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    assert answer._request_id == headers["x-request-id"]


def test_recording_twice_into_a_new_folder_creates_it(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "deep" / "er" / "c.yaml"
    with promptvcr.use_cassette(path, record_mode="record"), httpx2.Client() as client:
        client.get(f"{provider.base_url}/raw/json")
    assert path.is_file()
    assert not list(path.parent.glob("*.tmp")), "no temporary file is left behind"

"""A credential inside an encoded string of an answer is masked inside its encoding, not refused.

Issue 41 left it refused: the user lost the recording. Now the string is decoded, the key
replaced by its placeholder, and the string encoded again the same way (base64 stays base64 in
its alphabet and padding, layers too, percent-escapes stay escapes, gzip is compressed again).
Each case records a real client's call against a loopback server, then checks: the key is in
no decoding of the file, ``promptvcr scan`` finds nothing, the rest of the encoded content is
as the server sent it, and the recording replays with the server gone.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import string
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

import httpx
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from leak_calls import JSON, call_openai, chat
from leak_checks import assert_nowhere, scan
from leak_server import Answer, LeakServer

import promptvcr
from promptvcr.credentials.keyshapes import Finding, masked_preview
from promptvcr.credentials.reencode import masked_within
from promptvcr.files.redaction import Redacted, SecretMaskedWarning, refused_message

_rng = random.Random(4141)
_URLSAFE = string.ascii_letters + string.digits
#: A realistic fake OpenAI key (works nowhere) and a key of no shape, found by its field's name.
KEY = "sk-proj-" + "".join(_rng.choice(_URLSAFE) for _ in range(48))
SHAPELESS = "Zq" + "".join(_rng.choice(_URLSAFE) for _ in range(34))


def _b64(text: str | bytes, *, urlsafe: bool = False, padded: bool = True) -> str:
    raw = text.encode() if isinstance(text, str) else text
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    return encoded if padded else encoded.rstrip("=")


def _unb64(text: str, *, urlsafe: bool = False) -> bytes:
    return (base64.urlsafe_b64decode if urlsafe else base64.b64decode)(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Case:
    name: str
    key: str
    #: The answer's content as the server sends it, for a key.
    content: Callable[[str], str]
    #: The stored content decoded back to the text that held the key: must be ``expected``.
    decode: Callable[[str], str]
    expected: str


CASES = [
    Case(
        "base64 of a config text",
        KEY,
        lambda k: _b64(f"api_key={k}\nregion=eu-west-1\nretries=3"),
        lambda stored: _unb64(stored).decode(),
        "api_key=<redacted:openai-key>\nregion=eu-west-1\nretries=3",
    ),
    Case(
        "base64 of JSON, key in a prose field",
        KEY,
        lambda k: _b64(json.dumps({"note": f"use {k} for the eval", "models": ["gpt-4o", "o3"]})),
        lambda stored: _unb64(stored).decode(),
        json.dumps({"note": "use <redacted:openai-key> for the eval", "models": ["gpt-4o", "o3"]}),
    ),
    Case(
        # Issue 53: a name inside what a model produced means nothing; the key's shape does.
        "base64 of JSON in a model's answer, a shaped key under a credential name",
        KEY,
        lambda k: _b64(json.dumps({"openai_api_key": k, "org": "acme"})),
        lambda stored: _unb64(stored).decode(),
        json.dumps({"openai_api_key": "<redacted:openai-key>", "org": "acme"}),
    ),
    Case(
        "URL-safe unpadded base64 of JSON holding standard base64",
        KEY,
        lambda k: _b64(json.dumps({"blob": _b64(f"token: {k}!"), "n": 1}), urlsafe=True, padded=False),
        lambda stored: _unb64(json.loads(_unb64(stored, urlsafe=True))["blob"]).decode(),
        "token: <redacted:openai-key>!",
    ),
    Case(
        "base64 of gzip",
        KEY,
        lambda k: _b64(gzip.compress(f"export OPENAI_API_KEY={k}\nexport MODEL=gpt-4o\n".encode())),
        lambda stored: gzip.decompress(_unb64(stored)).decode(),
        "export OPENAI_API_KEY=<redacted:openai-key>\nexport MODEL=gpt-4o\n",
    ),
    Case(
        "base64 of a percent-encoded link",
        KEY,
        lambda k: _b64("https://console.test/share?c=" + quote(f"key: {k}; team=ml", safe="") + "&v=2"),
        lambda stored: unquote(_unb64(stored).decode()),
        "https://console.test/share?c=key: <redacted:openai-key>; team=ml&v=2",
    ),
    Case(
        "base64 of percent-encoded base64",
        KEY,
        lambda k: _b64(quote(_b64(f"key: {k}; team=ml"), safe="")),
        lambda stored: _unb64(unquote(_unb64(stored).decode())).decode(),
        "key: <redacted:openai-key>; team=ml",
    ),
    Case(
        "base64 in a JSON document written with PHP's \\/ escapes",
        KEY,
        lambda k: '{"blob": "' + _b64(f"config: {k} ??>").replace("/", "\\/") + '", "n": 1}',
        lambda stored: _unb64(json.loads(stored)["blob"]).decode() + f" n={json.loads(stored)['n']}",
        "config: <redacted:openai-key> ??> n=1",
    ),
]


def _stored_content(path: Path) -> str:
    """The answer's message content as stored in the cassette (a JSON body)."""
    response = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    content: str = response["json"]["choices"][0]["message"]["content"]
    return content


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_openai_answer_masked_inside_its_encoding(case: Case, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    sent = case.content(case.key)
    with LeakServer() as server:
        server.reply = lambda request: chat(sent)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with promptvcr.use_cassette(path, record_mode="record"):
                live = call_openai(server.url)
        url = server.url
    assert live == sent
    assert any(issubclass(w.category, SecretMaskedWarning) for w in caught), "the mask is reported"
    assert_nowhere(path, case.key)
    scanned = scan(path)
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr
    stored = _stored_content(path)
    assert case.decode(stored) == case.expected  # the rest of the encoded content is intact
    with promptvcr.use_cassette(path, record_mode="none"):  # the server is gone
        replayed = call_openai(url)
    assert replayed == stored


def test_httpx_answer_with_a_file_in_base64_is_masked(tmp_path: Path) -> None:
    """A files API answering a file's content as base64 in a JSON field, through httpx."""
    path = tmp_path / "c.yaml"
    env_file = f"# staging\nOPENAI_API_KEY={KEY}\nMODEL=gpt-4o\n"
    answer = {"id": "file-1", "filename": ".env", "content_base64": _b64(env_file), "bytes": len(env_file)}
    with LeakServer() as server:
        server.reply = lambda request: Answer(200, JSON, (json.dumps(answer).encode(),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with promptvcr.use_cassette(path, record_mode="record"):
                assert httpx.get(f"{server.url}/v1/files/file-1").json() == answer
        url = server.url
    assert_nowhere(path, KEY)
    with promptvcr.use_cassette(path, record_mode="none"):
        replayed = httpx.get(f"{url}/v1/files/file-1").json()
    assert {k: v for k, v in replayed.items() if k != "content_base64"} == {
        k: v for k, v in answer.items() if k != "content_base64"
    }
    masked = env_file.replace(KEY, "<redacted:openai-key>")
    assert _unb64(replayed["content_base64"]).decode() == masked


def test_a_key_in_a_base64_string_of_a_request_is_still_refused(tmp_path: Path) -> None:
    """A request is what replay matches on: a key-shaped value there that was not sent as a
    credential is refused, encoded or not (issue 41's rule), and the message names the file, the
    interaction and what to do."""
    path = tmp_path / "c.yaml"
    with LeakServer() as server:
        server.reply = lambda request: Answer(200, JSON, (b'{"ok": true}',))
        with pytest.raises(promptvcr.CassetteSecretError) as refused, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with promptvcr.use_cassette(path, record_mode="record"):
                httpx.post(f"{server.url}/v1/jobs", json={"blob": _b64(f"config: {KEY}")})
    message = str(refused.value)
    assert str(path) in message and "recorded[0]" in message and "REQUEST" in message
    assert KEY not in message


def test_an_answer_refused_says_which_file_which_interaction_and_what_to_run(tmp_path: Path) -> None:
    """Where masking within an encoding is impossible (a compression whose library is missing)
    the answer is refused: the message says it is the ANSWER, which file, which interaction and
    the command that checks the file, never the value."""
    path = tmp_path / "c.yaml"
    finding = Finding("OpenAI API key", masked_preview(KEY), field="recorded[2].response.body.base64")
    refused = Redacted(refused=[("recorded[2]", "GET http://127.0.0.1:1/v1/files/f", [finding])], total=3)
    refused.data = [{}, {}]
    message = refused_message(path, refused)
    assert "refusing to write 1 of 3 interaction(s) recorded into " + str(path) in message
    assert "the ANSWER of each holds 1 credential(s)" in message and "REQUEST" not in message
    assert "recorded[2]: GET http://127.0.0.1:1/v1/files/f" in message
    assert f"promptvcr scan {path}" in message and "The other 2 interaction(s) were written." in message
    assert KEY not in message


# The property behind every case above: whatever the layers, decoding the masked text layer by
# layer gives the original text with the key, and only the key, replaced.
_LAYERS = ("b64", "b64-unpadded", "urlsafe", "urlsafe-unpadded", "percent", "gzip-b64", "php-json")


def _encode(text: str, layer: str) -> str:
    if layer == "percent":
        return quote(text, safe="")
    if layer == "php-json":
        return json.dumps({"v": text, "n": 1}).replace("/", "\\/")
    raw = gzip.compress(text.encode("latin-1")) if layer == "gzip-b64" else text.encode("latin-1")
    return _b64(raw, urlsafe=layer.startswith("urlsafe"), padded=not layer.endswith("unpadded"))


def _decode(text: str, layer: str) -> str:
    if layer == "percent":
        return unquote(text, encoding="latin-1")
    if layer == "php-json":
        return str(json.loads(text)["v"])
    raw = _unb64(text, urlsafe=layer.startswith("urlsafe"))
    return (gzip.decompress(raw) if layer == "gzip-b64" else raw).decode("latin-1")


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    after=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    layers=st.lists(st.sampled_from(_LAYERS), min_size=1, max_size=3),
)
def test_a_key_under_any_layers_is_masked_and_the_rest_kept(
    before: str, after: str, layers: list[str]
) -> None:
    plain = f"{before} {KEY} {after}"
    encoded = plain
    for layer in layers:
        encoded = _encode(encoded, layer)
    masked = masked_within(encoded, lambda text: text.replace(KEY, "<redacted:openai-key>"))
    for layer in reversed(layers):
        masked = _decode(masked, layer)
    assert masked == plain.replace(KEY, "<redacted:openai-key>")

"""The secrets scanner, with realistic fake keys of each provider's format.

The keys are built at run time from each provider's documented prefix and alphabet, so
no key-shaped literal sits in this repository for another scanner to trip on.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
import sdk_calls

import promptvcr
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES, ChunkedText
from promptvcr.cli import main
from promptvcr.commands.keeping.scan import scan_paths
from promptvcr.credentials.keyshapes import SECRET_KINDS, may_hold_secret
from promptvcr.credentials.scanner import scan_data, scan_text
from promptvcr.files import persister

_rng = random.Random(20261122)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def _r(alphabet: str, length: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(length))


def _jwt() -> str:
    import base64
    import json

    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    header, claims = part({"alg": "HS256", "typ": "JWT"}), part({"sub": "1234567890", "iat": 1516239022})
    return f"{header}.{claims}.{_r(URLSAFE, 43)}"


#: kind -> a realistic fake value in that kind's format.
FAKE_SECRETS: dict[str, str] = {
    "Anthropic API key": "sk-ant-api03-" + _r(URLSAFE, 93) + "AA",
    "OpenAI API key": "sk-proj-" + _r(URLSAFE, 156),
    "OpenRouter API key": "sk-or-v1-" + _r("0123456789abcdef", 64),
    "sk- style API key (OpenAI, DeepSeek, Moonshot...)": "sk-" + _r("0123456789abcdef", 32),
    "Google API key": "AIza" + _r(URLSAFE, 35),
    "Google OAuth access token": "ya29." + _r(URLSAFE, 150),
    "Groq API key": "gsk_" + _r(ALNUM, 52),
    "xAI API key": "xai-" + _r(ALNUM, 80),
    "Perplexity API key": "pplx-" + _r(ALNUM, 48),
    "Hugging Face token": "hf_" + _r(string.ascii_letters, 34),
    "Replicate API token": "r8_" + _r(ALNUM, 37),
    "GitHub token": "ghp_" + _r(ALNUM, 36),
    "Slack token": "xoxb-" + _r(string.digits, 12) + "-" + _r(ALNUM, 24),
    "Stripe secret key": "sk_live_" + _r(ALNUM, 99),
    "AWS access key id": "AKIA" + _r(string.ascii_uppercase + "234567", 16),
    "AWS secret access key": "aws_secret_access_key = " + _r(B64, 40),
    "AWS session token": "IQoJb3JpZ2luX2Vj" + _r(B64, 600),
    "JSON Web Token": _jwt(),
    "private key": "-----BEGIN RSA PRIVATE KEY-----\\n" + _r(B64, 64),
    "bearer token": "Bearer " + _r(ALNUM + "._-", 40),
    "Telegram bot token": "bot" + _r("0123456789", 10) + ":" + _r(ALNUM + "_-", 35),
}


def test_every_kind_has_a_realistic_fake_key() -> None:
    assert set(FAKE_SECRETS) == set(SECRET_KINDS)


@pytest.mark.parametrize("kind", list(FAKE_SECRETS))
def test_each_format_is_found_in_a_cassette_line_and_not_printed(kind: str) -> None:
    secret = FAKE_SECRETS[kind]
    text = f'interactions:\n- request:\n    json:\n      prompt: "my key is {secret} thanks"\nversion: 1\n'
    findings = scan_text(text)
    assert [(f.kind, f.line, f.column) for f in findings] == [(kind, 4, 26)]
    assert secret not in str(findings[0]) and secret[:6] in findings[0].preview


@pytest.mark.parametrize("kind", list(FAKE_SECRETS))
def test_each_format_is_found_on_the_record_path(kind: str) -> None:
    """The record path looks for clues before running the full patterns: none may be missing."""
    data = {"request": {"json": {"messages": [{"content": f"my key is {FAKE_SECRETS[kind]} thanks"}]}}}
    assert [f.kind for f in scan_data(data)] == [kind]


def test_a_text_may_hold_a_secret_exactly_when_it_holds_a_clue() -> None:
    """The clue search (one pattern per first character) against a substring search per clue,
    on texts made of clues cut anywhere, in any case, among ordinary characters."""
    from promptvcr.credentials.keyshapes import _CLUES

    chosen = random.Random(22)
    pieces = [*_CLUES, *(clue[: chosen.randint(1, len(clue))] for clue in _CLUES for _ in range(3))]
    found = 0
    for _ in range(3000):
        parts = [
            chosen.choice(pieces) if chosen.random() < 0.2 else chosen.choice(string.printable)
            for _ in range(chosen.randint(0, 12))
        ]
        text = "".join(part.upper() if chosen.random() < 0.3 else part for part in parts)
        expected = any(clue in text.lower() for clue in _CLUES)
        assert may_hold_secret(text) == expected, text
        found += expected
    assert 300 < found < 2700  # both verdicts were tried


def test_a_key_cut_by_the_slicing_of_a_large_body_is_found() -> None:
    secret = FAKE_SECRETS["Anthropic API key"]
    body = ("x " * LARGE_BODY_BYTES + f"here {secret} there\n").encode()
    cut = body.index(secret.encode()) + 10
    data = {"response": {"text": ChunkedText([body[:cut], body[cut:]])}}
    assert [(f.field, f.kind) for f in scan_data(data)] == [("response.text", "Anthropic API key")]


@pytest.mark.parametrize(
    "harmless",
    [
        "<redacted>",
        "Bearer <redacted>",
        "sk-test-SECRET-openai-0123456789",  # the test suite's fake keys are visibly fake
        "sk-ant-test-SECRET-anthropic-0123",
        "AIza-test-SECRET",
        "task-" + "a" * 40,  # sk- inside a longer word
        "AKIAIOSFODNN7EXAMPL",  # one character short
        "eyJ0ZXh0IjoiVGhlIn0sInAiOiJhYmMifQ",  # base64 JSON of an event stream, no JWT dots
        "the bearer of bad news",
    ],
)
def test_harmless_text_is_not_a_finding(harmless: str) -> None:
    assert scan_text(f"text: {harmless}\n") == []


def test_scan_data_names_the_field_and_skips_binary_bodies() -> None:
    data = {
        "request": {"json": {"messages": [{"role": "user", "content": FAKE_SECRETS["Groq API key"]}]}},
        "response": {
            "base64": FAKE_SECRETS["AWS access key id"],
            "headers": {"x-echo": FAKE_SECRETS["JSON Web Token"]},
        },
    }
    assert [(f.field, f.kind) for f in scan_data(data)] == [
        ("request.json.messages[0].content", "Groq API key"),
        ("response.headers.x-echo", "JSON Web Token"),
    ]


def test_the_scan_command_exits_1_on_findings_and_0_on_clean_cassettes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clean.yaml").write_text("interactions: []\nversion: 1\n")
    assert main(["scan", str(tmp_path)]) == 0
    leaky = tmp_path / "sub" / "leaky.json"
    leaky.parent.mkdir()
    leaky.write_text('{"interactions": [{"x": "' + FAKE_SECRETS["xAI API key"] + '"}], "version": 1}')
    assert main(["scan", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{leaky}:1:26: xAI API key" in out and FAKE_SECRETS["xAI API key"] not in out
    assert main(["scan", str(tmp_path / "nope")]) == 2


def test_scan_paths_reads_a_file_with_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: \xff\xfe " + FAKE_SECRETS["Google API key"].encode() + b"\n")
    assert [f.kind for f in scan_paths([path])] == ["Google API key"]


def test_recording_refuses_to_write_a_secret_and_names_the_field(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "leak.yaml"
    secret = FAKE_SECRETS["Anthropic API key"]
    client = sdk_calls.openai_client(provider.base_url)
    cassette = promptvcr.use_cassette(path, record_mode="record")
    with pytest.raises(promptvcr.CassetteSecretError) as refused, cassette:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hello"}])
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": f"my {secret}"}])
    message = str(refused.value)
    assert "recorded[1].request.json.messages[0].content: Anthropic API key" in message
    assert secret not in message and str(path) in message
    # Issue 16: a finding in a request refuses that interaction only; the clean one is kept.
    assert "REQUEST" in message and "allowed_secrets" in message
    assert len(persister.load(path).interactions) == 1
    assert secret not in path.read_text()


def test_recording_refusal_keeps_an_existing_cassette_unchanged(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keep.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hello"}]
        )
    before = path.read_bytes()
    for mode in ("record", "rewrite"):
        leaky = [{"role": "user", "content": FAKE_SECRETS["AWS session token"]}]
        with pytest.raises(promptvcr.CassetteSecretError), promptvcr.use_cassette(path, record_mode=mode):
            sdk_calls.openai_client(provider.base_url).chat.completions.create(model="gpt-4o", messages=leaky)
        assert path.read_bytes() == before

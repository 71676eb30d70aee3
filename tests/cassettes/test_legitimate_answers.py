"""Issue 16: a legitimate answer never costs a recording.

Answers that quote documented example credentials and placeholders are recorded as they
are, beside the clean interaction paid for before them; a real-looking key in an answer
is masked in place and reported (never a reason to drop the rest); a key in a request
refuses that interaction alone; a cassette can accept a value with ``allowed_secrets``.
"""

from __future__ import annotations

import base64
import json
import random
import string
import warnings
from pathlib import Path

import pytest
from leak_calls import call_openai, chat
from leak_server import LeakServer

import promptvcr
from promptvcr.files import persister
from promptvcr.files.redaction import SecretMaskedWarning


def _b64(value: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")


#: jwt.io's example token, built here so that no token-shaped literal sits in the repository.
JWT_IO = ".".join(
    [
        _b64({"alg": "HS256", "typ": "JWT"}),
        _b64({"sub": "1234567890", "name": "John Doe", "iat": 1516239022}),
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)
AWS_EXAMPLE = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET_EXAMPLE = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"

LEGITIMATE = {
    "bearer placeholder": "Send `Authorization: Bearer YOUR_ACCESS_TOKEN_HERE` with each request.",
    "jwt.io example": f"A JWT looks like {JWT_IO}: header, payload and signature.",
    "AWS example key": f"aws_access_key_id = {AWS_EXAMPLE}\naws_secret_access_key = {AWS_SECRET_EXAMPLE}",
    "tutorial private key": "Paste it between\n-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "sk-xxxx placeholder": "export OPENAI_API_KEY=sk-" + "x" * 48,
    "bearer in prose": "The bearer token_is_sent_in_the_authorization/header of each request.",
    "placeholder query key": "Call https://generativelanguage.googleapis.com/v1beta/models?key=YOUR_API_KEY",
    "sk-proj placeholder": "client = OpenAI(api_key='sk-proj-REPLACE_ME_with_the_key_from_your_dashboard')",
    "AIza example": "Use AIza" + "Sy-EXAMPLE-KEY-0123456789abcdefghijk in the URL.",
    "github placeholder": "GITHUB_TOKEN=ghp_" + "0" * 36,
}


def _record(path: Path, answers: list[str], **options: object) -> list[warnings.WarningMessage]:
    with LeakServer() as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replies = iter(answers)
        server.reply = lambda request: chat(next(replies))
        with promptvcr.use_cassette(path, record_mode="record", **options):  # type: ignore[arg-type]
            for _ in answers:
                call_openai(server.url)
    return [w for w in caught if issubclass(w.category, SecretMaskedWarning)]


def _answers(path: Path) -> list[str]:
    return [
        json.loads(i.response.chunks[0])["choices"][0]["message"]["content"]
        for i in persister.load(path).interactions
    ]


@pytest.mark.parametrize("answer", LEGITIMATE.values(), ids=LEGITIMATE.keys())
def test_a_legitimate_answer_is_recorded_as_it_is(answer: str, tmp_path: Path) -> None:
    path = tmp_path / "kept.yaml"
    masked = _record(path, ["a clean answer, already paid for", answer])
    assert _answers(path) == ["a clean answer, already paid for", answer]
    assert masked == []


def _real_looking() -> str:
    rng = random.Random(1616)
    return (
        "sk-ant-api03-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(93)) + "AA"
    )


def test_a_key_in_an_answer_is_masked_in_place_and_reported(tmp_path: Path) -> None:
    key = _real_looking()
    path = tmp_path / "masked.yaml"
    masked = _record(path, ["clean", f"the admin key is {key}, keep it safe"])
    assert _answers(path) == ["clean", "the admin key is <redacted:anthropic-key>, keep it safe"]
    assert key not in path.read_text()
    (warning,) = masked
    text = str(warning.message)
    assert "recorded[1].response.json.choices[0].message.content: Anthropic API key" in text
    assert "RESPONSE" in text and "allowed_secrets" in text and key not in text


def test_a_cassette_accepts_a_value_with_allowed_secrets(tmp_path: Path) -> None:
    key = _real_looking()
    path = tmp_path / "accepted.yaml"
    masked = _record(path, [f"the test fixture key is {key}"], allowed_secrets=[key])
    assert _answers(path) == [f"the test fixture key is {key}"]
    assert masked == []


def test_a_key_in_a_request_refuses_that_interaction_alone(tmp_path: Path) -> None:
    key = _real_looking()
    path = tmp_path / "refused.yaml"
    with LeakServer() as server:
        server.reply = lambda request: chat("fine")
        cassette = promptvcr.use_cassette(path, record_mode="record")
        with pytest.raises(promptvcr.CassetteSecretError) as refused, cassette:
            call_openai(server.url)
            call_openai(server.url, extra_body={"user": f"pasted {key}"})
            call_openai(server.url)
    message = str(refused.value)
    assert "refusing to write 1 of 3 interaction(s)" in message and "REQUEST" in message
    assert "recorded[1].request.json.user: Anthropic API key" in message
    assert "The other 2 interaction(s) were written." in message and "allowed_secrets" in message
    assert key not in message
    assert _answers(path) == ["fine", "fine"]
    assert key not in path.read_text()

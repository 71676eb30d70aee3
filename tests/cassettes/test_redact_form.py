"""Credentials sent as a form body (OAuth token exchange) never reach a cassette file."""

from __future__ import annotations

from pathlib import Path

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.files import fileformat


def test_form_body_credentials_are_redacted_on_the_way_to_the_file(tmp_path: Path) -> None:
    body = b"grant_type=refresh_token&client_id=abc&client_secret=s3cr3t&refresh_token=r3fr3sh"
    request = Request(
        "POST",
        "https://oauth2.googleapis.com/token",
        {"content-type": "application/x-www-form-urlencoded"},
        body,
    )
    data = fileformat.interaction_to_data(Interaction(request, Response(200, {}, [b"{}"])))
    text = fileformat.dumps([data], tmp_path / "c.yaml")
    assert "s3cr3t" not in text and "r3fr3sh" not in text
    assert "grant_type=refresh_token" in text and "client_id=abc" in text


def test_google_resumable_upload_headers_are_kept_so_the_sdk_can_send_the_file(tmp_path: Path) -> None:
    upload = "https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id=abc&upload_protocol=resumable"
    response = Response(
        200, {"x-goog-upload-url": upload, "x-goog-upload-status": "active", "x-goog-api-key": "k"}
    )
    request = Request("POST", "https://generativelanguage.googleapis.com/upload/v1beta/files")
    data = fileformat.interaction_to_data(Interaction(request, response))
    assert data["response"]["headers"] == {"x-goog-upload-url": upload, "x-goog-upload-status": "active"}

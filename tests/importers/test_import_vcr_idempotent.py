"""import-vcr never destroys: a promptvcr cassette is recognised and kept byte for byte,
converting twice in place is the identity the second time, nothing is written shorter
than it was read, and an SSE stream is recognised by its content when headers were stripped."""

from __future__ import annotations

from pathlib import Path

import yaml

from promptvcr.cli import main
from promptvcr.importers import import_vcr

VCR_SSE = """\
interactions:
- request:
    body: '{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}],"stream":true}'
    headers: {}
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: 'data: {"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hello"}}]}


        data: [DONE]


        '
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""

VCR_PLAIN = """\
interactions:
- request:
    body: !!binary |
      eyJtb2RlbCI6ImdwdC00byJ9
    headers:
      Content-Type: [application/json]
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body: {string: '{"id":"x","choices":[{"message":{"role":"assistant","content":"Hello"}}]}'}
    headers:
      Content-Type: [application/json]
    status: {code: 200, message: OK}
version: 1
"""


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.yaml"))}


def test_twice_in_place_is_byte_identical_the_second_time(tmp_path: Path, capsys: object) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "sse.yaml").write_text(VCR_SSE)
    (tmp_path / "plain.yaml").write_text(VCR_PLAIN)
    assert main(["import-vcr", str(tmp_path), "--out", str(tmp_path)]) == 0
    first = _tree(tmp_path)
    assert b"events:" in first["a/sse.yaml"] and b"Hello" in first["plain.yaml"]
    report = import_vcr([tmp_path], tmp_path)
    assert _tree(tmp_path) == first
    assert [f.kept for f in report.files] == [True, True]
    assert "2 already promptvcr (left as they are)" in report.summary()
    assert "already a promptvcr cassette" in report.files[0].describe()


def test_a_promptvcr_cassette_is_copied_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "plain.yaml").write_text(VCR_PLAIN)
    import_vcr([tmp_path / "src"], tmp_path / "src")
    converted = (tmp_path / "src" / "plain.yaml").read_bytes()
    import_vcr([tmp_path / "src"], tmp_path / "out")
    assert (tmp_path / "out" / "plain.yaml").read_bytes() == converted


def test_sse_is_recognised_by_content_without_headers(tmp_path: Path) -> None:
    (tmp_path / "sse.yaml").write_text(VCR_SSE)
    import_vcr([tmp_path / "sse.yaml"], tmp_path / "out")
    stored = yaml.safe_load((tmp_path / "out" / "sse.yaml").read_text())
    response = stored["interactions"][0]["response"]
    assert response["headers"]["content-type"] == "text/event-stream"
    assert [event["data"] for event in response["events"]][1] == "[DONE]"


def test_unknown_fields_are_never_dropped(tmp_path: Path) -> None:
    """A file whose interactions hold fields the converter does not read is left untouched."""
    text = VCR_PLAIN.replace("    method: POST", "    method: POST\n    json: {model: gpt-4o}")
    source = tmp_path / "odd.yaml"
    source.write_text(text)
    report = import_vcr([source], tmp_path)
    assert report.files[0].error is not None and "json" in report.files[0].error
    assert source.read_text() == text

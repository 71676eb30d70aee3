"""Large bodies beside the cassette (issue 57): recorded through the real openai SDK from a
jobs server on 127.0.0.1, written as ``bodies/sha256-<hex>`` files the cassette refers to,
and replayed from them, in-process and through ``promptvcr serve``, with the server stopped.

One recording (module scope) serves most tests: a 5.5 MiB file uploaded and downloaded twice
through ``files.with_streaming_response.content(...).stream_to_file``, into a YAML and a JSON
cassette. What each test breaks, it breaks in a copy of the folder.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import aiohttp
import jsonschema
import openai
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings
from tests.fake_jobs import FakeJobs

import promptvcr
from promptvcr.cassettes.bodyfiles import SLICE, BodyFile, stored_reference, write_body_file
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES
from promptvcr.cassettes.spool import SpooledChunks
from promptvcr.cli import main
from promptvcr.errors import CassetteFormatError
from promptvcr.files import fileformat
from promptvcr.server import serve
from promptvcr.usage.removal import YOUNG_SECONDS, BodySweep, remove_interactions, sweep_bodies

SIZE = LARGE_BODY_BYTES + 3 * SLICE // 2  # past the threshold, in six slices
#: Shaped like a key: planted in a body file, it must be found by ``promptvcr scan``.
PLANTED = "sk-proj-" + "P" * 24 + "plantedkey" + "p" * 24


@dataclass
class Recorded:
    folder: Path
    content: bytes


def _download(client: openai.OpenAI, file_id: str, target: Path) -> bytes:
    with client.files.with_streaming_response.content(file_id) as response:
        response.stream_to_file(target)
    return target.read_bytes()


def _client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    folder = tmp_path_factory.mktemp("bodyfiles")
    content = os.urandom(SIZE)
    with FakeJobs() as jobs:
        client = _client(jobs.openai_base_url)
        for name in ("download.yaml", "download.json"):
            with promptvcr.use_cassette(folder / name, record_mode="record"):
                uploaded = client.files.create(file=("data.bin", content), purpose="user_data")
                for attempt in range(2):  # the same body twice: one file
                    assert _download(client, uploaded.id, folder / f"live-{attempt}.bin") == content
    yield Recorded(folder, content)


def _copy(recorded: Recorded, tmp_path: Path) -> Path:
    shutil.copytree(recorded.folder, tmp_path / "c")
    return tmp_path / "c"


def _document(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@pytest.mark.parametrize("name", ["download.yaml", "download.json"])
def test_the_body_lives_beside_the_cassette_and_the_cassette_holds_its_reference(
    recorded: Recorded, name: str
) -> None:
    path = recorded.folder / name
    assert path.stat().st_size < 16_384  # the reference, not the 5.5 MiB
    responses = [item["response"] for item in _document(path)["interactions"]]
    downloads = [response["file"] for response in responses if "file" in response]
    digest = hashlib.sha256(recorded.content).hexdigest()
    assert downloads == [{"path": f"bodies/sha256-{digest}", "size": SIZE, "sha256": digest}] * 2
    assert (recorded.folder / downloads[0]["path"]).read_bytes() == recorded.content
    upload = _document(path)["interactions"][0]["request"]["file"]  # the multipart upload, too
    assert upload["size"] > SIZE and (recorded.folder / upload["path"]).stat().st_size == upload["size"]


def test_the_same_body_recorded_twice_or_in_two_cassettes_is_one_file(recorded: Recorded) -> None:
    names = sorted(path.name for path in (recorded.folder / "bodies").iterdir())
    assert len(names) == 3  # the download (4 references), the YAML's upload, the JSON's (another boundary)
    assert all(name.startswith("sha256-") for name in names)


@pytest.mark.parametrize("name", ["download.yaml", "download.json"])
def test_replay_with_the_server_stopped_is_byte_identical_and_streams_from_the_file(
    recorded: Recorded, tmp_path: Path, name: str
) -> None:
    path = _downloads_only(recorded, tmp_path, name)  # the upload replays in the tests below
    file_id = _document(path)["interactions"][0]["request"]["url"].split("/")[-2]
    client = _client("http://127.0.0.1:9/v1")  # nothing listens there
    with promptvcr.use_cassette(path, record_mode="none") as cassette:
        for attempt in range(2):
            assert _download(client, file_id, tmp_path / f"replayed-{attempt}.bin") == recorded.content
    served = [play.response for play in cassette.played if play.response is not None]
    bodies = [response.chunks for response in served if isinstance(response.chunks, BodyFile)]
    assert len(bodies) == 2 and len(bodies[0]) == -(-SIZE // SLICE)  # slices read on demand


def test_a_body_recorded_through_serve_is_a_body_file_too(tmp_path: Path) -> None:
    content = os.urandom(LARGE_BODY_BYTES + 12_345)  # another body: recorded by serve's own relay
    path = tmp_path / "served.yaml"
    with FakeJobs() as jobs, serve(path, record_mode="record", upstreams={"openai": jobs.base_url}) as server:
        client = _client(f"{server.url}/openai/v1")
        uploaded = client.files.create(file=("data.bin", content), purpose="user_data")
        assert _download(client, uploaded.id, tmp_path / "live.bin") == content
    digest = hashlib.sha256(content).hexdigest()
    assert (tmp_path / "bodies" / f"sha256-{digest}").read_bytes() == content
    with serve(path, record_mode="replay") as server:
        client = _client(f"{server.url}/openai/v1")
        uploaded = client.files.create(file=("data.bin", content), purpose="user_data")
        assert _download(client, uploaded.id, tmp_path / "replayed.bin") == content


def _body_file(folder: Path, content: bytes) -> Path:
    return folder / "bodies" / f"sha256-{hashlib.sha256(content).hexdigest()}"


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_missing_or_cut_body_file_is_a_clear_error(recorded: Recorded, tmp_path: Path, damage: str) -> None:
    folder = _copy(recorded, tmp_path)
    body = _body_file(folder, recorded.content)
    if damage == "missing":
        body.unlink()
    else:
        with body.open("r+b") as file:
            file.truncate(SIZE - 10)
    with pytest.raises(CassetteFormatError) as raised, promptvcr.use_cassette(folder / "download.yaml"):
        pass
    message = str(raised.value)
    assert str(folder / "download.yaml") in message and str(body) in message
    assert ("missing" if damage == "missing" else f"{SIZE - 10:,} bytes") in message
    assert "PROMPTVCR_RECORD_MODE=rewrite" in message


def test_a_body_file_changed_under_the_same_size_fails_at_its_end(recorded: Recorded, tmp_path: Path) -> None:
    path = _downloads_only(recorded, tmp_path)
    body = _body_file(path.parent, recorded.content)
    with body.open("r+b") as file:
        file.seek(SIZE - 5)
        file.write(b"XXXXX")
    file_id = _document(path)["interactions"][0]["request"]["url"].split("/")[-2]
    client = _client("http://127.0.0.1:9/v1")
    with pytest.raises(Exception, match="SHA-256 differs") as raised, promptvcr.use_cassette(path):
        _download(client, file_id, tmp_path / "changed.bin")
    assert str(body) in str(raised.value)


def test_scan_finds_a_key_planted_in_a_body_file(
    recorded: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _downloads_only(recorded, tmp_path).parent
    for name in ("download.yaml", "download.json"):  # the downloads alone: one body file to read
        (folder / name).unlink()
    assert main(["scan", str(folder)]) == 0
    capsys.readouterr()
    body = _body_file(folder, recorded.content)
    with body.open("r+b") as file:
        file.seek(SLICE - 20)  # across two of the slices the scan reads
        file.write(PLANTED.encode())
    assert main(["scan", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "openai" in out.lower() and PLANTED not in out and "bodies/sha256-" in out


def _downloads_only(recorded: Recorded, tmp_path: Path, name: str = "download.yaml") -> Path:
    """A copy of a cassette with its downloads alone: the upload, a request, is held whole (keyed
    by its parts, shown as text), which a figure of memory must leave out, and costs time."""
    folder = _copy(recorded, tmp_path)
    document = _document(folder / name)
    document["interactions"] = [item for item in document["interactions"] if "file" in item["response"]]
    path = folder / f"downloads{Path(name).suffix}"
    text = json.dumps(document) if path.suffix == ".json" else yaml.safe_dump(document, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["show", "report"])
def test_show_and_the_html_report_name_a_body_file_and_never_read_it(
    recorded: Recorded, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = _downloads_only(recorded, tmp_path)
    page = tmp_path / "report.html"
    arguments = ["show", str(path), "--raw"]
    if command == "report":
        arguments = ["report", str(path), "--html", str(page)]
    assert main(arguments) == 0  # once for the imports, which the figure below leaves out
    tracemalloc.start()
    try:
        assert main(arguments) == 0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    shown = capsys.readouterr().out if command == "show" else page.read_text("utf-8")
    digest = hashlib.sha256(recorded.content).hexdigest()
    assert f"{SIZE:,} bytes, sha256 {digest}, file bodies/sha256-{digest}" in shown
    assert peak < SIZE / 2, f"{command} held {peak / 2**20:.1f} MiB"  # the 5.5 MiB download: never read whole


def test_a_body_file_holding_this_machines_home_replays_it_restored_a_slice_at_a_time(tmp_path: Path) -> None:
    home = str(Path.home())
    # a large text download (a batch's output, a log) with the home folder written in it, one of
    # them across the slices the replay reads (a binary one is left as sent: test_in_process.py)
    content = bytearray(random.Random(7).choices(b"abcdefghij \n", k=LARGE_BODY_BYTES + SLICE // 2))
    for offset in (1000, 2 * SLICE - 7, 3 * SLICE - len(home) // 2):
        content[offset : offset + len(home) + 2] = f" {home}/".encode()
    path = tmp_path / "home.yaml"
    with FakeJobs() as jobs:
        client = _client(jobs.openai_base_url)
        with pytest.warns(Warning, match="identity"), promptvcr.use_cassette(path, record_mode="record"):
            uploaded = client.files.create(file=("data.bin", bytes(content)), purpose="user_data")
            assert _download(client, uploaded.id, tmp_path / "live.bin") == content
    (body,) = [file for file in (tmp_path / "bodies").iterdir() if file.stat().st_size < len(content) + 99]
    assert home.encode() not in body.read_bytes() and b"<home>" in body.read_bytes()
    with promptvcr.use_cassette(path, record_mode="none") as cassette:
        client = _client("http://127.0.0.1:9/v1")
        uploaded = client.files.create(file=("data.bin", bytes(content)), purpose="user_data")
        assert _download(client, uploaded.id, tmp_path / "replayed.bin") == content
    assert isinstance(cassette.played[-1].response.chunks, SpooledChunks)  # restored on disk, not in memory


def _aged(folder: Path) -> None:
    """Every body file older than the sweep's grace (a recording's are kept while this young)."""
    old = time.time() - 2 * YOUNG_SECONDS
    for body in (folder / "bodies").iterdir():
        os.utime(body, (old, old))


def test_prune_deletes_a_body_file_only_once_no_cassette_beside_it_refers_to_it(
    recorded: Recorded, tmp_path: Path
) -> None:
    folder = _copy(recorded, tmp_path)
    download = _body_file(folder, recorded.content)
    _aged(folder)
    swept = remove_interactions(folder / "download.yaml", [1, 2], 3)  # its two downloads
    assert swept == BodySweep() and download.exists()  # download.json still refers to it
    json_upload = folder / _document(folder / "download.json")["interactions"][0]["request"]["file"]["path"]
    (folder / "download.json").write_text(fileformat.dumps([], folder / "download.json"))
    swept = remove_interactions(folder / "download.yaml", [], 1)
    assert sorted(swept.deleted) == sorted([download, json_upload]) and swept.kept is None
    assert not download.exists()
    (upload,) = (folder / "bodies").iterdir()  # the YAML's upload: its cassette refers to it
    assert f"bodies/{upload.name}" in (folder / "download.yaml").read_text()


def test_a_young_body_file_is_kept_a_recording_may_be_about_to_refer_to_it(tmp_path: Path) -> None:
    young = write_body_file(tmp_path, [b"x" * 100])
    assert sweep_bodies(tmp_path) == BodySweep() and (tmp_path / young.path).exists()
    _aged(tmp_path)
    again = write_body_file(tmp_path, [b"x" * 100])  # recorded again: the same file, touched
    assert again == young and sweep_bodies(tmp_path) == BodySweep()


@property_settings(25)
@given(
    references=st.lists(st.sets(st.integers(0, 5), max_size=4), min_size=1, max_size=4),
    other=st.sampled_from(["notes.txt", "old.yml", ".hidden", "x.rerecorded.yaml"]),
)
def test_prune_never_deletes_a_body_file_any_file_beside_it_names(
    references: list[set[int]], other: str
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        bodies = [write_body_file(folder, [b"body %d" % n]) for n in range(6)]
        for index, named in enumerate(references):  # a cassette naming some of them, or a stray file
            items = [
                {
                    "request": {"method": "GET", "url": f"http://127.0.0.1/{n}"},
                    "response": {"status": 200, "file": stored_reference(bodies[n])},
                }
                for n in sorted(named)
            ]
            name = other if index == 0 else f"c{index}.{'json' if index % 2 else 'yaml'}"
            (folder / name).write_text(fileformat.dumps(items, folder / name), encoding="utf-8")
        (folder / "bodies" / "readme.md").write_text("not a body file")
        _aged(folder)
        swept = sweep_bodies(folder)
        named = set().union(*references)
        assert set(swept.deleted) == {folder / bodies[n].path for n in range(6) if n not in named}
        assert all((folder / bodies[n].path).exists() for n in named)
        assert (folder / "bodies" / "readme.md").exists()


def test_aiohttp_replays_a_body_file_as_the_application_reads_it(recorded: Recorded, tmp_path: Path) -> None:
    path = _downloads_only(recorded, tmp_path)
    url = _document(path)["interactions"][0]["request"]["url"]

    async def download() -> tuple[bytes, int]:
        async with aiohttp.ClientSession() as session:
            tracemalloc.start()
            try:
                async with session.get(url) as response:
                    digest = hashlib.sha256()
                    async for piece in response.content.iter_chunked(65536):
                        digest.update(piece)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        return digest.digest(), peak

    with promptvcr.use_cassette(path, record_mode="none"):
        received, peak = asyncio.run(download())
    assert received == hashlib.sha256(recorded.content).digest()
    assert peak < SIZE * 0.75, f"held {peak / 2**20:.1f} MiB of a {SIZE / 2**20:.1f} MiB body"  # fed as read


def test_a_cassette_with_body_files_follows_the_schema_and_a_broken_reference_does_not(
    recorded: Recorded,
) -> None:
    text = (resources.files("promptvcr") / "cassettes" / "cassette.schema.json").read_text(encoding="utf-8")
    validator = jsonschema.Draft202012Validator(json.loads(text))
    for name in ("download.yaml", "download.json"):
        document = _document(recorded.folder / name)
        assert list(validator.iter_errors(document)) == [], name
    document["interactions"][1]["response"]["file"]["path"] = "../../etc/passwd"
    assert list(validator.iter_errors(document))


def test_a_reference_outside_the_bodies_folder_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    folder = _copy(recorded, tmp_path)
    path = folder / "download.yaml"
    text = path.read_text(encoding="utf-8")
    digest = hashlib.sha256(recorded.content).hexdigest()
    path.write_text(
        text.replace(f"path: bodies/sha256-{digest}", "path: ../../etc/passwd", 1), encoding="utf-8"
    )
    refused = r"interactions\[1\]\.response\.file: path is '../../etc/passwd', expected bodies/sha256-"
    with pytest.raises(CassetteFormatError, match=refused), promptvcr.use_cassette(path, record_mode="none"):
        pass


def test_scan_fix_identity_rewrites_a_cassette_with_body_files_and_keeps_their_references(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = os.urandom(LARGE_BODY_BYTES + 1000)
    named = f"{Path.home()}/data.bin"  # this machine's home, in the file object the server answers
    path = tmp_path / "mine.yaml"
    with FakeJobs() as jobs, promptvcr.use_cassette(path, record_mode="record", identity=False):
        client = _client(jobs.openai_base_url)
        uploaded = client.files.create(file=(named, content), purpose="user_data")
        assert _download(client, uploaded.id, tmp_path / "live.bin") == content
    before = sorted((tmp_path / "bodies").iterdir())
    assert main(["scan", "--fix-identity", "--apply", str(path)]) == 0
    assert "<home>" in path.read_text(encoding="utf-8") and str(Path.home()) not in path.read_text(
        encoding="utf-8"
    )
    assert sorted((tmp_path / "bodies").iterdir()) == before
    client = _client("http://127.0.0.1:9/v1")
    with promptvcr.use_cassette(path, record_mode="none"):
        uploaded = client.files.create(file=(named, content), purpose="user_data")
        assert uploaded.filename == named  # put back: this machine's home
        assert _download(client, uploaded.id, tmp_path / "replayed.bin") == content


def test_a_cassette_holding_a_large_body_inline_replays_as_before(tmp_path: Path) -> None:
    content = os.urandom(LARGE_BODY_BYTES + 10)  # written before body files: base64 in the cassette
    path = tmp_path / "old.json"  # JSON: a 5.6 MB YAML scalar takes seconds to write and read
    item = {
        "request": {"method": "GET", "url": "http://127.0.0.1:9/v1/files/file-old/content"},
        "response": {"status": 200, "headers": {"content-type": "application/octet-stream"},
                     "base64": base64.b64encode(content).decode()},
    }  # fmt: skip
    path.write_text(json.dumps({"interactions": [item], "version": 1}), encoding="utf-8")
    with promptvcr.use_cassette(path, record_mode="none"):
        assert _download(_client("http://127.0.0.1:9/v1"), "file-old", tmp_path / "old.bin") == content
    assert not (tmp_path / "bodies").exists()  # read as it is, nothing written

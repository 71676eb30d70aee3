"""``promptvcr mcp`` ends cleanly whatever fails (issue 54, scenario 6).

A server that dies in the middle of a call, a replay that misses while the client still holds
its end open: every call without an answer gets a JSON-RPC error saying why, the wrapper exits
with a status (the server's, or 1), and never with the interpreter's abort (``Fatal Python
error: _enter_buffered_busy``, exit 134, from a thread blocked reading ``sys.stdin`` at exit).
The client is a raw JSON-RPC line writer here, to hold its end open as long as the test says.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from test_mcp_wrapper import wrapped

#: A server that answers ``initialize`` and dies (status 3) on the first ``tools/call``.
CRASHING = """
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": "2025-06-18",
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "crashing", "version": "1"}}}
        sys.stdout.write(json.dumps(answer) + "\\n"); sys.stdout.flush()
    elif message.get("method") == "tools/call":
        if message["params"]["arguments"].get("crash"):
            os._exit(3)
        text = [{"type": "text", "text": "ok"}]
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": text}}
        sys.stdout.write(json.dumps(answer) + "\\n"); sys.stdout.flush()
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _call(id_: int, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }


def _wrapper(cassette: Path, server: Path, *mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        wrapped(cassette, server, *mode),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the wrapper wrote nothing more"
    answer: dict[str, Any] = json.loads(line)
    return answer


def _ended(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Exit status and stderr, with the client's end of stdin still open until the wrapper exits."""
    code = process.wait(timeout=60)
    assert process.stderr is not None
    return code, process.stderr.read().decode()


def test_a_server_that_dies_mid_call_gets_its_call_answered_with_an_error(tmp_path: Path) -> None:
    server = tmp_path / "crashing.py"
    server.write_text(CRASHING)
    wrapper = _wrapper(tmp_path / "crash.yaml", server, "--record-mode", "rewrite")
    _send(wrapper, INITIALIZE)
    assert _answer(wrapper)["id"] == 0
    _send(wrapper, _call(1, text="fine"))
    assert _answer(wrapper)["result"]["content"][0]["text"] == "ok"
    _send(wrapper, _call(2, crash=True))
    failed = _answer(wrapper)
    code, stderr = _ended(wrapper)
    assert failed["id"] == 2 and "exited (status 3) before answering" in failed["error"]["message"]
    assert code == 3 and "Fatal Python error" not in stderr, stderr


def test_a_replay_miss_answers_the_call_and_exits_1_with_the_client_still_there(tmp_path: Path) -> None:
    server, cassette = tmp_path / "crashing.py", tmp_path / "recorded.yaml"
    server.write_text(CRASHING)
    recording = _wrapper(cassette, server, "--record-mode", "rewrite")
    _send(recording, INITIALIZE)
    _answer(recording)
    _send(recording, _call(1, text="fine"))
    _answer(recording)
    assert recording.stdin is not None
    recording.stdin.close()
    assert _ended(recording)[0] == 0
    server.rename(tmp_path / "gone.py")

    replay = _wrapper(cassette, server)
    _send(replay, INITIALIZE)
    assert _answer(replay)["id"] == 0
    _send(replay, _call(7, text="changed"))  # the client keeps its end open from here on
    missed = _answer(replay)
    code, stderr = _ended(replay)
    assert missed["id"] == 7 and "changed" in missed["error"]["message"]
    assert code == 1 and "Fatal Python error" not in stderr and "changed" in stderr, stderr

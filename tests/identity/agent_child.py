"""A child process for test_portable: one coding agent's tool loop through the real openai
client, on the machine identity its environment gives (HOME, TMPDIR, USER, the working
directory; the host name from the OS, or PROMPTVCR_HOSTNAME where the test cannot set it).
Its system prompt holds the working directory, home, temporary folder, user and host; the model
calls ``read_file`` with an absolute path, whose result holds the path, the user and the host.
Prints one JSON line: everything the application read.

argv: cassette path ("-" for none: live), record mode, the provider's base URL."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import socket
import sys
import tempfile
from pathlib import Path

import openai

import promptvcr


def machine() -> dict[str, str]:
    return {
        "cwd": os.getcwd(),
        "home": str(Path.home()),
        "tmp": tempfile.gettempdir(),
        "user": getpass.getuser(),
        "host": os.environ.get("PROMPTVCR_HOSTNAME") or socket.gethostname(),
    }


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]


def read_file(path: str) -> str:
    me = machine()
    scratch = Path(me["tmp"]) / "agent-scratch.txt"
    scratch.write_text(Path(path).read_text())
    return json.dumps({"path": path, "copied_to": str(scratch), "owner": me["user"], "on": me["host"],
                       "text": Path(path).read_text()})  # fmt: skip


def loop(client: openai.OpenAI) -> dict[str, object]:
    me = machine()
    system = (
        f"You are a coding agent working in {me['cwd']} (home {me['home']}, scratch space {me['tmp']}) "
        f"for {me['user']} on {me['host']}."
    )
    notes = str(Path(me["cwd"]) / "notes.txt")
    messages: list[dict[str, object]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": notes},
    ]
    seen: list[object] = []
    for _ in range(3):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = reply.choices[0].message
        seen.append(message.model_dump())
        if not message.tool_calls:
            return {"answers": seen, "final": message.content}
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = read_file(json.loads(call.function.arguments)["path"])
            seen.append(result)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise SystemExit("the loop did not end")


def main() -> None:
    cassette, mode, base_url = sys.argv[1:4]
    client = openai.OpenAI(api_key="sk-test-identity", base_url=base_url, max_retries=0)
    used = contextlib.nullcontext() if cassette == "-" else promptvcr.use_cassette(cassette, record_mode=mode)
    with used:
        print(json.dumps(loop(client)))


if __name__ == "__main__":
    main()

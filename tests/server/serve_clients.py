"""The clients the server tests run in other processes: the openai SDK (Python, npm), curl.

Each prints what it received, one line per call, so that a recording and its replay can be
compared; a failed call prints ``ERROR <status> <message>`` instead of raising.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import installs
import pytest

API_KEY = "sk-proj-servertest-0123456789abcdefghijklmnop"

PYTHON_CLIENT = r"""
import asyncio, os, sys
import openai

question = sys.argv[1]
key = os.environ["OPENAI_API_KEY"]

def show(error):
    print("ERROR", getattr(error, "status_code", "?"), str(error).replace("\n", "\\n"))

client = openai.OpenAI(api_key=key, max_retries=0)
try:
    messages = [{"role": "user", "content": question}]
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    print("sync:", answer.choices[0].message.content)
except openai.APIStatusError as error:
    show(error)

async def main():
    async with openai.AsyncOpenAI(api_key=key, max_retries=0) as aclient:
        answer = await aclient.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "async " + question}]
        )
        print("async:", answer.choices[0].message.content)

try:
    asyncio.run(main())
except openai.APIStatusError as error:
    show(error)

try:
    with client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "stream " + question}], stream=True
    ) as stream:
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    print("stream:", "|".join(pieces))
except openai.APIStatusError as error:
    show(error)
"""

NODE_CLIENT = r"""
const OpenAI = require("openai");
const question = process.argv[process.argv.length - 1];  // node -e CODE ARG: argv is [node, ARG]
const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const show = (e) => console.log("ERROR", e.status, String(e.message).replace(/\n/g, "\\n"));
(async () => {
  try {
    const answer = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "node " + question }],
    });
    console.log("plain:", answer.choices[0].message.content);
  } catch (e) { show(e); }
  try {
    const stream = await client.chat.completions.create({
      model: "gpt-4o-mini", messages: [{ role: "user", content: "node stream " + question }], stream: true,
    });
    const pieces = [];
    for await (const chunk of stream) {
      if (chunk.choices.length) pieces.push(chunk.choices[0].delta.content || "");
    }
    console.log("stream:", pieces.join("|"));
  } catch (e) { show(e); }
})();
"""


def child_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "OPENAI_API_KEY": API_KEY, "NO_PROXY": "*", "no_proxy": "*"}


def run_python(env: dict[str, str], question: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PYTHON_CLIENT, question],
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


#: The npm packages the node clients use, pinned (tests/installs.py installs them once).
NPM_PACKAGES = installs.NPM_SDKS


def npm_modules() -> Path:
    """A ``node_modules`` folder with :data:`NPM_PACKAGES`; skips the test, saying why, when
    node or npm is missing or npm cannot reach its registry."""
    try:
        return installs.npm_sdks()
    except installs.Unavailable as why:
        pytest.skip(str(why))


def node_modules() -> Path | None:
    """:func:`npm_modules`, or None without node (for tests that run other clients too)."""
    try:
        return npm_modules()
    except pytest.skip.Exception:
        return None


def run_node(modules: Path, env: dict[str, str], question: str) -> list[str]:
    done = subprocess.run(
        ["node", "-e", NODE_CLIENT, question],
        env={**child_env(env), "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def run_curl(url: str, body: str) -> tuple[int, str]:
    """POST ``body`` as JSON with curl; (status, body)."""
    done = subprocess.run(
        [
            "curl", "-sS", "--noproxy", "*", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", url,
            "-H", "content-type: application/json", "-H", f"authorization: Bearer {API_KEY}", "--data", body,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text, _, status = done.stdout.rpartition("\n")
    return int(status), text

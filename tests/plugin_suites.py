"""Suites written into a pytester directory: the application module, cassettes, and the run.

Shared by the plugin's tests and the command-line tests that run a suite first (prune,
the drift report). The inner suites call the real openai SDK; replay runs point it at a
port where nothing listens, recording runs at the loopback fake provider.
"""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path
from typing import Any

import pytest

import openai  # isort: skip

from promptvcr.files import fileformat

OFFLINE = "http://127.0.0.1:9/v1"  # nothing listens here: replay must not need a server

#: The application the inner suites test: one chat call through the real openai SDK.
LLM_MODULE = f'''
import openai

def ask(text, base_url="{OFFLINE}"):
    client = openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=base_url, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{{"role": "user", "content": text}}]
    )
    return reply.choices[0].message.content
'''


def chat(question: str, answer: str, tokens: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """One recorded chat interaction, in the stored form, as the ``LLM_MODULE`` would send it."""
    prompt, completion = tokens
    return {
        "request": {
            "method": "POST",
            "url": "https://api.openai.com/v1/chat/completions",
            "headers": {"content-type": "application/json"},
            "json": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
        },
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json"},
            "json": {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": "gpt-4o-mini",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            },
        },
    }


def write_cassette(path: Path, *interactions: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fileformat.dumps(list(interactions), path), encoding="utf-8")
    return path


#: Plugins the inner runs do not need: they import (and assertion-rewrite) hundreds of
#: modules again in every in-process run, which made each run take seconds; a run in a child
#: process imports them at its start (2.3 of its 3.5 s of CPU before its first test).
QUIET = ("-p", "no:hypothesispytest", "-p", "no:langsmith_plugin")


def _import_the_sdk_stack() -> None:
    """Import every module an SDK call imports lazily (httpcore2, h11, ...), before any pytester.

    pytester drops the modules imported after it was set up. Imported again by a later
    run, ``httpcore2`` would raise exception classes that ``httpx2`` (imported once, with
    openai) no longer recognises; and importing the stack in every run costs seconds.
    """
    client = openai.OpenAI(api_key="sk-none", base_url=OFFLINE, max_retries=0)
    with contextlib.suppress(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "warm up"}])


_import_the_sdk_stack()


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*QUIET, *args)


def make_suite(pytester: pytest.Pytester, **files: str) -> None:
    """The application module plus the given test files (name -> source)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(llm=LLM_MODULE, **{name: textwrap.dedent(source) for name, source in files.items()})

"""The project's sessions.

    nox                          # tests and lint
    nox -s tests -- ARGS         # the test suite and the examples, offline, no API key
    nox -s lint                  # ruff, and mypy --strict on the package
    nox -s record -- ARGS        # record what the cassettes miss, from the real providers
    nox -s drift -- ARGS         # verify against the providers, re-record what drifted, summarise

``record`` runs pytest with ``--record-mode=record`` and the provider API keys of your
environment: a request found in its cassette replays, a missing one goes to the provider
and is appended. The promptvcr pytest plugin then checks every cassette the run wrote and
fails the test that wrote a secret into one, so the session fails before it is committed.
"""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests", "lint"]

#: The API key variables of the providers' SDKs, passed to the recording run by name.
PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "COHERE_API_KEY",
)


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("-e", ".[test,dev]")
    session.run("ruff", "check", "src", "tests", "examples", "noxfile.py")
    session.run("mypy", "src/promptvcr")


@nox.session
def record(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    keys = {name: os.environ[name] for name in PROVIDER_KEYS if os.environ.get(name)}
    if keys:
        session.log(f"recording with {', '.join(sorted(keys))}")
    else:
        names = ", ".join(PROVIDER_KEYS)
        session.warn(f"no provider API key is set ({names}): recording a request will fail.")
    session.run("python", "-m", "pytest", "--record-mode=record", *session.posargs, env=keys)


#: Where ``drift`` writes the verify run's report and the pull request summary.
DRIFT_REPORT = ".promptvcr/drift.json"
DRIFT_SUMMARY = ".promptvcr/drift-summary.md"


@nox.session
def drift(session: nox.Session) -> None:
    """Verify every cassette against the providers, re-record exactly the tests whose answers
    changed shape, and write a summary grouped by severity for the pull request body."""
    session.install("-e", ".[test]")
    keys = {name: os.environ[name] for name in PROVIDER_KEYS if os.environ.get(name)}
    verify = ["python", "-m", "pytest", "--record-mode=verify", f"--drift-report={DRIFT_REPORT}"]
    session.run(*verify, *session.posargs, env=keys, success_codes=[0, 1])
    listed = session.run("python", "-m", "promptvcr", "drift", DRIFT_REPORT, "--tests", silent=True)
    tests = str(listed or "").split()
    if tests:
        session.run("python", "-m", "pytest", "--record-mode=rewrite", *tests, env=keys)
    summary = ["python", "-m", "promptvcr", "drift", DRIFT_REPORT, *(["--rerecorded"] if tests else [])]
    text = str(session.run(*summary, silent=True) or "")
    with open(DRIFT_SUMMARY, "w", encoding="utf-8") as out:
        out.write(text)
    print(text)

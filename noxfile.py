"""The project's sessions.

    nox                          # tests and lint
    nox -s tests -- ARGS         # the test suite and the examples, offline, no API key
    nox -s lock                  # refresh constraints/test.txt to the newest releases, then test
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
import re
from collections.abc import Sequence
from dataclasses import dataclass

import nox

nox.options.sessions = ["tests", "lint"]

#: The locked test environment: what the README's test command installs (``-c`` this file).
LOCK = "constraints/test.txt"
#: The websockets 17 release tests/interceptors/test_websockets_latest.py installs beside it.
WEBSOCKETS_17 = "constraints/websockets-17.txt"

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
    session.install("-e", ".[test]", "-c", LOCK)
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("-e", ".[test,dev]", "-c", LOCK)
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


# --- lock: the test environment CI installs ------------------------------------------------

LOCK_HEADER = """\
# The test environment CI and the README's command install: every package of the `test` and
# `dev` extras and what they pull in, at versions the whole suite passed with. A release of
# any of them cannot turn CI red overnight; the newest releases are tested apart, by
# `nox -s "compat(newest)"` (docs/versions.md).
#
# Refresh it with `nox -s lock`: a fresh environment with the newest releases, frozen into this
# file, then the whole suite on it. Commit the file only when that run passed.
"""


@nox.session
def lock(session: nox.Session) -> None:
    """Refresh the lock: install the ``test`` and ``dev`` extras at their newest releases in a
    fresh environment, freeze it into ``constraints/test.txt``, then run the whole suite on it
    (the examples too). A red run leaves the new file for you to read, not to commit."""
    session.install("-e", ".[test,dev]")
    frozen = session.run("python", "-m", "pip", "freeze", "--exclude-editable", silent=True)
    pins = [line for line in str(frozen).splitlines() if line and not line.startswith("#")]
    with open(LOCK, "w", encoding="utf-8") as out:
        out.write(LOCK_HEADER + "".join(f"{pin}\n" for pin in pins))
    # The websockets 17 test installs its own release beside the lock (others cap it below 17).
    listed = str(session.run("python", "-m", "pip", "index", "versions", "websockets", silent=True))
    newest = re.search(r"websockets \(([^)]+)\)", listed)
    if newest is None:
        session.error(f"pip index versions websockets said nothing usable:\n{listed}")
    with open(WEBSOCKETS_17, encoding="utf-8") as pinned:
        kept = [line for line in pinned if line.startswith("#")]
    with open(WEBSOCKETS_17, "w", encoding="utf-8") as out:
        out.write("".join(kept) + f"websockets=={newest.group(1)}\n")
    session.log(f"{LOCK}: {len(pins)} packages pinned; running the suite on them")
    session.run("python", "-m", "pytest", "examples", "-q")
    session.run("python", "-m", "pytest", "-q", *session.posargs)


# --- compat: the interceptor and SDK tests across the versions users install ----------------

#: The tests a compat run takes: every interceptor's, the faults' (what each SDK raises at a
#: fault, compared with the same SDK live), the SDKs' record-and-replay, MCP's. The
#: websockets-latest test is left out: it builds its own venv for what the matrix covers here.
COMPAT_TESTS = (
    "tests/interceptors",
    "tests/faults",
    "tests/test_record_replay.py",
    "tests/mcp/test_mcp_sessions.py",
    "tests/grpc_calls",
    "--deselect=tests/interceptors/test_websockets_latest.py",
)

#: What the tests above import besides promptvcr and the intercepted libraries (not the whole
#: ``test`` extra: an old SDK line cannot install beside it).
COMPAT_TOOLS = (
    "pytest",
    "pytest-asyncio",
    "pytest-xdist",
    "hypothesis",
    "jsonschema",
    "cryptography",
    "requests",
    "boto3",
    "uvicorn",
)
INTERCEPTED = ("httpx2", "httpx", "respx", "aiohttp", "urllib3", "websockets", "grpcio", "protobuf")
#: The gRPC clients (tests/grpc_calls) after the HTTP ones: google-cloud-aiplatform's newest
#: release beside google-genai 3 is 1.91 (later ones cap google-genai below 3). Unbounded,
#: pip takes the newest aiplatform and moves google-genai down to 2.x, a line promptvcr does
#: not support: "newest" would test no google-genai 3 at all. setup.cfg's floor is kept here.
SDKS = (
    "openai", "anthropic", "google-genai>=3", "mcp",
    "grpcio-status", "google-cloud-aiplatform", "google-cloud-speech", "qdrant-client",
)  # fmt: skip


@dataclass(frozen=True)
class Combo:
    """One environment of the compat matrix."""

    #: Requirements, installed together (pip resolves them as a user's install would).
    requirements: tuple[str, ...] = (*COMPAT_TOOLS, *INTERCEPTED, *SDKS)
    #: A constraints file pinning every package (``constraints/``).
    constraints: str | None = None
    #: Then upgraded to its newest release alone, whatever another package's cap says: what a
    #: user gets from ``pip install -U`` (websockets 17 beside google-genai, issue 39).
    uncapped: tuple[str, ...] = ()
    #: What pytest runs: the tests that apply to this environment.
    pytest_args: tuple[str, ...] = COMPAT_TESTS


#: The tests that need urllib3 intercepted (requests, botocore, urllib3 itself). Below
#: urllib3 2.2.2 promptvcr leaves urllib3 unpatched with one warning (docs/versions.md), so
#: ``urllib3-1.26`` runs the rest, and tests/interceptors/test_urllib3_floor.py checks that
#: promise: the warning, and openai's cassette working beside requests and boto3.
URLLIB3_INTERCEPTED = (
    "tests/interceptors/test_interceptor_urllib3.py",
    "tests/interceptors/test_bedrock_errors_replay.py",
    "tests/interceptors/test_interceptor_background.py::test_telemetry_is_answered_locally_in_every_mode",
    "tests/interceptors/test_interceptor_background.py::test_passthrough_hosts_reach_the_server_and_are_never_recorded",
    "tests/interceptors/test_interceptor_background.py::test_empty_lists_make_background_hosts_ordinary_traffic",
    "tests/interceptors/test_early_close.py::test_a_response_neither_read_nor_closed_is_recorded_as_far_as_it_arrived",
    "tests/interceptors/test_lazy_install.py::test_a_library_imported_after_the_cassette_is_entered_is_intercepted",
    "tests/interceptors/test_lazy_install.py::test_a_library_imported_between_cassettes_is_intercepted_by_the_next",
)


def _but(*replaced: str) -> tuple[str, ...]:
    """The default requirements with those of the same names as ``replaced`` swapped for them."""
    names = {re.split(r"[\[<>=!~ ]", r, maxsplit=1)[0] for r in replaced}
    return (*(r for r in Combo.requirements if r not in names), *replaced)


COMBOS = {
    # The lowest versions setup.cfg allows, written out by
    # uv pip compile --resolution lowest-direct --python-version 3.11 (see the file's header).
    "lowest": ("3.11", Combo(constraints="constraints/lowest.txt")),
    # The newest releases that resolve together.
    "newest": ("3.11", Combo()),
    "newest-py3.12": ("3.12", Combo()),
    # Each intercepted library at its newest release alone, nothing capping it.
    **{f"uncapped-{lib}": ("3.11", Combo(uncapped=(lib,))) for lib in ("websockets", "httpx2", "aiohttp")},
    "uncapped-httpx": ("3.11", Combo(uncapped=("httpx", "respx"))),
    "uncapped-urllib3": ("3.11", Combo(uncapped=("urllib3",))),
    "uncapped-grpcio": ("3.11", Combo(uncapped=("grpcio", "protobuf"))),
    # The older lines users still run.
    # Below the supported floor (2.2.2): what promptvcr promises there, not what it does not.
    "urllib3-1.26": (
        "3.11",
        Combo(
            _but("urllib3<2"),
            pytest_args=(*COMPAT_TESTS, *(f"--deselect={test}" for test in URLLIB3_INTERCEPTED)),
        ),
    ),
    # On httpx (openai 3 is on httpx2), with its aiohttp extra: openai 1's DefaultAioHttpClient
    # (httpx-aiohttp) is tested too. Tests that pass openai an httpx2 client skip, saying why.
    "openai-1": ("3.11", Combo(_but("openai[aiohttp]<2"))),
    "anthropic-1": ("3.11", Combo(_but("anthropic<2"))),
    "pytest-8": ("3.11", Combo(_but("pytest<9"))),
}


@nox.session(venv_backend="uv|virtualenv")
@nox.parametrize(
    ("python", "combo"), [(python, name) for name, (python, _) in COMBOS.items()], ids=list(COMBOS)
)
def compat(session: nox.Session, combo: str) -> None:
    """The interceptor and SDK tests against the lowest and the newest versions users install
    (docs/versions.md). ``nox -s compat`` runs them all; ``nox -s "compat(newest)"`` one."""
    setup = COMBOS[combo][1]
    constraints = ["-c", setup.constraints] if setup.constraints else []
    session.install("-e", ".", *setup.requirements, *constraints)
    if setup.uncapped:
        before = _versions(session, setup.uncapped)
        session.install("--upgrade", *setup.uncapped)
        if _versions(session, setup.uncapped) == before:
            session.skip(f"nothing caps {before}: the same environment as compat(newest)")
    names = {re.split(r"[\[<>=!~ ]", r, maxsplit=1)[0] for r in (*INTERCEPTED, *SDKS, "pytest")}
    session.log(_versions(session, sorted(names)))
    session.run("python", "-m", "pytest", "-q", *setup.pytest_args, *session.posargs)


def _versions(session: nox.Session, names: Sequence[str]) -> str:
    """``python=3.11.7 httpx=0.28.1 ...``: the versions the session's environment holds."""
    code = (
        "import importlib.metadata as m, sys\n"
        "def v(n):\n"
        "    try: return m.version(n)\n"
        "    except m.PackageNotFoundError: return '-'\n"
        f"print('python=' + sys.version.split()[0], *(n + '=' + v(n) for n in {list(names)!r}))"
    )
    return str(session.run("python", "-c", code, silent=True)).strip()


#: Where ``drift`` writes the verify run's report and the pull request summary.
DRIFT_REPORT = ".promptvcr/drift.json"
DRIFT_SUMMARY = ".promptvcr/drift-summary.md"


@nox.session
def drift(session: nox.Session) -> None:
    """Verify every cassette against the providers, re-record exactly the tests whose answers
    changed shape, and write a summary grouped by severity for the pull request body. Made for
    a scheduled CI job, so both runs go live with ``$CI`` set (``--allow-record-in-ci``)."""
    session.install("-e", ".[test]")
    keys = {name: os.environ[name] for name in PROVIDER_KEYS if os.environ.get(name)}
    live = ["python", "-m", "pytest", "--allow-record-in-ci"]
    verify = [*live, "--record-mode=verify", f"--drift-report={DRIFT_REPORT}"]
    session.run(*verify, *session.posargs, env=keys, success_codes=[0, 1])
    listed = session.run("python", "-m", "promptvcr", "drift", DRIFT_REPORT, "--tests", silent=True)
    tests = str(listed or "").split()
    if tests:
        session.run(*live, "--record-mode=rewrite", *tests, env=keys)
    summary = ["python", "-m", "promptvcr", "drift", DRIFT_REPORT, *(["--rerecorded"] if tests else [])]
    text = str(session.run(*summary, silent=True) or "")
    with open(DRIFT_SUMMARY, "w", encoding="utf-8") as out:
        out.write(text)
    print(text)

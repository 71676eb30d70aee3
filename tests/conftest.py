"""Shared fixtures: a loopback fake provider, started and stopped by the test that needs it."""

from __future__ import annotations

import os
import ssl
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# This suite records against loopback servers, on CI too (where CI=true): it allows what a user's
# CI refuses (see promptvcr.policies.modes.check_ci), for this process and the pytest runs it starts. The
# guard itself is tested with the variable removed (tests/pytest_plugin/test_ci_guard.py).
os.environ.setdefault("PROMPTVCR_ALLOW_RECORD_IN_CI", "1")
# Large cassettes read in tests are kept in a parse cache of the suite's own, never the user's
# (see promptvcr.files.parsecache); tests of the cache point it at their tmp_path.
os.environ.setdefault("PROMPTVCR_CACHE_DIR", os.path.join(tempfile.gettempdir(), "promptvcr-tests-cache"))
# The suite's processes keep the bytecode they compile, as Python does by default, in the
# checkout's (ignored) __pycache__ folders. Machines built for sandboxes, CI's among them, set
# PYTHONDONTWRITEBYTECODE=1: then every process this suite starts (two xdist workers, a few
# hundred children: serve, the CLI, pytest in pytest, other machines' identities) compiled
# promptvcr and the test modules again from source, about a quarter of the CPU of a
# subprocess-heavy test (tests/identity + the prune tests, -n 0: 27.7 s user without, 20.1 s
# with). Installed packages are unaffected: pip compiled those when it installed them.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False
# Every HTTP client an SDK makes (httpx, httpx2: openai, anthropic, google-genai...) loads the CA
# bundle SSL_CERT_FILE names, or certifi's, as it is made: about 35 ms of CPU a client, and the
# suite makes thousands of clients in its workers and children. No test verifies a public
# certificate (nothing leaves 127.0.0.1; the TLS tests bring their own certificate and context),
# so the suite's processes name the same authorities as OpenSSL's hashed folder (SSL_CERT_DIR),
# read only when a certificate is verified: a client is made in 1 ms. Only where the bundle is
# that folder's own (Debian's update-ca-certificates writes both, a proxy's authority included):
# a bundle kept elsewhere may hold an authority the folder lacks, which the suite's installs from
# the package index (uv, in test_websockets_latest) need; it is then left as it is.
if os.path.isdir(
    folder := os.environ.get("SSL_CERT_DIR") or ssl.get_default_verify_paths().openssl_capath
) and (
    (bundle := os.environ.get("SSL_CERT_FILE")) is None
    or os.path.dirname(os.path.realpath(bundle)) == os.path.realpath(folder)
):
    os.environ.pop("SSL_CERT_FILE", None)
    os.environ["SSL_CERT_DIR"] = folder

from fake_provider import FakeProvider

from promptvcr.importers import import_vcr

#: The CI subset of the shared corpus: vcrpy cassettes (pydantic-ai, MIT), one folder per provider.
CORPUS = Path(__file__).resolve().parent / "corpus" / "pydantic-ai"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture(scope="session")
def converted_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus subset converted to promptvcr cassettes once per run, for the CLI views' tests."""
    out = tmp_path_factory.mktemp("converted")
    report = import_vcr([CORPUS], out)
    assert not report.failed and not report.partial
    return out


@pytest.fixture(autouse=True)
def _no_env_record_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their mode explicitly; a developer's PROMPTVCR_RECORD_MODE must not leak in."""
    monkeypatch.delenv("PROMPTVCR_RECORD_MODE", raising=False)


@pytest.fixture(autouse=True)
def _own_sent_credentials() -> Iterator[None]:
    """Each test starts with no credential remembered as sent, and leaves none behind.

    A process remembers every credential its recorded requests sent, so that a key one call
    sent is masked wherever it shows up after (``credentials.masking.remember_sent``). A user's
    run sends a handful; this suite sends thousands of random keys (a module fixture importing
    the shared corpus alone remembers hundreds), and every later save in the same worker
    searched for all of them: redaction tests took 10-33 s in the suite and under a second
    alone. Tests of that memory make it inside themselves.
    """
    _forget_sent()
    yield
    _forget_sent()


def _forget_sent() -> None:
    # Looked up, never imported: the tests of what a run loads must find the package unloaded.
    masking = sys.modules.get("promptvcr.credentials.masking")
    if masking is not None:
        masking._SENT.clear()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config) -> None:
    """A distributed run starts the registry installs its paths need (Chromium, npm packages)
    in the background while the workers start: see tests/installs.py."""
    import installs

    args = [arg.split("::", 1)[0] for arg in config.args if not arg.startswith("-")]
    where = config.invocation_params.dir
    installs.start_needed([where / arg for arg in args] if args else [config.rootpath / "tests"])

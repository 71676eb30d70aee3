"""The network guard: replaying tests are hermetic, ``--block-network`` extends that to all tests.

Nothing here may ever leave the machine, even when the guard under test is broken. So the
inner suites get a *safety net* installed at configure time, before the plugin patches
anything: name resolution of a non-local name answers a documentation address
(192.0.2.10, TEST-NET-1) without asking DNS, and connecting to any non-loopback address
fails with ``SAFETY NET``. A test expecting promptvcr's message therefore fails, instead of
leaking, when the guard lets a connection through; a test expecting the safety net's error
proves the guard let an allowed host through.
"""

from __future__ import annotations

import re

import pytest
from plugin_suites import chat, make_suite, run, write_cassette

SAFETY_NET = """
import ipaddress
import socket

_real = (socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex)


def _local(host):
    host = str(host)
    return host in ("", "localhost", "::1") or host.startswith("127.")


def _getaddrinfo(host, port, *args, **kwargs):
    if host is None or _local(host):
        return _real[0](host, port, *args, **kwargs)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (host, int(port or 0)))]
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.10", int(port or 0)))]


def _connect(self, address):
    if isinstance(address, tuple) and not _local(address[0]):
        raise ConnectionRefusedError(f"SAFETY NET: {address[0]} would have left the machine")
    return _real[1](self, address)


def _connect_ex(self, address):
    if isinstance(address, tuple) and not _local(address[0]):
        raise ConnectionRefusedError(f"SAFETY NET: {address[0]} would have left the machine")
    return _real[2](self, address)


def pytest_configure(config):
    socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex = _getaddrinfo, _connect, _connect_ex


def pytest_unconfigure(config):
    socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex = _real
"""

#: Tests that reach out in every way a program does: a name, an address, a raw socket, asyncio, urllib.
REACHING_OUT = """
import asyncio
import socket
import urllib.request

import pytest


def test_by_name():
    socket.create_connection(("api.example.com", 443), timeout=1)


def test_by_address():
    socket.create_connection(("203.0.113.5", 80), timeout=1)


def test_raw_socket():
    with socket.socket() as sock:
        sock.connect(("203.0.113.5", 80))


def test_connect_ex():
    with socket.socket() as sock:
        sock.connect_ex(("203.0.113.5", 80))


@pytest.mark.asyncio
async def test_asyncio():
    await asyncio.open_connection("api.example.com", 443)


def test_urllib():
    urllib.request.urlopen("http://api.example.com/", timeout=1)
"""

LOOPBACK = """
import socket


def test_loopback_always_goes_through():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        for host in ("127.0.0.1", "localhost"):
            socket.create_connection((host, port), timeout=1).close()
"""


def _suite(pytester: pytest.Pytester, **files: str) -> None:
    pytester.makeconftest(SAFETY_NET)
    make_suite(pytester, **files)


def test_without_the_option_plain_tests_are_not_blocked(pytester: pytest.Pytester) -> None:
    _suite(pytester, test_out=REACHING_OUT)
    result = run(pytester)
    result.assert_outcomes(failed=6)
    assert result.stdout.str().count("SAFETY NET") >= 6
    assert "promptvcr blocked" not in result.stdout.str()


def test_block_network_blocks_every_way_out_and_names_the_host(pytester: pytest.Pytester) -> None:
    _suite(pytester, test_out=REACHING_OUT, test_loopback=LOOPBACK)
    result = run(pytester, "--block-network")
    result.assert_outcomes(failed=6, passed=1)
    output = result.stdout.str()
    assert "SAFETY NET" not in output
    reason = "--block-network is on and this test uses no cassette."
    for host, port in [("api.example.com", 443), ("203.0.113.5", 80)]:
        assert f"promptvcr blocked a network connection to {host} (port {port}): {reason}" in output
        assert f"To let this host through, run pytest with --allowed-hosts={host}; " in output
    failures = _failure_sections(result)
    by_name = [name for name, text in failures.items() if "connection to api.example.com" in text]
    assert sorted(by_name) == ["test_asyncio", "test_by_name", "test_urllib"]
    blocked = "promptvcr blocked a network connection to api.example.com"
    assert failures["test_urllib"].startswith(f"{blocked} (port 80)")  # the message, no traceback
    assert failures["test_asyncio"].startswith(f"{blocked} (port 443)")
    assert "Traceback" not in output and "urllib/request.py" not in output


def test_allowed_hosts_let_named_hosts_through(pytester: pytest.Pytester) -> None:
    _suite(pytester, test_out=REACHING_OUT)
    result = run(
        pytester, "--block-network", "--allowed-hosts=api.example.com", "--allowed-hosts=203.0.113.5"
    )
    result.assert_outcomes(failed=6)
    assert "promptvcr blocked" not in result.stdout.str()
    # The only name allowed: its resolved address (192.0.2.10 here) is allowed along with it.
    result = run(pytester, "--block-network", "--allowed-hosts=api.example.com,unrelated.example.org")
    result.assert_outcomes(failed=6)
    failures = _failure_sections(result)
    let_through = [name for name, text in failures.items() if "SAFETY NET: 192.0.2.10" in text]
    blocked = [name for name, text in failures.items() if "connection to 203.0.113.5" in text]
    assert sorted(let_through) == ["test_asyncio", "test_by_name", "test_urllib"]
    assert sorted(blocked) == ["test_by_address", "test_connect_ex", "test_raw_socket"]


def test_a_replaying_test_is_hermetic_by_default(pytester: pytest.Pytester) -> None:
    _suite(
        pytester,
        test_app="""
        import socket
        import pytest
        from llm import ask

        @pytest.mark.promptvcr
        def test_replays_then_reaches_out():
            assert ask("hello") == "Hi!"
            socket.create_connection(("api.example.com", 443), timeout=1)

        @pytest.mark.promptvcr
        def test_loopback_is_fine():
            with socket.create_server(("127.0.0.1", 0)) as server:
                socket.create_connection(server.getsockname(), timeout=1).close()
        """,
    )
    write_cassette(
        pytester.path / "cassettes/test_app/test_replays_then_reaches_out.yaml", chat("hello", "Hi!")
    )
    result = run(pytester)
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "promptvcr blocked a network connection to api.example.com (port 443): this test replays "
            "cassettes/test_app/test_replays_then_reaches_out.yaml (record mode replay), so it must not need "
            "the network.",
            "To let this host through, run pytest with --allowed-hosts=api.example.com; "
            "to reach the real provider and record, run pytest with --record-mode=record.",
        ]
    )
    assert "SAFETY NET" not in result.stdout.str()
    run(pytester, "--allowed-hosts=api.example.com").stdout.fnmatch_lines(["*SAFETY NET: 192.0.2.10*"])


def test_a_recording_test_may_reach_the_network_even_with_block_network(pytester: pytest.Pytester) -> None:
    _suite(
        pytester,
        test_app="""
        import socket
        import pytest

        @pytest.mark.promptvcr
        def test_records():
            socket.create_connection(("api.example.com", 443), timeout=1)

        def test_plain():
            socket.create_connection(("api.example.com", 443), timeout=1)
        """,
    )
    result = run(pytester, "--block-network", "--record-mode=record")
    result.assert_outcomes(failed=2)
    failures = _failure_sections(result)
    assert "SAFETY NET: 192.0.2.10" in failures["test_records"]
    assert "promptvcr blocked a network connection to api.example.com" in failures["test_plain"]


def test_the_guard_is_removed_after_each_test(pytester: pytest.Pytester) -> None:
    _suite(
        pytester,
        test_app="""
        import socket
        import pytest

        BEFORE = (socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex)

        @pytest.mark.promptvcr
        def test_guarded():
            assert socket.socket.connect is not BEFORE[1]

        def test_after():
            assert (socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex) == BEFORE
        """,
    )
    run(pytester).assert_outcomes(passed=2)


def test_subdomains_of_allowed_hosts_and_the_cassettes_passthrough_hosts_go_through(
    pytester: pytest.Pytester,
) -> None:
    _suite(
        pytester,
        test_app="""
        import socket
        import pytest

        @pytest.mark.promptvcr
        def test_oauth_token_endpoint():  # a passthrough host of every cassette by default
            socket.create_connection(("oauth2.googleapis.com", 443), timeout=1)

        @pytest.mark.promptvcr(passthrough_hosts=())
        def test_no_passthrough_hosts():
            socket.create_connection(("oauth2.googleapis.com", 443), timeout=1)

        @pytest.mark.promptvcr
        def test_subdomain():
            socket.create_connection(("api.example.com", 443), timeout=1)
        """,
    )
    result = run(pytester, "--allowed-hosts=example.com")
    result.assert_outcomes(failed=3)
    failures = _failure_sections(result)
    assert "SAFETY NET: 192.0.2.10" in failures["test_oauth_token_endpoint"]
    assert "blocked a network connection to oauth2.googleapis.com" in failures["test_no_passthrough_hosts"]
    assert "SAFETY NET: 192.0.2.10" in failures["test_subdomain"]


def _failure_sections(result: pytest.RunResult) -> dict[str, str]:
    """The failure report of each test, by test name."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.stdout.lines:
        match = re.fullmatch(r"_+ (\S+) _+", line)
        if match:
            current = sections.setdefault(match.group(1), [])
        elif line.startswith("=") and current is not None:
            current = None
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}

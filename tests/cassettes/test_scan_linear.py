"""Issue 16: the secrets scanner runs in linear time on any input.

It ran on every save and in ``promptvcr scan``, and took 9.4 s on 160 KB of JWT-like text
(quadratic: a start inside a run of token characters scanned the rest of the run again).
Hostile text is built from the beginnings of every kind of key; eight times the text must
cost about eight times as much (a quadratic scanner costs sixty-four times as much).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.credentials.decode import texts
from promptvcr.credentials.scanner import scan_text
from promptvcr.files.redaction import redact

#: Beginnings of keys, separators and runs that made a regex backtrack or rescan.
FRAGMENTS = [
    *("eyJ", "eyJaaaaaaaa", ".", "-", "_", "sk-", "sk-proj-", "sk-ant-api03-", "sk_live_", "AIza", "ya29."),
    *("gsk_", "xai-", "pplx-", "hf_", "r8_", "ghp_", "github_pat_", "xoxb-", "AKIA", "IQoJb3JpZ2luX2Vj"),
    *("aws_secret_access_key=", "aws_session_token=", "x-amz-security-token:", "-----BEGIN ", "RSA "),
    *("PRIVATE KEY-----", "\\n", "Bearer ", "bearer\t", " ", "\n", "=", "a", "A1b2", "0123456789", "/+"),
]
KB = 1024


def _best_of_3(run: Callable[[], object]) -> float:
    """The least CPU time of three runs: this thread's own work, which other processes on a
    loaded machine do not lengthen (the wall clock they do, and these tests failed under load)."""
    times = []
    for _ in range(3):
        start = time.thread_time()
        run()
        times.append(time.thread_time() - start)
    return min(times)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.integers(1, 40)), min_size=1, max_size=12))
def test_the_scan_time_grows_linearly(parts: list[tuple[str, int]]) -> None:
    unit = "".join(fragment * count for fragment, count in parts)
    small, large = _repeat(unit, 16 * KB), _repeat(unit, 128 * KB)
    t_small = _best_of_3(lambda: scan_text(small))
    t_large = _best_of_3(lambda: scan_text(large))
    # 8x the text: linear is ~8x; quadratic would be ~64x. Generous for a shared machine.
    assert t_large < 24 * t_small + 0.05, (unit[:80], t_small, t_large)


def hostile_megabyte() -> str:
    """1 MB of the worst inputs found, one after another."""
    worst = [
        "-eyJ",
        "eyJ" + "a" * 10 + "-",
        "eyJaaaaaaaa.",
        "-----BEGIN " + "A " * 3,
        "sk-" + "a1" * 20 + " ",
        "bearer ",
        "aws_session_token=" + "a" * 99 + " ",
        "A ",
        "".join(FRAGMENTS),
    ]
    return "".join(_repeat(unit, MB // len(worst)) for unit in worst).ljust(MB, "x")


MB = 1024 * KB


def test_a_megabyte_of_hostile_text_is_scanned_in_under_a_second() -> None:
    text = hostile_megabyte()
    assert len(text) == MB
    assert _best_of_3(lambda: scan_text(text)) < 1.0


def test_the_record_path_on_a_megabyte_of_hostile_answer_takes_seconds_not_minutes() -> None:
    body = hostile_megabyte().encode()
    interaction = Interaction(
        Request(
            "POST", "https://api.example.com/v1/x", {"authorization": "Bearer Zq0123456789abcdef"}, b"{}"
        ),
        Response(200, {"content-type": "text/plain"}, [body]),
    )
    assert _best_of_3(lambda: redact([interaction])) < 3.0
    (stored,) = redact([interaction]).data
    assert not any("Zq0123456789abcdef" in text for _, text in texts(stored, ""))

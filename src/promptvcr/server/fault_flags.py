"""``--fault KIND[:ARG][,NAME=VALUE...]``: the declared faults of :mod:`promptvcr.faults`, on the
command line, so a server's clients meet the same injected failures as in-process code.

``KIND`` is a builder of :mod:`promptvcr.faults` and ``ARG`` its one positional argument::

    http_error:429,retry_after=0.5,nth=2    # the 2nd request gets the provider's 429
    connect_timeout,path=/v1/embeddings
    read_timeout,after_events=3             # the stream goes silent after 3 events
    cut_stream:2                            # the connection ends after 2 events
    malformed_event:1,times=2

``NAME`` is one of the builder's keywords: ``nth``, ``times``, ``method``, ``path`` (a glob),
``retry_after``, ``after_events``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..faults import spec
from ..faults.spec import Fault

__all__ = ["parse_faults"]

_BUILDERS: dict[str, Callable[..., Fault]] = {
    "http_error": spec.http_error,
    "connect_timeout": spec.connect_timeout,
    "read_timeout": spec.read_timeout,
    "cut_stream": spec.cut_stream,
    "malformed_event": spec.malformed_event,
}
_NUMBERS: dict[str, Callable[[str], Any]] = {
    "nth": int,
    "times": int,
    "after_events": int,
    "retry_after": float,
}


def _fault(text: str) -> Fault:
    head, *pairs = [part.strip() for part in text.split(",")]
    kind, _, argument = head.partition(":")
    builder = _BUILDERS.get(kind)
    if builder is None:
        raise ValueError(f"--fault {text!r}: unknown kind {kind!r} (one of {', '.join(_BUILDERS)})")
    keywords: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in (*_NUMBERS, "method", "path"):
            raise ValueError(f"--fault {text!r}: {pair!r} is not NAME=VALUE with NAME one of nth, times, ...")
        keywords[name] = _NUMBERS[name](value) if name in _NUMBERS else value
    arguments = (int(argument),) if argument else ()
    try:
        return builder(*arguments, **keywords)
    except TypeError as error:
        raise ValueError(f"--fault {text!r}: {error}") from None


def parse_faults(given: Iterable[str]) -> list[Fault]:
    """The faults of ``--fault`` flags; ``ValueError`` says which flag is wrong and why."""
    return [_fault(text) for text in given]

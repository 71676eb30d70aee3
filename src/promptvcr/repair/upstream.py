"""The one door to json_repair, the library this package builds on (an optional extra).

Importing it here, once, turns a missing install into an ``ImportError`` that says how to get
it, and gives the rest of the package ``upstream_value``, which never raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

try:
    import json_repair
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "promptvcr.repair needs the json_repair library: pip install 'promptvcr[repair]'"
    ) from error

from .job import NOTHING, JSONValue
from .tokens.token_pass import Normalized


class _Repair(threading.local):
    """What one repair (until the next ``forget``) remembers, per thread."""

    entry: tuple[str, JSONValue] | None = None  # the last text asked about, and its value
    stream_stable = False


_memo = _Repair()


def _loads(text: str, stream_stable: bool) -> JSONValue:
    return json_repair.loads(text, skip_json_loads=True, stream_stable=stream_stable)


def _direct_parser() -> Callable[[str, bool], JSONValue]:
    """json_repair's parser without the ``loads`` wrapper, which costs a tenth of a short repair.

    The parser class is json_repair's internals: it is used only when it answers exactly as
    ``loads`` does on a few probes, else ``loads`` it is.
    """
    try:
        from json_repair.json_parser import JSONParser

        def parse(text: str, stream_stable: bool) -> JSONValue:
            parser = JSONParser(text, None, False, stream_stable=stream_stable, try_valid_json_suffix=True)
            return parser.parse()

        probes = (
            '{"a": [1, 2,',
            "{'b': True, c: \"x\"}",
            'Here: [1, {"d": nul',
            '{"e": "f"} {"g": 1}',
            '{"h": "i, j: 1',
        )
        if all(parse(probe, stable) == _loads(probe, stable) for probe in probes for stable in (False, True)):
            return parse
    except Exception:  # any change in json_repair's internals: keep to its public API
        pass
    return _loads


_parse = _direct_parser()


def forget(stream_stable: bool = False) -> None:
    """Start a new repair: values remembered for the previous one are not handed out again.

    ``stream_stable`` is json_repair's option of that name, for this repair: the text is a
    prefix of output still arriving, so an unfinished string is kept as far as it got.
    """
    _memo.entry = None
    _memo.stream_stable = stream_stable


def upstream_value(text: str) -> JSONValue:
    """What json_repair alone makes of ``text``, or ``NOTHING`` when it fails or finds nothing.

    Within one repair (until ``forget``), a second call for the same text object returns the
    first answer: the syntax and no-loss steps often ask about the whole text.
    """
    entry = _memo.entry
    if entry is not None and entry[0] is text:
        return entry[1]
    value: JSONValue
    try:
        value = _parse(text, _memo.stream_stable)
    except (ValueError, RecursionError, IndexError, TypeError, KeyError):
        value = NOTHING
    if value == "" and '""' not in text and "''" not in text:
        value = NOTHING  # json_repair's way of saying "no JSON here"
    _memo.entry = (text, value)
    return value


def known_value(text: str) -> JSONValue:
    """json_repair's value of this very text object when this repair already asked for it,
    else ``NOTHING``; never runs json_repair."""
    entry = _memo.entry
    return entry[1] if entry is not None and entry[0] is text else NOTHING


def source_for_upstream(text: str, normalized: Normalized) -> str:
    """What json_repair should read after the pass stopped: ``text`` itself when the pass
    changed nothing but spacing (json_repair's own reading of the original is then best),
    else the rewrite."""
    if normalized.text == text or normalized.strings:
        return text if normalized.text == text else normalized.text
    done = len(normalized.text) - (len(text) - normalized.stopped_at)
    if "".join(normalized.text[:done].split()) == "".join(text[: normalized.stopped_at].split()):
        return text
    return normalized.text

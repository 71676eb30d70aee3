"""Issue 22: the text redaction searches (``scantext.scan_text``: the interaction written
compactly without its bodies, then each body as it was received) gives every search the
verdict ``json.dumps`` of the whole stored interaction gives: secret clues, credential field
names, URL queries, ``"base64"``, ``\\u`` escapes; and holds every key and string of the
interaction as JSON writes it, so that a value searched for as a substring (an environment
credential, a credential to mask) is found in it whenever it is in the data. Random
interactions built to trip it: keys and values that are clues, credential names in any case,
escapes, quotes, backslashes, line and paragraph separators, control characters, non-ASCII
text, queries; bodies compact or not, ASCII-escaped, indented, UTF-16, forms, text, binary,
gzip, event streams, empty; and what redaction then writes, refuses and masks, compared with
the value-by-value walk.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from datetime import datetime, timezone
from typing import Any

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.timing import Timing
from promptvcr.credentials.byname import may_need_redaction, redact_url
from promptvcr.credentials.decode import json_escaped
from promptvcr.credentials.keyshapes import may_hold_secret
from promptvcr.credentials.masking import Masker, run_credentials, worth_masking
from promptvcr.credentials.names import environment_credentials
from promptvcr.files import fileformat
from promptvcr.files.redaction import (
    Redacted,
    _found,
    _known,
    _removed_by_name,
    _removed_from_request,
    redact,
)

SECRET = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5L7z9"
CREDENTIAL = "Hd7kPq2xWv9mZt4nRb8cYf3sLg6jAe1u"
ENV_VALUE = "env-value-0123456789abcdef"
#: Pieces of keys and strings: ones the searches look for, and ones that make JSON escape or
#: space things (most of any text, so that most interactions take the shortcut to its end).
SEARCHED = [
    *("sk-", "SK-", SECRET, CREDENTIAL, ENV_VALUE, "api_key", "API_KEY", "\u212aey", "token"),
    *("password", "base64", '"base64"', "?key=abc", "&token=x", "?q=1", "\\u0061", "bearer ", "eyJ"),
    *("aiza", "-----BEGIN"),
]
OTHER = [
    *("=", "\\", '"', "\n", "\t", "\x01", "\u2028", "\u00e9t\u00e9", "\u03a3", "\u0130", "\U0001f600"),
    *(", ", ": ", "{", "]", "plain words", "", "gpt-4o", "finish_reason", "k"),
]


def _string(chosen: random.Random) -> str:
    return "".join(
        chosen.choice(SEARCHED if chosen.random() < 0.04 else OTHER) for _ in range(chosen.randint(0, 3))
    )


def _value(chosen: random.Random, depth: int = 0) -> Any:
    kind = chosen.randrange(9 if depth < 3 else 5)
    if kind == 0:
        return chosen.choice([None, True, False])
    if kind == 1:
        return chosen.choice([0, -3, 29, 1.5, 1e-05, 12345678901234567890])
    if kind < 5:
        return _string(chosen)
    if kind < 7:
        return {_string(chosen): _value(chosen, depth + 1) for _ in range(chosen.randint(0, 4))}
    return [_value(chosen, depth + 1) for _ in range(chosen.randint(0, 4))]


def _body(chosen: random.Random) -> tuple[bytes, str]:
    document = {_string(chosen): _value(chosen) for _ in range(chosen.randint(0, 5))}
    kind = chosen.randrange(11)
    json_type = "application/json"
    if kind < 4:  # compact, as most providers send: the shortcut
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(), json_type
    if kind == 4:
        return json.dumps(document, ensure_ascii=False).encode(), json_type
    if kind == 5:
        return json.dumps(document, separators=(",", ":")).encode(), json_type  # \\uXXXX escapes
    if kind == 6:
        return json.dumps(document, indent=2).encode(), json_type
    if kind == 7:
        return json.dumps(document, ensure_ascii=False).encode("utf-16"), json_type
    if kind == 8:
        return f"a={_string(chosen)}&api_key={CREDENTIAL}".encode(), "application/x-www-form-urlencoded"
    if kind == 9:
        return gzip.compress(_string(chosen).encode(), mtime=0), "application/octet-stream"
    return _string(chosen).encode(), "text/plain"


def _interaction(chosen: random.Random) -> Interaction:
    request_body, request_type = _body(chosen)
    headers = {"content-type": request_type, "accept": _string(chosen)}
    if chosen.random() < 0.5:
        headers["authorization"] = f"Bearer {CREDENTIAL}"
    url = chosen.choice(["https://api.test/v1/chat", f"https://api.test/v1/x?key={CREDENTIAL}&n=1"])
    request = Request("POST", url, headers, request_body)
    if chosen.random() < 0.15:
        events = [f"data: {json.dumps({'delta': _string(chosen)})}\n\n".encode() for _ in range(3)]
        response = Response(200, {"content-type": "text/event-stream"}, events)
    else:
        response_body, response_type = _body(chosen)
        cut = chosen.randint(0, len(response_body))
        chunks = [response_body[:cut], response_body[cut:]] if chosen.random() < 0.3 else [response_body]
        response = Response(200, {"content-type": response_type, "location": _string(chosen)}, chunks)
        response.timing = Timing(0.01, tuple(0.02 for _ in chunks))
    return Interaction(request, response, datetime(2026, 1, 2, tzinfo=timezone.utc))


def _strings(data: Any) -> list[str]:
    found: list[str] = []
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found.extend(key for key in value if isinstance(key, str))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def test_the_scan_text_gives_every_search_the_verdict_of_the_whole_json() -> None:
    chosen = random.Random(22)
    shortcut = 0
    for _ in range(3000):
        interaction = _interaction(chosen)
        data, whole = fileformat.stored_with_text(interaction)
        scanned_data, scanned = fileformat.stored_with_text(interaction, for_scan=True)
        assert scanned_data == data
        assert (scanned is None) == (whole is None)
        if whole is None or scanned is None:
            continue
        shortcut += scanned != whole
        assert may_hold_secret(scanned) == may_hold_secret(whole), whole
        assert may_need_redaction(scanned, scanned.lower()) == may_need_redaction(whole, whole.lower()), whole
        assert ('"base64"' in scanned) == ('"base64"' in whole), whole
        for value in [*_strings(data), ENV_VALUE, CREDENTIAL, SECRET]:
            if json_escaped(value) in whole:  # what the substring searches look for
                assert json_escaped(value) in scanned, (value, whole)
    assert shortcut > 150  # the shortcut was taken, not only its fallback


def _walked(interactions: list[Interaction], environ: dict[str, str]) -> Redacted:
    """What redaction decides without any shortcut: every interaction redacted by name, masked
    (every credential the run sent, see :func:`run_credentials`: call after ``redact``) and
    searched value by value (each search writing its own JSON where it writes one)."""
    known = _known(environment_credentials(environ), frozenset(worth_masking(run_credentials())), frozenset())
    walked = Redacted(total=len(interactions))
    for index, interaction in enumerate(interactions):
        data = fileformat.interaction_to_data(interaction)
        data = Masker(known.sent).data(data)
        where = f"recorded[{index}]"
        request = interaction.request
        walked.removed.extend(_removed_from_request(interaction, data, where))
        in_request = [finding for finding, _, _ in _found(data["request"], f"{where}.request", known)]
        if in_request:
            walked.refused.append((where, f"{request.method} {redact_url(request.url)}", in_request))
            continue
        in_response = _found(data["response"], f"{where}.response", known)
        for what in {what for _, _, what in in_response}:
            data["response"] = Masker([v for _, v, w in in_response if w == what], what).data(
                data["response"]
            )
        if left := _found(data["response"], f"{where}.response", known):
            walked.refused.append(
                (where, f"{request.method} {redact_url(request.url)}", [f for f, _, _ in left])
            )
            continue
        walked.masked.extend(finding for finding, _, _ in in_response)
        walked.masked.extend(_removed_by_name(data["response"], f"{where}.response", None))
        walked.data.append(data)
    return walked


#: Random interactions the differential test compares (1,500 under ``HYPOTHESIS_PROFILE=thorough``).
DIFFERENTIAL = 1500 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 500


def test_what_redaction_writes_refuses_and_masks_is_what_the_walk_decides() -> None:
    chosen = random.Random(23)
    interactions = [_interaction(chosen) for _ in range(DIFFERENTIAL)]
    environ = {"MY_SERVICE_API_KEY": ENV_VALUE}
    redacted = redact(interactions, environ=environ)
    assert redacted == _walked(interactions, environ)
    assert redacted.refused and redacted.masked and len(redacted.data) > DIFFERENTIAL * 2 // 3

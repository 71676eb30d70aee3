"""The one redaction model: what a recorded interaction becomes before anything is written.

Used by recording (:mod:`promptvcr.cassettes.persister`), import and migrate, and, through
the environment it reads, the pytest plugin's credential check. For each interaction:

1. By name (:mod:`.byname` and :mod:`.headers`, inside
   :func:`promptvcr.cassettes.fileformat.interaction_to_data`): credential headers, query
   parameters of every URL stored anywhere, fields of JSON (a JSON document inside a string
   too), form and multipart bodies at any depth, each replaced by a placeholder that names it.
2. By value (:mod:`.masking`): every credential a request recorded in this process sent in
   a known place (this interaction's, another's, another cassette's) is masked wherever it
   appears, across the events of a stream and inside binary and gzip bodies.
3. By shape, by the environment (``$OPENAI_API_KEY``, ``$AZURE_OPENAI_KEY``...) and by
   value again, in every view of the data (:func:`.decode.texts`: percent-decoded, base64
   strings decoded, compressed bodies inflated): a value found in the *request* refuses
   that interaction alone (masking it would change what replay matches on); one found in
   the *response* is masked in place and reported, inside the encodings it sits in too
   (:mod:`.reencode`: a base64 run decoded, masked and encoded again the same way, in a
   string, a binary body or the joined pieces of a stream); an answer where it cannot be (a
   compression this process cannot write again) is refused.

Documented examples (:mod:`.examples`) and a cassette's ``allowed_secrets`` are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlsplit

from ..cassettes.largebody import ChunkedBody
from ..cassettes.models import Interaction
from ..credentials.byname import names_secret_field, redact_url
from ..credentials.decode import body_texts, event_groups, holds_base64, plain_dump, texts
from ..credentials.headers import REQUEST_HEADERS, RESPONSE_HEADERS
from ..credentials.keyshapes import (
    KIND_SLUGS,
    Finding,
    assigned_values,
    masked_preview,
    may_assign_credential,
    may_hold_secret,
    secret_values,
)
from ..credentials.machinevalues import machine_replaced
from ..credentials.masking import (
    Masker,
    json_credentials,
    remember_sent,
    run_credentials,
    sent_credentials,
    worth_masking,
)
from ..credentials.names import environment_credentials, is_secret_header, is_secret_param
from ..credentials.reencode import masked_across, masked_strings
from ..credentials.sentmasker import escaped_forms, sent_masker
from ..identity import Identity
from . import fileformat

__all__ = ["Redacted", "SecretMaskedWarning", "masked_message", "redact", "refused_message"]


class SecretMaskedWarning(UserWarning):
    """A response held a credential: it was stored as a placeholder (``<redacted:...>``)."""


@dataclass(slots=True)
class Redacted:
    """Interactions in stored form, safe to write, and what was done to get there."""

    data: list[dict[str, Any]] = field(default_factory=list)
    #: (label, "METHOD url", findings in its request) of each interaction left out.
    refused: list[tuple[str, str, list[Finding]]] = field(default_factory=list)
    #: Credentials removed from responses, masked in place or removed by name.
    masked: list[Finding] = field(default_factory=list)
    #: Credentials removed from requests by name (a header, a query parameter, a body field),
    #: and credential headers of answers left out: what import and migrate report beside
    #: :attr:`masked` (a recording's own ``authorization`` header goes without a word).
    removed: list[Finding] = field(default_factory=list)
    #: (where, how many of each placeholder) for each interaction the machine's values were replaced in.
    identity: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    total: int = 0


@dataclass(frozen=True, slots=True)
class _Known:
    """The credentials of a run looked for by value: the environment's and those sent."""

    environment: Mapping[str, str]
    sent: frozenset[str]
    allowed: frozenset[str]
    #: Each value as JSON text writes it, raw and percent-encoded: one substring search each.
    escaped: tuple[str, ...]


def _known(environment: Mapping[str, str], sent: frozenset[str], allowed: frozenset[str]) -> _Known:
    escaped = sent_masker(sent).escaped | escaped_forms(environment.values())  # the set's: made once
    return _Known(environment, sent, allowed, tuple(sorted(escaped)))


def _found(data: Any, where: str, known: _Known) -> list[tuple[Finding, str, str]]:
    """Each credential in any view of ``data``: (finding, value, what its placeholder says)."""
    dump = plain_dump(data)
    if dump is not None and _clean(dump, known):
        return []  # the common case, found by substring searches written in C
    found: list[tuple[Finding, str, str]] = []
    seen: set[tuple[str, str]] = set()

    def add(kind: str, value: str, what: str, place: str, preview: str = "") -> None:
        if (place, value) not in seen:
            seen.add((place, value))
            found.append((Finding(kind, preview or masked_preview(value), field=place), value, what))

    for place, text in texts(data, where):
        for kind, value in secret_values(text, known.allowed):
            add(kind, value, KIND_SLUGS.get(kind, "secret"), place)
        for name, value in known.environment.items():
            if value in text:
                add(f"the value of ${name}", value, f"env:{name}", place, "(not shown)")
        for value in known.sent:
            if value in text:
                add("a credential sent by a recorded request", value, "sent-credential", place, "(not shown)")
    for place, text in body_texts(data, where):
        for kind, value in assigned_values(text, known.allowed):  # a dotenv file, uploaded or returned
            add(kind, value, "env-file", place)
        if text.lstrip()[:1] in ("{", "[") and names_secret_field(text.lower()):
            for value in _named_in_document(text, request=".request" in place):
                if value not in known.allowed:
                    add("a credential field inside an encoded body", value, "field", place)
    return found


def _named_in_document(text: str, *, request: bool) -> Iterable[str]:
    """Credential fields of a body stored as text or bytes (compressed JSON, JSON sent as
    ``text/plain``), read as a body: its top by name. A JSON document inside a string is not
    a body (a tool call's arguments): :func:`body_texts` never gives one."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return ()
    return worth_masking(json_credentials(document, request=request))


def _clean(dump: str, known: _Known) -> bool:
    """Whether the stored data ``dump`` is the JSON text of holds no credential by shape or
    value, and no string worth decoding (base64)."""
    return (
        not may_hold_secret(dump)
        and not may_assign_credential(dump)
        and not any(value in dump for value in known.escaped)
        and not holds_base64(dump)
    )


_REMOVED_BY_NAME = re.compile(r"<redacted:(query|field|header):([^>]{1,64})>")


def _removed_by_name(response: Any, where: str, dump: str | None) -> list[Finding]:
    """A finding for each credential removed by name from an answer (a signed URL's ``sig``,
    an ``access_token``): nothing is removed from an answer without a word."""
    if dump is not None and "<redacted:" not in dump:
        return []
    found = (
        Finding(f"{match.group(1)} {match.group(2)}", "(removed)", field=place)
        for place, text in texts(response, where)
        # A stream's pieces joined, a JSON document read out of a string: each said once, where it is.
        if "[*]" not in place and "(json)" not in place
        for match in _REMOVED_BY_NAME.finditer(text)
    )
    return list(dict.fromkeys(found))  # a string's views (percent-decoded) name it once


def _removed_from_request(
    interaction: Interaction, data: dict[str, Any], where: str, dump: str | None = None
) -> list[Finding]:
    """A finding for each credential the stored request no longer holds: a credential header
    (of the answer too) left out, a placeholder the original request did not hold. ``dump``:
    the stored interaction's JSON text when the caller has it (no placeholder in it: none
    to look for, the common case)."""
    request, response = interaction.request, interaction.response
    found = [
        Finding(f"header {name.lower()}", "(removed)", field=f"{where}.{side}.headers.{name.lower()}")
        for side, headers in (("request", request.headers), ("response", response.headers))
        for name in headers
        if is_secret_header(name)
    ]
    stored = data["request"]
    text = dump if dump is not None else json.dumps(stored, ensure_ascii=False, default=_unread)
    if "<redacted:" not in text and "%3Credacted" not in text:
        return found + _url_removals(request.url, stored, where)
    original = request.url + request.content.decode("latin-1")
    for finding in _removed_by_name(stored, f"{where}.request", None):
        if f"<redacted:{finding.kind.replace(' ', ':', 1)}>" not in original:
            found.append(finding)
    return found + _url_removals(request.url, stored, where)


def _unread(value: Any) -> str:
    """What the search for removed fields reads of a value JSON cannot hold: not a large body
    (nothing is removed from one by name, and joining it would hold it whole)."""
    return "" if isinstance(value, ChunkedBody) else str(value)


def _url_removals(url: str, stored: dict[str, Any], where: str) -> list[Finding]:
    """The credential query parameters :func:`.byname.redact_url` left out of a request's URL."""
    if "?" not in url or stored.get("url") == url:
        return []
    kept = {pair.partition("=")[0] for pair in urlsplit(str(stored.get("url", ""))).query.split("&")}
    return [
        Finding(f"query {unquote_plus(name)}", "(removed)", field=f"{where}.request.url")
        for name, _, value in (pair.partition("=") for pair in urlsplit(url).query.split("&"))
        if value and name not in kept and is_secret_param(unquote_plus(name))
    ]


def redact(
    interactions: Sequence[Interaction],
    *,
    request_headers: Iterable[str] = REQUEST_HEADERS,
    response_headers: Iterable[str] = RESPONSE_HEADERS,
    allowed: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    label: str = "recorded",
    indices: Sequence[int] | None = None,
    identity: Identity | None = None,
) -> Redacted:
    """The stored form of ``interactions`` with every credential removed (see above).

    Most interactions hold nothing to mask and no secret: that is found on the text of the
    whole interaction, written once (:func:`.recordtext.scan_text`) and searched in C;
    only an interaction where it finds something is walked value by value.

    ``indices``: each interaction's position among all those recorded by the use (``recorded[N]``
    in the messages), when ``interactions`` is only part of them (a use that saves each
    recording as it completes, :mod:`promptvcr.files.saving`); by default their own order.
    ``identity``: the recording machine's values, replaced by placeholders (:mod:`promptvcr.identity`)."""
    accepted = frozenset(allowed)
    environment = {
        name: value for name, value in environment_credentials(environ or {}).items() if value not in accepted
    }
    for interaction in interactions:
        remember_sent(worth_masking(sent_credentials(interaction.request)))
    # Each remembered value is worth masking (just above, the one place that remembers any).
    sent = run_credentials() - accepted
    known = _known(environment, sent, accepted)
    masker = sent_masker(sent)
    result = Redacted(total=len(interactions))
    for index, interaction in enumerate(interactions):
        data, text = fileformat.stored_with_text(
            interaction, request_headers=request_headers, response_headers=response_headers, for_scan=True
        )
        dump = plain_dump(data, text) if text is not None else None
        if (masked := masker.data(data, dump)) is not data:
            data, dump = masked, plain_dump(masked)
        where = f"{label}[{index if indices is None else indices[index]}]"
        if identity is not None and (mine := machine_replaced(data, dump, identity)) is not None:
            data, dump = mine[0], plain_dump(mine[0])  # the machine's values: where credentials are looked
            result.identity.append((where, mine[1]))
        result.removed.extend(_removed_from_request(interaction, data, where, dump))
        if dump is not None and _clean(dump, known):  # nothing to refuse or mask
            if "<redacted:" in dump or "%3Credacted%3A" in dump:  # a form body writes it escaped
                result.masked.extend(_removed_by_name(data["response"], f"{where}.response", None))
            result.data.append(data)
            continue
        in_request = [finding for finding, _, _ in _found(data["request"], f"{where}.request", known)]
        if in_request:
            request = interaction.request
            result.refused.append((where, f"{request.method} {redact_url(request.url)}", in_request))
            continue
        in_response = _found(data["response"], f"{where}.response", known)
        if in_response:
            for what in {what for _, _, what in in_response}:
                values = [value for _, value, kind in in_response if kind == what]
                data["response"] = Masker(values, what).data(data["response"])
            if left := _found(data["response"], f"{where}.response", known):  # inside an encoding
                data["response"] = _masked_in_encodings(data["response"], left)
                left = _found(data["response"], f"{where}.response", known)
            if left:  # in an encoding this process cannot write again (see .reencode)
                request = interaction.request
                findings = [finding for finding, _, _ in left]
                result.refused.append((where, f"{request.method} {redact_url(request.url)}", findings))
                continue
            result.masked.extend(finding for finding, _, _ in in_response)
        result.masked.extend(_removed_by_name(data["response"], f"{where}.response", None))
        result.data.append(data)
    return result


def _masked_in_encodings(response: Any, found: list[tuple[Finding, str, str]]) -> Any:
    """``response`` with each credential still ``found`` in it masked inside the encodings it
    sits in (a base64 string, a percent-escape, layers of them), each encoded again as it was."""
    maskers = [
        Masker([value for _, value, kind in found if kind == what], what)
        for what in sorted({what for _, _, what in found})
    ]

    def replace(text: str) -> str:
        for masker in maskers:
            text = masker.text(text)
        return text

    masked = masked_strings(response, replace)
    for group in event_groups(masked):  # base64 a stream sent in pieces: whole only when joined
        pieces = masked_across([holder[key] for holder, key, _ in group], replace)
        for (holder, key, _), piece in zip(group, pieces, strict=True):
            holder[key] = piece
    return masked


def _lines(findings: Iterable[Finding]) -> str:
    return "\n".join(f"  {f.field}: {f.kind} {f.preview}".rstrip() for f in findings)


def _in_answer(entry: tuple[str, str, list[Finding]]) -> bool:
    """Whether a refused interaction was refused for its answer (``recorded[N].response...``)."""
    label = entry[0]
    return all(finding.field.startswith(f"{label}.response") for finding in entry[2])


def refused_message(path: Path | str, redacted: Redacted) -> str:
    """Which interactions were left out, why, and what to do; never a value."""
    in_request = [entry for entry in redacted.refused if not _in_answer(entry)]
    in_answer = [entry for entry in redacted.refused if _in_answer(entry)]
    written = len(redacted.data)
    parts: list[str] = []
    for entries, what, why, remedy in (
        (in_request, "REQUEST", "value(s) that look like a secret", _REQUEST_REMEDY),
        (in_answer, "ANSWER", _ANSWER_WHY, _ANSWER_REMEDY.format(path=path)),
    ):
        if entries:
            findings = [f for _, _, found in entries for f in found]
            requests = "\n".join(f"  {label}: {request}" for label, request, _ in entries)
            counting = "" if parts else _COUNTING
            parts.append(
                f"the {what} of each holds {len(findings)} {why}{counting}:\n"
                f"{requests}\n{_lines(findings)}\n{remedy}"
            )
    done = f"The other {written} interaction(s) were written." if written else "Nothing was written."
    return (
        f"promptvcr: refusing to write {len(redacted.refused)} of {redacted.total} interaction(s) "
        f"recorded into {path}: "
        + "\nAnd ".join(parts)
        + f"\n{done} If a value is a documented example or one you mean to keep, accept it for this "
        'cassette: use_cassette(..., allowed_secrets=["<the value>"]).'
    )


_COUNTING = " (recorded[N] is the N-th request recorded in this run, counting from 0)"
_REQUEST_REMEDY = (
    "A value in a request that was not sent as a credential is not masked: that would change "
    "what replay matches on. Find where the code under test puts it into the request (a "
    "prompt, a URL, a header) and use a fake value while recording; if it is a fake key "
    "already, make it obviously fake (e.g. sk-test-...)."
)
_ANSWER_WHY = (
    "credential(s) inside an encoding promptvcr cannot write again once masked (a compression "
    "whose library is not installed, a body too large to rewrite, base64 with stray bits at its end)"
)
_ANSWER_REMEDY = (
    "Install the library of a compression (pip install brotli, or zstandard) and record "
    "again, or remove the value with a before_record_response hook; then check the file with: "
    "promptvcr scan {path}"
)


def masked_message(path: Path | str, redacted: Redacted) -> str:
    """The warning for values masked in responses: which fields, what kind; never a value."""
    return (
        f"promptvcr: removed {len(redacted.masked)} credential(s) from the RESPONSE "
        f"of what was recorded into {path}; each is stored as a placeholder that names it "
        f"(<redacted:...>) and the rest of the answer is kept:\n{_lines(redacted.masked)}\n"
        "Nothing to do if these are secrets: the cassette is safe to commit. If a value is a "
        "documented example or one a test needs as it is, accept it for this cassette: "
        'use_cassette(..., allowed_secrets=["<the value>"]).'
    )

"""The one redaction model: what a recorded interaction becomes before anything is written.

Used by recording (:mod:`.persister`), the vcrpy importer and, through the environment
it reads, the pytest plugin's credential check. For each interaction:

1. By name (:mod:`.redact`, inside :func:`.fileformat.interaction_to_data`): headers
   from an allowlist, credential query parameters of every URL stored anywhere, credential
   fields of JSON, form and multipart bodies at any depth.
2. By value (:mod:`.masking`): every credential the request sent in a known place is
   masked wherever else it appears, across the events of a stream and inside binary and
   gzip bodies.
3. By shape and by the environment (:mod:`.secrets`, ``$*_API_KEY``-style variables): a
   value found in the *request* refuses that interaction alone (masking it would change
   what replay matches on); one found in the *response* is masked in place and reported.

Documented examples (:mod:`.examples`) and a cassette's ``allowed_secrets`` are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cassettes import fileformat
from ..cassettes.models import Interaction
from .byname import redact_url
from .decode import json_escaped, plain_dump, texts
from .headers import REQUEST_HEADERS, RESPONSE_HEADERS
from .keyshapes import Finding, masked_preview, may_hold_secret, secret_values
from .masking import Masker, sent_credentials, worth_masking
from .names import environment_credentials

__all__ = ["Redacted", "SecretMaskedWarning", "masked_message", "redact", "refused_message"]


class SecretMaskedWarning(UserWarning):
    """A response held a value shaped like a secret: it was stored as ``<redacted>``."""


@dataclass(slots=True)
class Redacted:
    """Interactions in stored form, safe to write, and what was done to get there."""

    data: list[dict[str, Any]] = field(default_factory=list)
    #: (label, "METHOD url", findings in its request) of each interaction left out.
    refused: list[tuple[str, str, list[Finding]]] = field(default_factory=list)
    #: Findings in responses, masked in place.
    masked: list[Finding] = field(default_factory=list)
    total: int = 0


def _findings(
    data: Any, where: str, allowed: frozenset[str], environment: Mapping[str, str]
) -> tuple[list[Finding], set[str]]:
    """Secret-shaped values and environment credentials in ``data``, and the values found."""
    dump = plain_dump(data)
    if (
        dump is not None
        and not may_hold_secret(dump)
        and not any(value in dump for value in _escaped(environment))
    ):
        return [], set()  # the common case, found by substring searches written in C
    findings: list[Finding] = []
    values: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for place, text in texts(data, where):
        for kind, value in secret_values(text, allowed):
            values.add(value)
            if (place, value) not in seen:
                seen.add((place, value))
                findings.append(Finding(kind, masked_preview(value), field=place))
        for name, value in environment.items():
            if value in text:
                values.add(value)
                if (place, value) not in seen:
                    seen.add((place, value))
                    findings.append(Finding(f"the value of ${name}", "(not shown)", field=place))
    return findings, values


def _escaped(environment: Mapping[str, str]) -> list[str]:
    return [json_escaped(value) for value in environment.values()]


class _Maskers(dict[frozenset[str], Masker]):
    """One :class:`Masker` per set of credentials sent (most requests send the same key)."""

    def __init__(self, accepted: frozenset[str]) -> None:
        super().__init__()
        self._accepted = accepted

    def __missing__(self, sent: frozenset[str]) -> Masker:
        masker = self[sent] = Masker(worth_masking(sent) - self._accepted)
        return masker


def redact(
    interactions: Sequence[Interaction],
    *,
    request_headers: Iterable[str] = REQUEST_HEADERS,
    response_headers: Iterable[str] = RESPONSE_HEADERS,
    allowed: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    label: str = "recorded",
) -> Redacted:
    """The stored form of ``interactions`` with every credential removed (see above).

    Most interactions hold nothing to mask and no secret: that is found on the text of the
    whole interaction, written once (:func:`.scantext.scan_text`) and searched in C;
    only an interaction where it finds something is walked value by value."""
    accepted = frozenset(allowed)
    environment = {
        name: value for name, value in environment_credentials(environ or {}).items() if value not in accepted
    }
    escaped = _escaped(environment)
    maskers = _Maskers(accepted)
    result = Redacted(total=len(interactions))
    for index, interaction in enumerate(interactions):
        data, text = fileformat.stored_with_text(
            interaction, request_headers=request_headers, response_headers=response_headers, for_scan=True
        )
        dump = plain_dump(data, text) if text is not None else None
        masker = maskers[sent_credentials(interaction.request)]
        if masker.active and (masked := masker.data(data, dump)) is not data:
            data, dump = masked, plain_dump(masked)
        if (
            dump is not None
            and not may_hold_secret(dump)
            and not (escaped and any(value in dump for value in escaped))
        ):
            result.data.append(data)  # neither part holds a secret: nothing to refuse or mask
            continue
        where = f"{label}[{index}]"
        in_request, _ = _findings(data["request"], f"{where}.request", accepted, environment)
        if in_request:
            request = interaction.request
            result.refused.append((where, f"{request.method} {redact_url(request.url)}", in_request))
            continue
        in_response, values = _findings(data["response"], f"{where}.response", accepted, environment)
        if values:
            data["response"] = Masker(values).data(data["response"])
            result.masked.extend(in_response)
        result.data.append(data)
    return result


def _lines(findings: Iterable[Finding]) -> str:
    return "\n".join(f"  {f.field}: {f.kind} {f.preview}".rstrip() for f in findings)


def refused_message(path: Path | str, redacted: Redacted) -> str:
    """Which interactions were left out, why, and what to do; never a value."""
    findings = [f for _, _, found in redacted.refused for f in found]
    requests = "\n".join(f"  {label}: {request}" for label, request, _ in redacted.refused)
    written = len(redacted.data)
    return (
        f"promptvcr: refusing to write {len(redacted.refused)} of {redacted.total} interaction(s) "
        f"recorded into {path}: the REQUEST of each holds {len(findings)} value(s) that look like a "
        f"secret (recorded[N] is the N-th request recorded in this run, counting from 0):\n"
        f"{requests}\n{_lines(findings)}\n"
        + (f"The other {written} interaction(s) were written.\n" if written else "Nothing was written.\n")
        + "A value in a request that was not sent as a credential is not masked: that would change "
        "what replay matches on. Find where the code under test puts it into the request (a "
        "prompt, a URL, a header) and use a fake "
        "value while recording; if it is a fake key already, make it obviously fake (e.g. "
        "sk-test-...). If it is a documented example or a value you mean to keep, accept it for "
        'this cassette: use_cassette(..., allowed_secrets=["<the value>"]).'
    )


def masked_message(path: Path | str, redacted: Redacted) -> str:
    """The warning for values masked in responses: which fields, what kind; never a value."""
    return (
        f"promptvcr: masked {len(redacted.masked)} value(s) that look like a secret in the RESPONSE "
        f"of what was recorded into {path}; each is stored as <redacted> and the rest of the "
        f"answer is kept:\n{_lines(redacted.masked)}\n"
        "Nothing to do if these are secrets: the cassette is safe to commit. If a value is a "
        "documented example or one a test needs as it is, accept it for this cassette: "
        'use_cassette(..., allowed_secrets=["<the value>"]).'
    )

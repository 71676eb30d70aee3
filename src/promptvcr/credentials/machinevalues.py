"""The recording machine's values in stored data: replaced through the walk credentials take.

:class:`~.masking.Masker` sees every byte that is written (each string and key, a stream's
events joined, base64 and gzip bodies, large bodies in slices): given the machine's
:class:`~promptvcr.identity.Identity`, it writes ``<home>``, ``<user>``... where those values
were. The interaction is marked with the names it now holds, the only ones replay restores;
a name whose placeholder the interaction held already (a prompt that says ``<home>`` itself)
is not used in it, so that replay cannot take the one for the other.

A binary response body (stored as ``base64``, or a large one that is not text) is left as the
provider sent it: in audio, an image or a zip, the bytes of a short host name or a path are
chance, not the machine (a 5.5 MB random body held ``/vm`` where the host was ``vm``), and a
placeholder there would replay as other bytes on another machine. A request's binary body is
still looked into: its key is what a replay elsewhere must find again.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ..identity import Identity
from .masking import Masker
from .recordtext import json_text

__all__ = ["machine_replaced"]


def machine_replaced(
    data: dict[str, Any], dump: str | None, identity: Identity
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """``data`` (a stored interaction, ``dump`` its :func:`.decode.plain_dump`) with the machine's
    values replaced and ``identity: [names]`` added, and how many of each placeholder were
    written; ``None`` when it holds none."""
    identity.used.clear()
    if dump is not None and not any(needle in dump for needle in identity.needles):
        return None  # the common case, as Masker.data finds it: the parts are walked apart below
    anywhere, as_sent = Masker(substitution=identity), Masker(substitution=identity, binary=False)
    replaced = {key: (as_sent if key == "response" else anywhere).data(value) for key, value in data.items()}
    if not identity.used:
        return None
    text = (dump if dump is not None else json_text(data)) or ""  # a large body: not looked into
    held = {name for name in identity.used if f"<{name}>" in text or quote(f"<{name}>") in text}
    if held:  # written by someone else already: those values stay as they are here
        return machine_replaced(data, dump, identity.without(held)) if held != set(identity.used) else None
    replaced["identity"] = sorted({*replaced.get("identity", ()), *identity.used})
    return replaced, dict(identity.used)

"""The recording machine's values in existing cassettes: found by ``promptvcr scan``, written as
placeholders by ``promptvcr scan --fix-identity`` (a plan), ``--apply`` (the rewrite).

Cassettes recorded before promptvcr replaced the machine's identity, or with ``identity=False``,
hold the recorder's home folder, project path, user and host names. Run on the machine that
recorded them, these find its own values (:mod:`promptvcr.identity`) exactly as a recording
would, through the same walk (:func:`promptvcr.credentials.machinevalues.machine_replaced`),
and mark each interaction with the placeholders it then holds, so that replay restores them.

A rewrite touches only what it can prove is its own: the file must be one promptvcr's writer
gives back byte for byte from what it reads (every cassette promptvcr wrote is), so that writing
the new data changes the replaced values and the markers and nothing else; a file that is not
(written by hand, by another tool) is left as it is, with a word saying why and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...credentials.machinevalues import machine_replaced
from ...files import fileformat, storage
from ...identity import Identity

__all__ = ["FilePlan", "apply", "plan_file"]


@dataclass
class FilePlan:
    """What ``--fix-identity`` would do to one file: where, and how many of each placeholder."""

    path: Path
    replaced: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    #: The file's new text; ``None`` when it cannot be rewritten safely (see :attr:`refusal`).
    text: str | None = None
    refusal: str = ""

    def lines(self) -> list[str]:
        said = (
            ", ".join(f"<{name}> x{count}" for name, count in sorted(counts.items()))
            for _, counts in self.replaced
        )
        return [f"{self.path}: {where}: {what}" for (where, _), what in zip(self.replaced, said, strict=True)]


def plan_file(path: Path, text: str, document: Any, identity: Identity, *, rewrite: bool) -> FilePlan | None:
    """The plan for one cassette file (``text``, parsed as ``document``); ``None`` when it holds
    none of the machine's values. ``rewrite``: also make the new text, or say why it cannot be."""
    items = document.get("interactions") if isinstance(document, dict) else None
    if not isinstance(items, list):
        return None
    plan = FilePlan(path)
    new_items: list[Any] = []
    for index, item in enumerate(items):
        found = machine_replaced(item, None, identity) if isinstance(item, dict) else None
        new_items.append(item if found is None else found[0])
        if found is not None:
            plan.replaced.append((f"interactions[{index}]", found[1]))
    if not plan.replaced:
        return None
    if rewrite:
        try:
            same = fileformat.dumps(fileformat.load_document(text, path), path) == text
        except (ValueError, TypeError):
            same = False
        if same:
            plan.text = fileformat.dumps(new_items, path)
        else:
            plan.refusal = (
                f"{path}: not rewritten: promptvcr's writer does not give its text back as it is "
                "(written by hand or by another tool), so a rewrite could change more than the values. "
                f"Record it again on this machine (PROMPTVCR_RECORD_MODE=rewrite), or replace them by hand."
            )
    return plan


def apply(plan: FilePlan) -> None:
    """Write the plan's new text, under the file's lock, atomically."""
    assert plan.text is not None
    with storage.cassette_lock(plan.path):
        storage.write_atomic(plan.path, plan.text)

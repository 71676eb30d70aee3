"""The one exception the repair pipeline raises.

Callers catch a single type and still learn where things went wrong: the stage name tells
whether the text held no JSON at all (``extract``), held JSON we could not mend (``syntax``),
or held several values we could not choose between (``choose``).
"""

from __future__ import annotations

EXCERPT_CHARS = 80


def excerpt(text: str, at: int = 0, width: int = EXCERPT_CHARS) -> str:
    """Cut a short, single-line window of ``text`` around ``at`` for an error message.

    Raw model output can be megabytes long and full of newlines; a log line needs a few dozen
    characters that show the trouble spot, with ellipses marking what was cut.
    """
    start = max(0, min(at, len(text)) - width // 4)
    end = min(len(text), start + width)
    piece = text[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return prefix + repr(piece)[1:-1] + suffix


class RepairError(ValueError):
    """Raised when raw model output cannot be turned into a JSON value.

    It subclasses ``ValueError`` so code that already guards ``json.loads`` keeps working.
    """

    def __init__(self, stage: str, reason: str, text: str = "", at: int = 0) -> None:
        self.stage = stage
        self.reason = reason
        self.excerpt = excerpt(text, at) if text else ""
        message = f"JSON repair failed at stage {stage!r}: {reason}"
        if text:
            message += f" (input near offset {at}: '{self.excerpt}')"
        super().__init__(message)

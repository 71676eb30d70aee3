"""Long jobs on replay: the waits a server declared served as none, and the code's own sleeps
between the polls of a replayed job skipped when asked (``timing="fast"``).

Which request creates or polls a job is known from :mod:`promptvcr.cassettes.jobs`; the tape
replays a job's polls in order and its end state again (:mod:`promptvcr.matching.tape`). This
room holds what a cassette does to the answers and the clock while it replays them:
:mod:`.waits` (the declared waits) and :mod:`.clock` (the fast-forward), joined by
:class:`.replay.JobReplay`, which the cassette keeps.
"""

from __future__ import annotations

from .replay import JobReplay

__all__ = ["JobReplay"]

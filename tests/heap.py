"""The objects a test process already holds, kept out of the cyclic collector for a while.

A suite worker holds over a million objects (every SDK imported, hundreds of tests run), and
each full collection walks all of them: 0.3-1 s. A test that makes many objects at once (a
large import, a fuzzer that collects before each load it times) pays that walk again and
again, for objects that are none of its business: the shared corpus import spent 9 s in 28
full collections, the anchor fuzzer 46 s in ~80. Frozen (:func:`gc.freeze`), those objects
are left out of every collection until thawed; reference counting still frees them, and
what is collected is what the test made, as in a fresh process.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["objects_so_far_frozen"]


@contextlib.contextmanager
def objects_so_far_frozen() -> Iterator[None]:
    """Every object alive now out of the cyclic collector until the block ends."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

"""Step 2 of a repair: where in the text the answer may be.

:mod:`.extract` (the step) looks between tag pairs (:mod:`.tags`), inside Markdown fences
(:mod:`.fences`) and at JSON values inside prose (:mod:`.spans`); :mod:`.closers` picks which
of several closing markers really ends a block.
"""

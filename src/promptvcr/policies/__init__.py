"""What a run does with a cassette: the record mode, and the checks that keep cassettes honest.

:mod:`.modes` holds ``RecordMode`` (what a cassette may read, send and write) and the CI
guard; :mod:`.verifying` sends recorded requests live and reports the drift of an answer's
structure (:mod:`.shapes`); :mod:`.staleness` acts on recordings older than ``max_age``;
:mod:`.unwritten` is what a recording run receives but leaves out (a 429, a 5xx, an answer
never finished). ``Cassette`` asks these for each decision; none holds a request's state.
"""

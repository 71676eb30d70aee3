"""What is a credential, and what reaches disk: the one place that decides both.

A credential is (a) the value of a header, query parameter or field whose name is a
credential name (:mod:`.names`), (b) any value with a known key shape (:mod:`.keyshapes`),
after undoing the encodings requests and answers use (:mod:`.decode`), (c) any value the
run sent as a credential, wherever else it shows up (:mod:`.masking`).
:mod:`promptvcr.files.redaction` applies all three to what a run records (it lives with the
file format whose stored form it cleans: this package never reads the files); :mod:`.scanner`
to files already written (``promptvcr scan``); :mod:`.headers` decides which headers are stored at all.
Documented examples and placeholders are not credentials (:mod:`.examples`).
"""

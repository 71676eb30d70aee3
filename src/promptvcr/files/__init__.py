"""Cassette files: how the values of :mod:`promptvcr.cassettes` reach disk and come back, fast.

The format (:mod:`.fileformat`: the layout, and the stored form of one interaction) is read by
:mod:`.reading` into the plain tuples of :mod:`.compactform`, through :mod:`.yamllines` (the
YAML promptvcr writes, line by line) or :mod:`.yamlreader` (any other YAML), with
:mod:`.storedjson` turning stored JSON bodies back into their bytes; it is written by
:mod:`.yamlwriter` and :mod:`.jsonwriter`. Two caches spare a second parse: :mod:`.parsecache`
(one large cassette) and :mod:`.smallcache` (the small cassettes of a suite, in one file).
:mod:`.storage` reads and writes atomically under a lock; :mod:`.persister` does one
cassette's read on entry and write on exit, with the record hooks.

This package reads the values and the credential rules; neither imports it back.
Nothing here imports an HTTP client, an interceptor, pytest or the command line.
"""

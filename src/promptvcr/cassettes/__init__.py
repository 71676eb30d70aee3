"""The values every part of promptvcr passes around, and how each body kind reads and writes itself.

The values (:mod:`.models`, :mod:`.timing`, :mod:`.playback`, answers served as a session in
:mod:`.sessions`); bodies as they are stored (:mod:`.bodies`, :mod:`.sse`, :mod:`.eventstream`,
:mod:`.multipart`, :mod:`.largebody` and the :mod:`.spool` of one being recorded,
:mod:`.bodyfiles` beside the cassette, a large request's document in :mod:`.largejson`,
:mod:`.jsonstyle`) and websocket frames (:mod:`.wsframes`); which provider a request is for
(:mod:`.providers`), what an answer cost (:mod:`.tokens`), and what HTTP puts around a body
(:mod:`.wire`).

What is a credential and what reaches disk is decided in :mod:`promptvcr.credentials`. Files
live in :mod:`promptvcr.files`, the run policies in :mod:`promptvcr.policies`. Pure Python:
nothing here imports an HTTP client, an interceptor, pytest or the command line, nor
:mod:`promptvcr.matching`; the values import neither the files package nor the credentials
package (``tests/test_layout.py``).
"""

from .models import Interaction, Play, Request, Response

__all__ = ["Interaction", "Play", "Request", "Response"]

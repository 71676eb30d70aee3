"""The values every part of promptvcr passes around, and how each body kind reads and writes itself.

The values (:mod:`.models`, :mod:`.timing`, :mod:`.playback`, answers served as a session in
:mod:`.sessions`); bodies as they are stored (:mod:`.bodies`, :mod:`.sse`, :mod:`.eventstream`,
:mod:`.multipart`, :mod:`.largebody`, :mod:`.jsonstyle`) and websocket frames
(:mod:`.wsframes`); which provider a request is for (:mod:`.providers`), what an answer cost
(:mod:`.tokens`), and what HTTP puts around a body (:mod:`.wire`).

The credential modules sit here until issue 41 moves them to :mod:`promptvcr.credentials`
(:mod:`.redact`, :mod:`.redaction`, :mod:`.masking`, :mod:`.secrets`, :mod:`.scantext`,
:mod:`.examples`). Files live in :mod:`promptvcr.files`, the run policies in
:mod:`promptvcr.policies`. Pure Python: nothing here imports an HTTP client, an interceptor,
pytest or the command line, nor :mod:`promptvcr.matching`; the values import neither the
files package nor the credential modules (``tests/test_layout.py``).
"""

from .models import Interaction, Play, Request, Response

__all__ = ["Interaction", "Play", "Request", "Response"]

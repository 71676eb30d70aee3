"""Requests as data: the values, the file formats, storage, redaction and the secret scanner.

The values (:mod:`.models`, :mod:`.timing`, :mod:`.playback`); bodies as they are stored
(:mod:`.bodies`, :mod:`.sse`, :mod:`.eventstream`, :mod:`.multipart`, :mod:`.largebody`);
the file (:mod:`.fileformat`, :mod:`.yamlreader`, :mod:`.yamlwriter`, :mod:`.jsonwriter`,
:mod:`.storage`, :mod:`.persister`; what never reaches it is :mod:`promptvcr.credentials`);
and what an answer cost (:mod:`.tokens`). Pure Python: nothing here imports an HTTP client,
an interceptor, pytest or the command line, nor :mod:`promptvcr.matching`.
"""

from .models import Interaction, Play, Request, Response

__all__ = ["Interaction", "Play", "Request", "Response"]

"""``promptvcr serve``: the cassettes of the house for other processes, languages and stacks.

An aiohttp web server on 127.0.0.1 that a client reaches through a base URL:
``http://127.0.0.1:PORT/[CASSETTE/]UPSTREAM/<path>``. Every request is decided by a
:class:`~promptvcr.Cassette`, as in-process, and keyed by its upstream URL; a test suite in any
language starts and stops a cassette per test. One job per module:

- :mod:`.upstreams`: upstream names and URLs, the SDKs' base-URL variables;
- :mod:`.served`: a cassette written as it records, knowing its upstreams and its misses;
- :mod:`.shelf`: which cassette a request goes to (header, folder name, started, command line);
- :mod:`.admin`: start and stop a cassette per test, the report, the shutdown (loopback only);
- :mod:`.inbound`: a client's request as the request the SDK would have sent upstream;
- :mod:`.relay`: sending upstream, streaming back unbuffered, recording;
- :mod:`.playout`: serving a stored response, chunk by chunk, paced and broken as asked;
- :mod:`.sockets`: websocket sessions, relayed and recorded, or replayed frame by frame;
- :mod:`.miss_reply`: a miss as the provider's API error;
- :mod:`.app`: the routes and limits; :mod:`.running`: the command's loop and exit status;
- :mod:`.launch`: :func:`serve`, the server in a child process for a block of a test.

Importing this package loads no HTTP library; :mod:`.app` and what it imports need aiohttp
(``pip install promptvcr[serve]``).
"""

from __future__ import annotations

from .launch import Served, serve

__all__ = ["Served", "serve"]

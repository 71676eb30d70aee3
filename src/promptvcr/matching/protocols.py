"""What a protocol changes in a replayed answer: each protocol that needs one plugs its step in here.

An answer is served as recorded, except where the protocol ties it to the live request that
finds it. JSON-RPC (MCP) answers carry the ids the client sent (:mod:`.jsonrpc`); a protocol
with such a tie (gRPC's stream ids next) adds one function to :data:`STEPS` rather than a branch
to ``Cassette.handle``. A step returns the answer for the live request, or ``None`` when the
recording is not of its protocol. Only a request whose bytes differ from the recorded ones gets
this far: the usual replay (the same bytes) pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from ..cassettes.models import Interaction, Request, Response
from . import jsonrpc

#: One protocol's step: the recorded answer made the answer to ``request``, or None (not its protocol).
Step = Callable[[Request, Interaction], "Response | None"]


def jsonrpc_ids(request: Request, interaction: Interaction) -> Response | None:
    """A JSON-RPC answer with the ids the live request used (the recording's were another run's)."""
    recorded = interaction.request.content
    if jsonrpc.MARKER not in recorded:
        return None
    return jsonrpc.renumbered(interaction.response, jsonrpc.renumbering(recorded, request.content))


STEPS: tuple[Step, ...] = (jsonrpc_ids,)


def answer_for(request: Request, interaction: Interaction) -> Response | None:
    """The first protocol step's answer to ``request`` from ``interaction``; None: as recorded."""
    for step in STEPS:
        if (response := step(request, interaction)) is not None:
            return response
    return None

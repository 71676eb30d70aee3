"""Scripted replies: answers described by what they mean, rendered in each provider's wire format.

``promptvcr.reply(...)`` (:mod:`.replies`) is one answer; ``promptvcr.script(*replies)``
(:mod:`.scripts`) serves them in order, alone or behind a cassette file. :mod:`.endpoints`
tells which format a request expects, and one module renders each: :mod:`.chat_completions`,
:mod:`.responses_api`, :mod:`.anthropic_messages`, :mod:`.gemini_content`, with what they
share (ids, deltas, the response) in :mod:`.rendering`.
"""

from .replies import Reply, ToolCall, Usage, reply
from .scripts import Script, script

__all__ = ["Reply", "Script", "ToolCall", "Usage", "reply", "script"]

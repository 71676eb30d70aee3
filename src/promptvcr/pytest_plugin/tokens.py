"""Tokens in a recorded answer: moved to :mod:`promptvcr.cassettes.tokens`, which the command
line uses too without importing pytest; kept here so existing imports keep working."""

from __future__ import annotations

from ..cassettes.tokens import Tokens, tokens_of

__all__ = ["Tokens", "tokens_of"]

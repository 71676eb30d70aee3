"""Drivers for google-genai (Gemini API and Vertex AI)."""

from __future__ import annotations

from typing import Any

from .recorded import Clients, Recorded

__all__ = ["drive_google"]


def drive_google(rec: Recorded, clients: Clients) -> Any:
    raise NotImplementedError("google driver")

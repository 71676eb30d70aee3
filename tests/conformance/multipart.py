"""Reading a recorded multipart/form-data body back into the fields and files an SDK takes."""

from __future__ import annotations

from promptvcr.cassettes.models import Request
from promptvcr.cassettes.multipart import parse_multipart as parse_parts

__all__ = ["parse_multipart"]


def parse_multipart(request: Request) -> tuple[dict[str, str], dict[str, tuple[str, bytes, str]]]:
    """Text fields by name, and files by name as ``(filename, content, content_type)``."""
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes, str]] = {}
    for part in parse_parts(request.content, request.headers.get("content-type", "")) or []:
        if part.filename is not None:
            files[part.name] = (part.filename, part.content, part.content_type)
        else:
            fields[part.name] = part.content.decode("utf-8")
    return fields, files

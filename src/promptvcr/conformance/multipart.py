"""Reading a recorded multipart/form-data body back into the fields and files an SDK takes."""

from __future__ import annotations

from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP

from ..cassettes.models import Request

__all__ = ["parse_multipart"]


def parse_multipart(request: Request) -> tuple[dict[str, str], dict[str, tuple[str, bytes, str]]]:
    """Text fields by name, and files by name as ``(filename, content, content_type)``."""
    head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode("latin-1")
    message: Message = BytesParser(policy=HTTP).parsebytes(head + request.content)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes, str]] = {}
    for part in message.iter_parts() if hasattr(message, "iter_parts") else message.get_payload():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True) or b""
        if filename is not None:
            files[str(name)] = (filename, payload, part.get_content_type())
        else:
            fields[str(name)] = payload.decode("utf-8")
    return fields, files

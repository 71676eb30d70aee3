"""multipart/form-data bodies read into their parts, with the standard library's parser."""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP

__all__ = ["Part", "parse_multipart"]


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    filename: str | None
    content_type: str
    content: bytes


def _payload(part: Message) -> bytes:
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def parse_multipart(content: bytes, content_type: str) -> list[Part] | None:
    """The parts in order, or ``None`` when the body is not multipart after all."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=HTTP).parsebytes(head + content)
    if not message.is_multipart():
        return None
    parts = []
    for part in message.get_payload():
        if not isinstance(part, Message):
            continue
        parts.append(
            Part(
                name=str(part.get_param("name", header="content-disposition") or ""),
                filename=part.get_filename(),
                content_type=part.get_content_type(),
                content=_payload(part),
            )
        )
    return parts

"""Which SDK drives a recorded request: chosen by host, then path, as a user's code would."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .recorded import Clients, Recorded
from .sdk_bedrock import is_botocore_request

__all__ = ["Route", "route"]

Driver = Callable[[Recorded, Clients], Any]

_OPENAI_COMPATIBLE = (
    "api.openai.com",
    ".openai.azure.com",
    "openrouter.ai",
    "api.deepseek.com",
    "api.cerebras.ai",
    "api.z.ai",
    "api.inference.crusoecloud.com",
    ".snowflakecomputing.com",
    "ollama.com",
    "localhost:11434",
    ".inference.heroku.com",
    ".api.aws",
)


@dataclass(frozen=True, slots=True)
class Route:
    sdk: str
    driver: Driver | None = None
    skip: str = ""
    #: The second request of an SDK call that the previous interaction's driver made
    #: (a resumable upload's bytes): judged with that call.
    continues_previous: bool = False


def _driver(sdk: str) -> Driver:
    if sdk == "openai":
        from .sdk_openai import drive_openai

        return drive_openai
    if sdk == "anthropic":
        from .sdk_anthropic import drive_anthropic

        return drive_anthropic
    if sdk == "google-genai":
        from .sdk_google import drive_google

        return drive_google
    if sdk in ("boto3", "anthropic-bedrock"):
        from . import sdk_bedrock

        return sdk_bedrock.drive_boto3 if sdk == "boto3" else sdk_bedrock.drive_anthropic_bedrock
    if sdk == "voyageai":
        from .sdk_voyage import drive_voyage

        return drive_voyage
    if sdk in ("groq", "mistralai", "cohere", "huggingface_hub"):
        from . import sdk_others

        drivers: dict[str, Driver] = {
            "groq": sdk_others.drive_groq,
            "mistralai": sdk_others.drive_mistral,
            "cohere": sdk_others.drive_cohere,
            "huggingface_hub": sdk_others.drive_huggingface,
        }
        return drivers[sdk]
    from .sdk_others import drive_plain_http

    return drive_plain_http


def _sdk_for(rec: Recorded) -> tuple[str, str]:
    host, path = rec.host, rec.path
    if "bedrock-runtime" in host or path.startswith("/bedrock/"):
        # anthropic's AnthropicBedrock (httpx2, no amz-sdk-* headers) made the messages it
        # sent to /invoke; whatever else it sent (count-tokens) it no longer can: boto3 can.
        if is_botocore_request(rec) or not path.endswith("/invoke"):
            return "boto3", ""
        return "anthropic-bedrock", ""
    if host == "api.voyageai.com":
        return "voyageai", ""
    if host == "localhost:8787":  # Pydantic AI Gateway: the provider is the first path segment
        first = path.split("/")[1]
        sdk = {"openai": "openai", "anthropic": "anthropic", "groq": "groq", "google-vertex": "google-genai"}
        return sdk.get(first, "http"), ""
    if host == "api.anthropic.com":
        return "anthropic", ""
    if host.endswith("googleapis.com") and ("/openai/" in path):
        return "openai", ""
    if host in ("generativelanguage.googleapis.com",) or host.endswith("aiplatform.googleapis.com"):
        return "google-genai", ""
    if host == "api.groq.com":
        return "groq", ""
    if host == "api.mistral.ai":
        return "mistralai", ""
    if host == "api.cohere.com":
        return "cohere", ""
    if host == "router.huggingface.co":
        return "huggingface_hub", ""
    if any(host == h or (h.startswith(".") and host.endswith(h)) for h in _OPENAI_COMPATIBLE):
        return "openai", ""
    return "http", ""


def route(rec: Recorded) -> Route:
    if "upload_protocol=resumable" in rec.url:
        return Route("google-genai", continues_previous=True)
    sdk, skip = _sdk_for(rec)
    if skip:
        return Route(sdk, skip=skip)
    return Route(sdk, _driver(sdk))

"""promptvcr: record real LLM SDK traffic once, replay it in tests offline and deterministic."""

from . import faults
from .cassettes import DEFAULT_RULES, Interaction, KeyParts, Play, Request, Response, Rule
from .cassettes.normalize import drop_body_fields, drop_query_params
from .errors import CassetteError, CassetteFormatError, CassetteMiss, CassetteSecretError, CassetteWriteError
from .modes import RecordMode
from .use import Cassette, use_cassette

__all__ = [
    "DEFAULT_RULES",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "CassetteSecretError",
    "CassetteWriteError",
    "Interaction",
    "KeyParts",
    "Play",
    "RecordMode",
    "Request",
    "Response",
    "Rule",
    "drop_body_fields",
    "drop_query_params",
    "faults",
    "use_cassette",
]

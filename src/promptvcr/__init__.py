"""promptvcr: record real LLM SDK traffic once, replay it in tests offline and deterministic."""

from . import faults
from .cassettes import DEFAULT_RULES, Interaction, KeyParts, Play, Request, Response, Rule
from .cassettes.diagnose import FuzzyMatchWarning
from .cassettes.normalize import drop_body_fields, drop_query_params
from .cassettes.rules import default_rules, drop_seed, edit_rules, for_families, set_default_rules
from .errors import CassetteError, CassetteFormatError, CassetteMiss, CassetteSecretError, CassetteWriteError
from .importers import import_vcr
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
    "FuzzyMatchWarning",
    "Interaction",
    "KeyParts",
    "Play",
    "RecordMode",
    "Request",
    "Response",
    "Rule",
    "default_rules",
    "drop_body_fields",
    "drop_query_params",
    "drop_seed",
    "edit_rules",
    "faults",
    "for_families",
    "import_vcr",
    "set_default_rules",
    "use_cassette",
]

"""promptvcr: record real LLM SDK traffic once, replay it in tests offline and deterministic.

Every public name is imported on first use (PEP 562): pytest imports the plugin module
``promptvcr.pytest_plugin`` in every run of an environment where promptvcr is installed,
and that must not import the whole library with it.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:
    from . import faults
    from .cassette import Cassette, use_cassette
    from .cassettes import Interaction, Play, Request, Response
    from .cassettes.jobs import JobEndpoint, add_job_endpoint
    from .errors import (
        CassetteError,
        CassetteFormatError,
        CassetteMiss,
        CassetteSecretError,
        CassetteWriteError,
        RecordInCIError,
        StaleCassetteError,
    )
    from .identity import IdentityOptions, MachineIdentityWarning
    from .importers import import_vcr
    from .interceptors.unavailable import InterceptorUnavailableWarning
    from .matching import DEFAULT_RULES, KeyParts, Rule, drop_body_fields, drop_query_params
    from .matching.diagnose import FuzzyMatchWarning
    from .matching.rules import default_rules, drop_seed, edit_rules, for_families, set_default_rules
    from .matching.rules.learned import load_rules
    from .policies.modes import RecordMode
    from .policies.staleness import StaleCassetteWarning
    from .policies.unwritten import RecordErrorWarning
    from .policies.verifying import Drift, DriftWarning
    from .scripted import reply, script
    from .server import serve

#: Public name -> the module that defines it (a submodule, for ``faults``).
_EXPORTS = {
    "faults": ".faults",
    "Cassette": ".cassette",
    "use_cassette": ".cassette",
    "Interaction": ".cassettes",
    "Play": ".cassettes",
    "Request": ".cassettes",
    "Response": ".cassettes",
    "JobEndpoint": ".cassettes.jobs",
    "add_job_endpoint": ".cassettes.jobs",
    "StaleCassetteWarning": ".policies.staleness",
    "RecordErrorWarning": ".policies.unwritten",
    "Drift": ".policies.verifying",
    "DriftWarning": ".policies.verifying",
    "CassetteError": ".errors",
    "CassetteFormatError": ".errors",
    "CassetteMiss": ".errors",
    "CassetteSecretError": ".errors",
    "CassetteWriteError": ".errors",
    "RecordInCIError": ".errors",
    "StaleCassetteError": ".errors",
    "IdentityOptions": ".identity",
    "MachineIdentityWarning": ".identity",
    "import_vcr": ".importers",
    "InterceptorUnavailableWarning": ".interceptors.unavailable",
    "DEFAULT_RULES": ".matching",
    "KeyParts": ".matching",
    "Rule": ".matching",
    "drop_body_fields": ".matching",
    "drop_query_params": ".matching",
    "FuzzyMatchWarning": ".matching.diagnose",
    "default_rules": ".matching.rules",
    "drop_seed": ".matching.rules",
    "edit_rules": ".matching.rules",
    "load_rules": ".matching.rules.learned",
    "for_families": ".matching.rules",
    "set_default_rules": ".matching.rules",
    "RecordMode": ".policies.modes",
    "reply": ".scripted",
    "script": ".scripted",
    "serve": ".server",
}

__all__ = [
    "DEFAULT_RULES",
    "Cassette",
    "CassetteError",
    "CassetteFormatError",
    "CassetteMiss",
    "CassetteSecretError",
    "CassetteWriteError",
    "Drift",
    "DriftWarning",
    "FuzzyMatchWarning",
    "IdentityOptions",
    "Interaction",
    "InterceptorUnavailableWarning",
    "JobEndpoint",
    "KeyParts",
    "MachineIdentityWarning",
    "Play",
    "RecordErrorWarning",
    "RecordInCIError",
    "RecordMode",
    "Request",
    "Response",
    "Rule",
    "StaleCassetteError",
    "StaleCassetteWarning",
    "add_job_endpoint",
    "default_rules",
    "drop_body_fields",
    "drop_query_params",
    "drop_seed",
    "edit_rules",
    "faults",
    "for_families",
    "import_vcr",
    "load_rules",
    "reply",
    "script",
    "serve",
    "set_default_rules",
    "use_cassette",
]


def __getattr__(name: str) -> object:
    """The public name on first use; a submodule (``promptvcr.cassette``) as the eager package gave it."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        try:
            return _import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = _import_module(module_name, __name__)
    value = module if module_name == f".{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

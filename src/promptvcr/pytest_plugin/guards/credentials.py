"""The run's own credentials: variables named like one (``AZURE_OPENAI_KEY``, ``HF_TOKEN``...).

A credential has no shape promptvcr can know when it is a proxy's token, a self-hosted
gateway's password or an unusual key; the recording run has the real ones in its
environment. They are looked for *before* anything is written, on the decoded bodies
(percent-encoding, base64 and compressed bodies included), by the one redaction model of
:mod:`promptvcr.files.redaction`: found in a request, that interaction is refused;
found in a response, it is masked and reported. This module only names them for the plugin;
it prints where, never what.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...credentials.names import environment_credentials

__all__ = ["credential_values"]


def credential_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Credential variables of the environment worth looking for: name -> value."""
    return environment_credentials(os.environ if environ is None else environ)

"""What identifies the machine a recording is made on, and the placeholders that stand for it.

A cassette recorded under ``/home/alice/app`` on host ``alice-laptop`` should say nothing about
Alice's machine and replay under ``/home/runner/work/app`` in CI: :mod:`.values` reads the
machine's values (home, project, working directory, temporary folder, user, host, addresses,
and values a user adds), :mod:`.patterns` finds them in text with boundaries (a path prefix,
a whole token) and gives each its placeholder (``<home>``, ``<user>``...), and back.
Nothing here reads or writes a cassette: ``files/`` applies it to what is written,
``matching/`` to a live request and a replayed answer.
"""

from .listing import MachineIdentityWarning, replaced_message
from .options import IdentityOptions, identity_options
from .patterns import Identity, Restorer, restorer
from .values import PLACEHOLDERS, MachineValue, machine_values, set_project_root

__all__ = [
    "PLACEHOLDERS",
    "Identity",
    "IdentityOptions",
    "MachineIdentityWarning",
    "MachineValue",
    "Restorer",
    "identity_options",
    "machine_values",
    "replaced_message",
    "restorer",
    "set_project_root",
]

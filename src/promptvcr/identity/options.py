"""What ``use_cassette(identity=...)`` asks for: the machine's values replaced or not, values a
user adds, and how much the recording says about what it replaced."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .patterns import Identity
from .values import MachineValue, check_extra, machine_values

__all__ = ["IdentityOptions", "identity_options"]


@dataclass(frozen=True)
class IdentityOptions:
    """``machine``: replace this machine's own values (home, project, working directory, temporary
    folder, user, host, addresses); ``extra``: more values to replace, each under a name of its
    own (``{"email": "alice@example.com", "org": "org-4f2a9c"}`` are written ``<email>``,
    ``<org>``, and replayed as the values the replaying run gives); ``report``: the warning of a
    recording lists each value it replaced (printed on the recording machine), not only the
    placeholders and where they are."""

    machine: bool = True
    extra: Mapping[str, str] = field(default_factory=dict)
    report: bool = False

    def __post_init__(self) -> None:
        check_extra(self.extra)

    def values(self) -> tuple[MachineValue, ...]:
        """The values to replace on this machine now (read each time: see :mod:`.values`)."""
        found = machine_values(extra=self.extra)
        return found if self.machine else tuple(v for v in found if v.name in self.extra)

    def identity(self) -> Identity:
        return Identity(self.values())


def identity_options(option: bool | Mapping[str, str] | IdentityOptions | None) -> IdentityOptions | None:
    """``use_cassette(identity=...)`` read: ``True`` (the default) the machine's values, ``False``
    or ``None`` nothing, a mapping the machine's values and those, or :class:`IdentityOptions`."""
    if option is None or option is False:
        return None
    if option is True:
        return IdentityOptions()
    if isinstance(option, IdentityOptions):
        return option
    if isinstance(option, Mapping):
        return IdentityOptions(extra=dict(option))
    raise TypeError(
        f"identity={option!r}: expected True (the default), False, a mapping of name to value "
        'to replace beside the machine\'s ({"email": "alice@example.com"}), or promptvcr.IdentityOptions.'
    )

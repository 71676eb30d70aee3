"""An interceptor whose library changed under it steps aside, with one clear warning.

The interceptors rest on private names of the libraries they patch, and those libraries
move (websockets 17 renamed the asyncio client's seam). Entering a cassette installs every
interceptor whose library is imported, so one that fails would break every cassette, even
for traffic it never touches: google-genai imports websockets, so a websockets rename broke
plain HTTP tests. Instead, an interceptor that cannot find its seam is left out: a warning
names the library, its version, what is disabled and what to do, once per process, and the
other interceptors work as before.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

from .decision import Handler, Uninstall

__all__ = ["InterceptorUnavailableWarning", "SeamMissing", "guarded", "skipped"]


class SeamMissing(Exception):
    """A private name promptvcr patches is not where this version of ``library`` had it: the
    library changed under promptvcr. Raised before anything is patched, so the interceptor
    can be reported unavailable with nothing half-installed (see below)."""

    def __init__(self, library: str, what: str) -> None:
        super().__init__(what)
        self.library = library


#: What an interceptor's library changing under it looks like while it is installed: a
#: private name gone (``SeamMissing``, ``AttributeError``) or a module moved (``ImportError``).
#: Anything else is a bug of promptvcr's and is raised as it is.
SEAM_ERRORS = (SeamMissing, AttributeError, ImportError)

#: ``(interceptor, reason)`` pairs already warned about in this process.
_warned: set[tuple[str, str]] = set()


class InterceptorUnavailableWarning(UserWarning):
    """promptvcr cannot intercept a library installed here; its traffic is not recorded or replayed."""


def _version(library: str) -> str:
    import importlib.metadata  # only to warn: replaying never needs it

    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(sys.modules.get(library), "__version__", "(version unknown)"))


def _warn(name: str, library: str, error: BaseException) -> None:
    reason = f"{type(error).__name__}: {error}"
    if (name, reason) in _warned:
        return
    _warned.add((name, reason))
    warnings.warn(
        f"promptvcr cannot intercept {library} {_version(library)}: it is not the library promptvcr "
        f"knows ({reason}). Disabled: recording and replaying {library} traffic, which goes to the "
        f"network as if no cassette were active; every other library is recorded and replayed as usual. "
        f"To fix: install a {library} version promptvcr supports (docs/versions.md lists them, e.g. "
        f"pip install 'promptvcr[{name}]' with {library} pinned to the last version that worked) "
        f"or upgrade promptvcr: pip install -U promptvcr",
        InterceptorUnavailableWarning,
        stacklevel=2,
    )


def _nothing_to_undo() -> None:
    return None


def skipped(name: str, library: str, error: BaseException) -> Callable[[Handler], Uninstall]:
    """An installer that installs nothing and warns (once) that ``library`` is not intercepted."""

    def install(handler: Handler) -> Uninstall:
        _warn(name, library, error)
        return _nothing_to_undo

    return install


def guarded(
    name: str, library: str, install: Callable[[Handler], Uninstall]
) -> Callable[[Handler], Uninstall]:
    """``install``, reporting itself unavailable instead of raising when ``library``'s seam is
    missing. Interceptors look their seams up before they patch anything, so a failed install
    leaves nothing behind. Tried again at each cassette: a seam put back works again."""

    def install_or_warn(handler: Handler) -> Uninstall:
        try:
            return install(handler)
        except SEAM_ERRORS as error:
            _warn(name, library, error)
            return _nothing_to_undo

    return install_or_warn

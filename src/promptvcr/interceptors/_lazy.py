"""Interceptors for the client libraries a process has imported, and for those it imports later.

Installing an interceptor imports its library, and some are heavy (aiohttp, botocore through
urllib3): a suite that only uses httpx2 must not pay for the others. So a library already in
:data:`sys.modules` is patched at once, and any other is watched by a finder on
:data:`sys.meta_path` that patches it right after its own code has run, if it is imported
while a cassette is active. A library imported between cassettes is patched by the next one.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

from .decision import Handler, Uninstall

__all__ = ["install_when_imported"]

#: An interceptor's installer, or ``None`` when its library cannot be intercepted here.
Installer = Callable[[str], Callable[[Handler], Uninstall] | None]


class _AfterImport(Loader):
    """A library's own loader, followed by a call once the library's code has run."""

    def __init__(self, loader: Loader, then: Callable[[], None]) -> None:
        self._loader = loader
        self._then = then

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._then()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _Watch(MetaPathFinder):
    """Patches each watched library as soon as it is imported."""

    def __init__(self, libraries: dict[str, str], installer: Installer, handler: Handler) -> None:
        self.libraries = libraries  # library -> interceptor name
        self._installer = installer
        self._handler = handler
        self._lock = threading.RLock()
        self.undo: list[Uninstall] = []
        self.stopped = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        name = self.libraries.get(fullname)
        if name is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _AfterImport(spec.loader, lambda: self.imported(fullname))
                return spec
        return None

    def imported(self, library: str) -> None:
        with self._lock:
            name = self.libraries.pop(library, None)
            if name is None or self.stopped:
                return
            install = self._installer(name)
            if install is not None:
                self.undo.append(install(self._handler))


def install_when_imported(handler: Handler, names: dict[str, str], installer: Installer) -> Uninstall:
    """Install ``installer(name)`` for each ``library -> name`` of ``names``: now for a library
    already imported, on its import for the others; the returned function undoes them all."""
    watch = _Watch({}, installer, handler)
    with watch._lock:
        for library, name in names.items():
            if library in sys.modules:
                install = installer(name)
                if install is not None:
                    watch.undo.append(install(handler))
            else:
                watch.libraries[library] = name
        if watch.libraries:
            sys.meta_path.insert(0, watch)

    def uninstall() -> None:
        with watch._lock:
            watch.stopped = True
            if watch in sys.meta_path:
                sys.meta_path.remove(watch)
            undo, watch.undo = watch.undo, []
        for step in reversed(undo):
            step()

    return uninstall

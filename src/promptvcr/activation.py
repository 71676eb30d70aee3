"""Which cassette serves a request, the patches that route requests to it, and who hears of exits.

The patches are installed when the first cassette is entered and removed when the last
one exits. A cassette serves the code that entered it: a :class:`~contextvars.ContextVar`
holds the cassettes entered in this context, innermost last, so it follows the thread or
task that entered it and every task or thread started from it with the context copied
(``asyncio`` tasks, ``contextvars.copy_context``, ``asyncio.to_thread``). Two cassettes
active at once never see each other's requests, and a nested one hides the outer one.

A request from a context that entered no (still active) cassette, such as a plain
``threading.Thread`` worker, goes to the only active cassette; while several are active
it fails closed with a :class:`~promptvcr.errors.CassetteMiss` naming them, since
guessing would record it into, or replay it from, another test's file.

:class:`Block` gives a cassette, and a script, its ``async with`` and its decorator (each call
of a decorated function runs in a fresh one). Exit watchers (the pytest plugin's run record) are
kept here too. Importing this module
loads no HTTP library: :func:`~promptvcr.interceptors.install_all` imports each
interceptor (and its library) only when the first cassette is entered.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar, overload

from .errors import CassetteMiss
from .interceptors import PASS_THROUGH, Decision, Uninstall, install_all

if TYPE_CHECKING:  # no values loaded with the exit watchers, which the pytest plugin registers
    from .cassette import Cassette
    from .cassettes.models import Request

__all__ = [
    "Block",
    "activate",
    "active_cassettes",
    "deactivate",
    "hold_patches",
    "run_each_call_in",
    "watch_exits",
]

P = ParamSpec("P")
T = TypeVar("T")


class _Active(Protocol):
    path: Path

    def handle(self, request: Request) -> Decision: ...

    def note_miss(self, request: Request, error: CassetteMiss) -> None: ...


#: The cassettes entered in this context, innermost last (a tuple: copied contexts share it safely).
_entered: contextvars.ContextVar[tuple[_Active, ...]] = contextvars.ContextVar(
    "promptvcr_entered", default=()
)

_lock = threading.RLock()
#: Every active cassette, in the order entered. Replaced, never mutated: readers take no lock.
_active: tuple[_Active, ...] = ()
_tokens: dict[int, contextvars.Token[tuple[_Active, ...]]] = {}
_uninstall: Uninstall | None = None
_held = False
_watchers: list[Callable[[Any], None]] = []


def active_cassettes() -> tuple[Any, ...]:
    """Every active cassette, in the order they were entered, whatever context entered them."""
    return _active


def _serving(entered: tuple[_Active, ...]) -> _Active | None:
    """The innermost cassette of ``entered`` still active; one that exited (in another
    context: a fixture, an async generator) is skipped."""
    active = _active
    for cassette in reversed(entered):
        if cassette in active:
            return cassette
    return None


class _Dispatcher:
    def handle(self, request: Request) -> Decision:
        entered = _entered.get()
        if entered:
            # The usual case: the innermost one, active; identity checks on a short tuple.
            current: _Active | None = entered[-1]
            if current not in _active:
                current = _serving(entered)
            if current is not None:
                return current.handle(request)
        active = _active
        if len(active) == 1:
            return active[0].handle(request)
        if not active:
            return PASS_THROUGH
        error = _unscoped(request, active)
        for cassette in active:
            cassette.note_miss(request, error)
        raise error


def _unscoped(request: Request, active: tuple[_Active, ...]) -> CassetteMiss:
    names = "\n".join(f"  {cassette.path}" for cassette in active)
    return CassetteMiss(
        f"promptvcr cannot tell which cassette serves {request.method} {request.url}: it was sent from "
        f"a thread or task that entered no cassette, while {len(active)} are active:\n{names}\n"
        f"Enter the cassette in that thread (with use_cassette(...) inside the worker), or start the "
        f"worker with the context copied (asyncio.to_thread, asyncio tasks, "
        f"contextvars.copy_context().run) so that it uses the cassette of the code that started it."
    )


def activate(cassette: _Active) -> None:
    global _uninstall, _active
    with _lock:
        if _uninstall is None:
            _uninstall = install_all(_Dispatcher())
        _active = (*_active, cassette)
        _tokens[id(cassette)] = _entered.set((*_entered.get(), cassette))
    if not _watchers and os.environ.get("PROMPTVCR_USAGE_DIR"):
        from .usage import ready  # now, not at exit: by then the code under test may have

        ready()  # dropped privileges or moved the package (tests/cassettes/test_save_imports.py)


def _leave_context(cassette: _Active, token: contextvars.Token[tuple[_Active, ...]] | None) -> None:
    """Take ``cassette`` out of this context's entered cassettes."""
    current = _entered.get()
    if cassette not in current:
        return
    remaining = tuple(entered for entered in current if entered is not cassette)
    if token is not None and token.old_value == (remaining or token.MISSING):
        try:
            _entered.reset(token)
            return
        except ValueError:  # the token was made in another context: a fixture, an async generator
            pass
    _entered.set(remaining)


def deactivate(cassette: _Active) -> None:
    global _uninstall, _active
    with _lock:
        _leave_context(cassette, _tokens.pop(id(cassette), None))
        if cassette in _active:
            # Remove this one even when cassettes exit out of order (async tasks).
            position = len(_active) - 1 - _active[::-1].index(cassette)
            _active = _active[:position] + _active[position + 1 :]
        uninstall = _uninstall if not _active and not _held else None
        if uninstall is not None:
            _uninstall = None
            uninstall()
        watchers = list(_watchers)
    for callback in watchers:
        callback(cassette)
    if not watchers and (folder := os.environ.get("PROMPTVCR_USAGE_DIR")):
        from .usage import note  # a child of a pytest run (a subprocess, promptvcr serve): tell it

        note(cassette, folder)


def hold_patches(held: bool) -> None:
    """Keep the patches installed when the last cassette exits (``True``), or stop keeping them
    (``False``: removed now if no cassette is active).

    The pytest plugin holds them from one cassette test to the next, so a suite does not pay
    for patching every HTTP library twice per test. Held and idle, the patches change nothing:
    with no cassette active, every request passes through (:class:`_Dispatcher`).
    """
    global _uninstall, _held
    with _lock:
        _held = held
        if not held and not _active and _uninstall is not None:
            uninstall, _uninstall = _uninstall, None
            uninstall()


def watch_exits(callback: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``callback(cassette)`` whenever a cassette exits; returns the function that stops it."""
    with _lock:
        _watchers.append(callback)

    def stop() -> None:
        with _lock:
            if callback in _watchers:
                _watchers.remove(callback)

    return stop


class _Block(AbstractContextManager[Any], AbstractAsyncContextManager[Any], Protocol):
    """What a decorated function runs in: a cassette, or a script's cassette."""


def run_each_call_in(fresh: Callable[[], _Block], func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` (sync or async) running each call inside a block made anew by ``fresh``, so
    that every call of a decorated function starts clean: the one decorator behind
    ``@use_cassette(...)`` and ``@script(...)``."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            async with fresh():
                return await func(*args, **kwargs)

        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with fresh():
            return func(*args, **kwargs)

    return wrapper


class Block:
    """A ``with`` block that is also an ``async with`` block and a decorator: a cassette, a script.

    A subclass gives ``__enter__``, ``__exit__`` and ``_fresh`` (a new block with the same
    settings): each call of a decorated function runs in its own, so that every call starts clean.
    """

    def __enter__(self) -> Cassette:
        raise NotImplementedError

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        raise NotImplementedError

    def _fresh(self) -> Block:
        raise NotImplementedError

    async def __aenter__(self) -> Cassette:
        return self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    @overload
    def __call__(self, func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]: ...
    @overload
    def __call__(self, func: Callable[P, T]) -> Callable[P, T]: ...
    def __call__(self, func: Callable[P, Any]) -> Callable[P, Any]:
        return run_each_call_in(self._fresh, func)

"""A runner can end its own run, never the event loop the engine runs it on.

On an event loop, a ``KeyboardInterrupt`` or ``SystemExit`` raised in a task or callback is not
kept in the task like other errors: asyncio re-raises it out of ``run_forever``, which ends the
loop every run of the worker shares (the sweep then waits forever for runs that will never
finish). So does a runner calling ``loop.stop()``. Three guards keep the loop alive:

- :func:`guarded` calls a runner inside a *scope* (a context variable that the tasks and
  callbacks the runner starts inherit) and hands back anything it raises, any
  ``BaseException`` but the engine's own cancellation, as a :class:`Raised` value;
- :func:`guard_loop` makes ``stop`` and ``close`` ignore calls made inside a scope, and wraps the
  callbacks a scope schedules so an interrupt raised in one stays there; each misuse is noted on
  the scope, and the run then fails with :class:`~counterfact.exceptions.EventLoopMisuse`;
- :func:`serve_forever` (the loop thread's body) runs the loop again if anything still stops it
  before its owner asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from counterfact.exceptions import EventLoopMisuse


@dataclass(frozen=True)
class Raised:
    """What a runner's call raised, carried as a value (re-raised only outside the loop)."""

    exc: BaseException


@dataclass
class Scope:
    """One runner call: the misuses of the loop it made (the first fails the run)."""

    misuse: list[str] = field(default_factory=list)

    def error(self) -> EventLoopMisuse | None:
        """The run's error when the call misused the loop, else None."""
        return EventLoopMisuse(self.misuse[0]) if self.misuse else None


_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "counterfact_runner_scope", default=None
)

_HOW = (
    "; counterfact ignored it and failed the run (the loop runs every run of the worker: await "
    "your work, or run an event loop of your own on a thread of your own)"
)


@contextlib.contextmanager
def runner_scope() -> Iterator[Scope]:
    """Mark what runs inside (and every task and callback started from it) as the runner's."""
    scope = Scope()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        # ValueError: closed from another context, a run given up with its event loop (its
        # coroutine is closed when collected); the context the scope belonged to went with it
        with contextlib.suppress(ValueError):
            _SCOPE.reset(token)


async def guarded(call: Callable[[], Any]) -> Any:
    """Call ``call`` (awaiting what it returns) as a runner: its value, or :class:`Raised`.

    ``asyncio.CancelledError`` passes through: a timeout or a stop cancels the call that way.
    """
    with runner_scope() as scope:
        try:
            value = call()
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the run's error, whatever it is: never the loop's
            return Raised(exc)
    misuse = scope.error()
    return value if misuse is None else Raised(misuse)


def _noted(what: str) -> bool:
    """Note ``what`` on the current runner scope; False outside one (the engine's own call)."""
    scope = _SCOPE.get()
    if scope is None:
        return False
    scope.misuse.append(what + _HOW)
    return True


def _shielded(callback: Callable[..., Any], scope: Scope) -> Callable[..., Any]:
    """``callback``, with an interrupt or exit it raises noted on ``scope`` instead of raised."""

    def run(*args: Any) -> Any:
        try:
            return callback(*args)
        except (KeyboardInterrupt, SystemExit) as exc:
            name = type(exc).__name__
            scope.misuse.append(
                f"a callback or task the runner started raised {name} ({exc}) on the event loop"
                + _HOW
            )
            return None

    return run


def _scope_of(context: contextvars.Context | None) -> Scope | None:
    return _SCOPE.get() if context is None else context.get(_SCOPE)


_GUARDED = "_counterfact_guarded"


def guard_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` proof against its runners (see the module docstring); done once per loop.

    A loop whose methods cannot be replaced (a C implementation such as uvloop) is left as is:
    :func:`guarded` still keeps each runner's own errors off it.
    """
    if getattr(loop, _GUARDED, False):
        return
    stop, close = loop.stop, loop.close
    call_soon, call_at = loop.call_soon, loop.call_at
    call_threadsafe = loop.call_soon_threadsafe

    # only a call from code running on this loop is a runner's misuse: a given-up loop that the
    # collector finalizes (BaseEventLoop.__del__ closes it) while another loop's run executes is not
    def guarded_stop() -> None:
        mine = asyncio._get_running_loop() is loop
        if not (mine and _noted("the runner called loop.stop() on the event loop it runs on")):
            stop()

    def guarded_close() -> None:
        mine = asyncio._get_running_loop() is loop
        if not (mine and _noted("the runner called loop.close() on the event loop it runs on")):
            close()

    def guarded_call_soon(
        callback: Callable[..., Any], *args: Any, context: contextvars.Context | None = None
    ) -> asyncio.Handle:
        scope = _scope_of(context)
        if scope is not None:
            callback = _shielded(callback, scope)
        return call_soon(callback, *args, context=context)

    def guarded_call_at(
        when: float,
        callback: Callable[..., Any],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        scope = _scope_of(context)
        if scope is not None:
            callback = _shielded(callback, scope)
        return call_at(when, callback, *args, context=context)

    def guarded_threadsafe(
        callback: Callable[..., Any], *args: Any, context: contextvars.Context | None = None
    ) -> asyncio.Handle:
        scope = _scope_of(context)
        if scope is not None:
            callback = _shielded(callback, scope)
        return call_threadsafe(callback, *args, context=context)

    replacements = {
        "stop": guarded_stop,
        "close": guarded_close,
        "call_soon": guarded_call_soon,
        "call_at": guarded_call_at,
        "call_soon_threadsafe": guarded_threadsafe,
        _GUARDED: True,
    }
    with contextlib.suppress(AttributeError, TypeError):
        for name, value in replacements.items():
            setattr(loop, name, value)


def serve_forever(loop: asyncio.AbstractEventLoop, closing: Callable[[], bool]) -> None:
    """Run ``loop`` until ``closing()`` says its owner stopped it; an interrupt that still
    escaped a callback, or a stop from elsewhere, only makes it run again.
    """
    while True:
        try:
            with contextlib.suppress(KeyboardInterrupt, SystemExit):  # a runner's: serve on
                loop.run_forever()
        except RuntimeError:  # the loop runs elsewhere or is closed: nothing left to serve
            return
        if closing() or loop.is_closed():
            return

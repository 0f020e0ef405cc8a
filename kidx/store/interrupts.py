"""Ctrl-C and a commit: once a write has begun to commit, the outcome reported is the one
that happened.

From the moment a write sends its commit, SIGINT no longer raises ``KeyboardInterrupt``:
it is recorded, and passed to whatever the commit registered with ``on_press`` (the
PostgreSQL backend asks the server to stop waiting for a synchronous standby; the server
keeps the commit). The commit then completes or fails on its own, the command reports
what happened, and the command layer calls ``release()`` when the outcome is printed: a
Ctrl-C recorded since is noted, never reported as "interrupted, nothing committed".

Only the main thread can handle signals; elsewhere (a library caller's worker thread)
nothing is held.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_held = False
_pressed = False
_previous: object = None
_callbacks: list[Callable[[], None]] = []


def hold() -> None:
    """From now until ``release()``, Ctrl-C is recorded instead of raised."""
    global _held, _previous
    if _held or threading.current_thread() is not threading.main_thread():
        return
    _previous = signal.signal(signal.SIGINT, _record)
    _held = True


def _record(signum, frame) -> None:
    global _pressed
    _pressed = True
    for callback in list(_callbacks):
        try:
            callback()
        except Exception:  # a signal handler must not raise into the commit it protects
            pass


@contextmanager
def on_press(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback`` if Ctrl-C is pressed during the block (while held)."""
    _callbacks.append(callback)
    try:
        yield
    finally:
        _callbacks.remove(callback)


def release() -> bool:
    """Give Ctrl-C back its earlier handling; True when it was pressed while held."""
    global _held, _pressed, _previous
    if not _held:
        return False
    previous = _previous if _previous is not None else signal.SIG_DFL
    signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
    pressed = _pressed
    _held, _pressed, _previous = False, False, None
    return pressed


def held() -> bool:
    return _held

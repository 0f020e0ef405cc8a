"""Ctrl-C and a commit: once a write has begun to commit, the outcome reported is the one
that happened.

From the moment a write sends its commit, SIGINT no longer raises ``KeyboardInterrupt``:
it is recorded, and passed to whatever the commit registered with ``on_press`` (the
PostgreSQL backend asks the server to stop waiting for a synchronous standby; the server
keeps the commit). The commit then completes or fails on its own, the command reports
what happened, and the command layer calls ``release()`` when the outcome is printed: a
Ctrl-C recorded since is noted, never reported as "interrupted, nothing committed".
A second Ctrl-C while a commit that registered with ``on_press`` is still unanswered
(a server that does not reply at all) is raised, so kidx never hangs: the commit turns
it into an unknown outcome.

Without the command layer (kidx used as a library), the hold ends with the write: a
Ctrl-C pressed during the commit is raised as ``KeyboardInterrupt`` once it has
committed. Only the main thread can handle signals; elsewhere nothing is held.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_held = False
_kept = False  # the command layer releases the hold itself, once the outcome is printed
_pressed = False
_committed = False  # a write committed during the hold
_previous: object = None
_callbacks: list[Callable[[], None]] = []


def hold() -> None:
    """From now until the hold ends (``after_commit``, or ``release()`` for the command
    layer), Ctrl-C is recorded instead of raised."""
    global _held, _previous
    if _held or threading.current_thread() is not threading.main_thread():
        return
    _previous = signal.signal(signal.SIGINT, _record)
    _held = True


def _record(signum, frame) -> None:
    global _pressed
    if _pressed and _callbacks:
        raise KeyboardInterrupt  # pressed again, the commit still unanswered: stop waiting
    _pressed = True
    for callback in list(_callbacks):
        # in a thread: a handler that blocks (a cancel request to a server that does not
        # answer) would make the next Ctrl-C wait too
        threading.Thread(target=_quietly, args=(callback,), daemon=True).start()


def _quietly(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # nothing to report: the commit's own outcome is what counts
        pass


@contextmanager
def on_press(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback`` if Ctrl-C is pressed during the block (while held)."""
    _callbacks.append(callback)
    try:
        yield
    finally:
        _callbacks.remove(callback)


def keep_until_released() -> None:
    """The command layer: a hold taken by a commit lasts until ``release()``."""
    global _kept
    _kept = True


def after_commit() -> None:
    """What a write does once committed: without the command layer, end the hold (and
    raise a Ctrl-C pressed meanwhile, now that the commit is done)."""
    global _committed
    _committed = True
    if not _kept and _end_hold():
        raise KeyboardInterrupt


def after_failed_commit() -> None:
    """A commit that failed (nothing committed): without the command layer, end the hold."""
    if not _kept:
        _end_hold()


def release() -> bool:
    """The command layer, its outcome printed: give Ctrl-C back its earlier handling; True
    when it was pressed while held and a write had committed (a Ctrl-C during a commit
    that then failed is told by that failure)."""
    global _kept, _committed
    committed, _kept, _committed = _committed, False, False
    return _end_hold() and committed


def _end_hold() -> bool:
    global _held, _pressed, _previous
    if not _held:
        return False
    previous = _previous if _previous is not None else signal.SIG_DFL
    signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
    pressed = _pressed
    _held, _pressed, _previous = False, False, None
    return pressed

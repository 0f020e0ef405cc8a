"""What the store has to tell a person while it works (a writer waiting for the lock, a
commit waiting for the server, the server's warnings during it).

The store never prints: the command layer subscribes the output gateway's ``notice``
here, and a store backend calls ``notify``. Without a listener nothing is said.
"""

from __future__ import annotations

from collections.abc import Callable

#: what a writer says once it has waited this long for another writer's lock
WAIT_NOTICE_AFTER_S = 1.0
WAITING = "waiting for another writer to finish with the store…"

_listener: Callable[[str], None] | None = None


def listen(callback: Callable[[str], None] | None) -> None:
    global _listener
    _listener = callback


def notify(message: str) -> None:
    if _listener is not None:
        _listener(message)

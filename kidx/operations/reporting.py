"""How an operation that runs a while tells the user what it is doing: it calls the
``Reporter`` the caller gives with a typed event (``kidx.operations.events``), never a
sentence, and never prints. ``kidx.output.events`` words the events: the command's
reporter prints them on standard error (``stderr_reporter``), the Python API keeps the
warnings (``Store.import_bundle``'s ``warnings``)."""

from __future__ import annotations

from collections.abc import Callable

from kidx.operations.events import Event

Reporter = Callable[[Event], None]


__all__ = ["Reporter"]

"""How an operation that runs a while tells the user what it is doing: through a
``Reporter`` the caller gives (the command's is the output gateway), never by printing."""

from __future__ import annotations

from typing import Protocol


class Reporter(Protocol):
    def notice(self, message: str) -> None:
        """A line of progress or information (standard error, as it is)."""

    def warning(self, message: str) -> None:
        """Something the user should act on (``Warning: …`` on standard error)."""

"""A manifest read from somewhere, with where it came from."""

from __future__ import annotations

from typing import NamedTuple

from kidx.errors import Location


class Document(NamedTuple):
    """One manifest (a dict with apiVersion, kind, metadata, spec) and its origin.

    ``source`` is a file path or ``STDIN``; ``number`` is the 1-based document number in
    that source; ``line`` the 1-based line where the document starts, when known;
    ``member`` names the entry of a bundle or List the manifest came from.
    """

    body: dict
    source: str
    number: int  # not ``index``: that would hide tuple.index
    line: int | None = None
    member: str | None = None

    def location(self, path: str | None = None, line: int | None = None) -> Location:
        where = self.source if self.member is None else f"{self.source} ({self.member})"
        return Location(where, self.number, line if line is not None else self.line, path)

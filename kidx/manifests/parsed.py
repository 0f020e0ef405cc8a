"""What parsing a text gives: documents with where each starts, or an error with where.

Shared by the JSON parser (``parsing``) and the YAML event reader (``yaml_events``),
which ``parsing`` calls for YAML."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class ParsedDocument:
    data: object
    index: int  # 1-based document number in the text
    line: int  # 1-based line where the document starts


class ParseError(ValueError):
    def __init__(
        self, message: str, line: int | None = None, index: int | None = None, syntax: bool = False,
        path: str | None = None,
    ):
        super().__init__(message)
        self.path = path  # the field being read, when known
        self.message = message
        self.line = line
        self.index = index
        self.syntax = syntax  # the text is not in this format at all (not a bad value in it)

"""Parsing text into documents: YAML 1.2 (multi-document) and JSON (one or concatenated).

YAML rules (docs/design.md §2): YAML 1.2, timestamps stay strings exactly as written,
duplicate keys are errors; see ``yaml_events``. ruamel.yaml is imported only when YAML is
actually read.
"""

from __future__ import annotations

import json

from kidx.manifests.parsed import ParsedDocument, ParseError

__all__ = ["ParseError", "ParsedDocument", "looks_like_json", "parse_json_stream", "parse_yaml_stream"]


def looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("{")


# --- JSON -----------------------------------------------------------------------------

def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _object_without_duplicates(pairs):
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f'duplicate key "{key}"')
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_without_duplicates, parse_constant=_reject_constant
)


def parse_json_stream(text: str) -> list[ParsedDocument]:
    """One JSON value or several concatenated ones (as kubectl accepts)."""
    documents: list[ParsedDocument] = []
    position, length, line = 0, len(text), 1
    index = 0
    while True:
        start = position
        while position < length and text[position] in " \t\r\n":
            position += 1
        line += text.count("\n", start, position)
        if position >= length:
            return documents
        index += 1
        try:
            value, end = _DECODER.raw_decode(text, position)
        except RecursionError:
            raise ParseError("document is nested too deeply", line, index) from None
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno, index, syntax=True) from None
        except ValueError as exc:  # from the hooks: duplicate key, NaN; or int()'s digit limit
            raise ParseError(f"invalid JSON: {_value_problem(exc)}", line, index) from None
        documents.append(ParsedDocument(value, index, line))
        line += text.count("\n", position, end)
        position = end


# --- YAML -----------------------------------------------------------------------------


def parse_yaml_stream(text: str) -> list[ParsedDocument]:
    """Every non-empty document of a YAML stream, with the line where each starts."""
    from kidx.manifests.yaml_events import build_documents

    return build_documents(text)


def _value_problem(exc: Exception) -> str:
    """A JSON hook's or int()'s exception as a reader-facing phrase (no Python internals)."""
    text = str(exc)
    if "integer string conversion" in text:  # int()'s 4300-digit limit
        return "integer out of range (must fit in 64 bits)"
    return text

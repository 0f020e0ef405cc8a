"""Finding the line of a field in a source text, for error messages only.

Parsing keeps no positions (that would slow every apply); when a document turns out to be
invalid, its source is composed again with positions to find the line of the offending
field. JSON is close enough to YAML for this; when the lookup fails, the document's own
line is used.
"""

from __future__ import annotations

import re

LOCATE_LIMIT = 4 * 1024 * 1024  # characters; past this, composing again costs seconds
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def split_field_path(path: str) -> list[str | int]:
    return [name if name is not None and name != "" else int(index) for name, index in _SEGMENT.findall(path)]


_composed: dict[int, tuple[str, list]] = {}  # id(text) -> (text, nodes): one parse per source


def _nodes(text: str) -> list | None:
    cached = _composed.get(id(text))
    if cached is not None and cached[0] is text:
        return cached[1]
    try:
        from ruamel.yaml import YAML

        nodes = list(YAML(typ="safe", pure=False).compose_all(text))
    except Exception:  # any parse problem: fall back to the document's line
        return None
    _composed[id(text)] = (text, nodes)
    return nodes


def locate_line(text: str, document_index: int, path: str) -> int | None:
    """1-based line of ``path`` (``spec.measurements[0].unit``) in the n-th document."""
    if len(text) > LOCATE_LIMIT:
        return None
    nodes = _nodes(text)
    if nodes is None:
        return None
    if not 1 <= document_index <= len(nodes) or nodes[document_index - 1] is None:
        return None
    node = nodes[document_index - 1]
    line = node.start_mark.line + 1
    for segment in split_field_path(path):
        node = _child(node, segment)
        if node is None:
            return line
        line = node.start_mark.line + 1
    return line


def _child(node, segment):
    if isinstance(segment, int):
        values = node.value if node.id == "sequence" else None
        return values[segment] if values is not None and segment < len(values) else None
    if node.id != "mapping":
        return None
    for key, value in node.value:
        if getattr(key, "value", None) == segment:
            return key if value is None else value
    return None

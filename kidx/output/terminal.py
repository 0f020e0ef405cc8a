"""Text from the store or the command line made safe to show on a terminal.

A title, label, annotation, spec value, name or path may hold control characters: ESC
sequences that clear the screen or recolour it, a carriage return or line break that
forges a line of output. Every human-readable output (tables, describe, history, error
and warning lines) passes its text through ``escape_control``; data outputs (``-o
json/yaml/jsonpath/name``) stay exact. As kubectl does, ESC is shown as ``^[`` and a
carriage return as ``\\r``; kidx also shows ``\\n`` and ``\\t`` and writes any other
control character (C0, DEL, C1, line and paragraph separators, bidirectional
overrides) as ``\\xNN`` or ``\\uNNNN``.
"""

from __future__ import annotations

_NAMED = {0x1B: "^[", 0x0D: "\\r", 0x0A: "\\n", 0x09: "\\t"}
# invisible characters that reorder or break the text a reader sees
_OTHERS = (0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for point in (*range(0x20), 0x7F, *range(0x80, 0xA0)):
        table[point] = _NAMED.get(point, f"\\x{point:02x}")
    for point in _OTHERS:
        table[point] = f"\\u{point:04x}"
    return table


_escapes: dict[int, str] | None = None  # built on first use: most commands never need it


def escape_control(text: str) -> str:
    """``text`` with every control character written visibly (``\\n``, ``^[``, ``\\x07``)."""
    global _escapes
    if text.isprintable():  # the usual case, answered in C; no control character is printable
        return text
    if _escapes is None:
        _escapes = _table()
    return text.translate(_escapes)

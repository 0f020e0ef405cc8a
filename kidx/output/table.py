"""Plain-text tables laid out like kubectl's (Go tabwriter: min width 6, padding 3).

Every column but the last is padded to its widest cell plus three spaces (at least six
characters in all); the last column is never padded. Cells are sanitised as kubectl
does: text after a line break becomes ``...`` and ESC is shown as ``^[``; any other
control character is escaped too (``kidx.output.terminal``).
"""

from __future__ import annotations

import re

from kidx.output.terminal import escape_control

MIN_WIDTH = 6
PADDING = 3


_BREAKS = re.compile(r"[\n\r\f]")


def sanitize(cell: str) -> str:
    if cell.isprintable():  # the usual case, answered in C
        return cell
    found = _BREAKS.search(cell)
    if found is not None:
        cell = cell[: found.start()] + "..."
    return escape_control(cell)


def render_table(headers: list[str] | None, rows: list[list[str]]) -> str:
    body = [[sanitize(cell) for cell in row] for row in rows]
    lines = ([[sanitize(header) for header in headers]] if headers else []) + body
    if not lines:
        return ""
    widths = [0] * max(len(line) for line in lines)
    for line in lines:
        for index, cell in enumerate(line[:-1]):
            widths[index] = max(widths[index], len(cell))
    widths = [max(width + PADDING, MIN_WIDTH) for width in widths]
    out: list[str] = []
    for line in lines:
        parts = [cell.ljust(widths[index]) for index, cell in enumerate(line[:-1])]
        parts.append(line[-1] if line else "")
        out.append("".join(parts).rstrip() if not line[-1] else "".join(parts))
    return "\n".join(out) + "\n"

"""Plain-text tables laid out like kubectl's (Go tabwriter: min width 6, padding 3).

Every column but the last is padded to its widest cell plus three spaces (at least six
characters in all); the last column is never padded. Cells are sanitised as kubectl
does: text after a line break becomes ``...`` and ESC is shown as ``^[``; any other
control character is escaped too (``kidx.output.terminal``).
"""

from __future__ import annotations

from itertools import zip_longest

from kidx.output.terminal import escape_control

MIN_WIDTH = 6
PADDING = 3
BREAKS = "\n\r\f"  # a line break: the rest of the cell becomes "..."


def sanitize(cell: str) -> str:
    if cell.isprintable():  # the usual case, answered in C
        return cell
    breaks = [at for at in map(cell.find, BREAKS) if at >= 0]
    if breaks:
        cell = cell[: min(breaks)] + "..."
    return escape_control(cell)


def render_table(headers: list[str] | None, rows: list[list[str]]) -> str:
    lines = ([headers] if headers else []) + rows
    if not lines:
        return ""
    # the usual line is printable as a whole, and then each of its cells is
    lines = [line if "".join(line).isprintable() else [sanitize(cell) for cell in line] for line in lines]
    # each column but a line's last is as wide as its widest cell (the last is never padded)
    widths = [max(max(map(len, column)) + PADDING, MIN_WIDTH)
              for column in zip_longest(*(line[:-1] for line in lines), fillvalue="")]
    out: list[str] = []
    layouts: dict[int, str] = {}  # cells in a line -> its format: each cell but the last padded
    for line in lines:
        layout = layouts.get(len(line))
        if layout is None:
            layout = layouts[len(line)] = "".join(f"{{:<{width}}}" for width in widths[: len(line) - 1]) + "{}"
        text = layout.format(*line)
        out.append(text if line[-1] else text.rstrip())
    return "\n".join(out) + "\n"

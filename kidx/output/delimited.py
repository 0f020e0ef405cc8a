"""``-o csv`` and ``-o tsv``: a header row and one row per object, values raw, so a
selection goes straight into a spreadsheet or ``pandas.read_csv``.

csv is quoted as RFC 4180 says (a field holding a comma, a double quote or a line break
is put in double quotes, inner quotes doubled); lines end with LF, as ``psql --csv``
writes them. tsv cannot quote, so a tab, line break or backslash inside a value is
written as ``\\t``, ``\\n``, ``\\r`` or ``\\\\`` (the convention of PostgreSQL's text format).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def render_delimited(kind: str, headers: Sequence[str] | None, rows: Iterable[Sequence[str]]) -> str:
    if kind == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        if headers is not None:
            writer.writerow(headers)
        writer.writerows(rows)
        return buffer.getvalue()
    lines = [] if headers is None else ["\t".join(cell.translate(_TSV_ESCAPES) for cell in headers)]
    lines.extend("\t".join(cell.translate(_TSV_ESCAPES) for cell in row) for row in rows)
    return "".join(line + "\n" for line in lines)

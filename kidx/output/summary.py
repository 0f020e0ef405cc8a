"""``kidx summary``'s renderers: the table, json/yaml and csv/tsv of a ``Summary``."""

from __future__ import annotations

from collections.abc import Callable

from kidx.operations.analyse.summary import Summary
from kidx.output.table import render_table

CSV_FIELDS = ("operation", "gpu", "runs", "releases", "first", "last")


def _range(first: str | None, last: str | None) -> str:
    if first is None or last is None:
        return "<none>"
    return first if first == last else f"{first} - {last}"


def summary_table(summary: Summary, no_headers: bool = False) -> str:
    """OPERATION, GPU, RUNS and, with a release label, its range (``0.3.0 - 0.6.1``) and
    how many of its values the runs hold."""
    label = summary.release_label
    headers = ["OPERATION", "GPU", "RUNS"]
    if label:
        headers += [label.upper(), "RELEASES"]
    rows = []
    for row in summary.rows:
        cells = [row.operation, row.gpu, str(row.runs)]
        if label:
            cells += [_range(row.first, row.last), str(len(row.releases))]
        rows.append(cells)
    return render_table(None if no_headers else headers, rows)


def summary_line(summary: Summary) -> str:
    """What the table adds up to, for standard error."""
    runs = "1 run" if summary.runs == 1 else f"{summary.runs:,} runs"
    line = (f"{runs}: {summary.operations} operation{'' if summary.operations == 1 else 's'} on "
            f"{summary.gpus} GPU{'' if summary.gpus == 1 else 's'}")
    if summary.release_labels:
        line += (f"; several release labels ({', '.join(summary.release_labels)}): "
                 "--release-label KEY shows one's range")
    return line


def summary_document(summary: Summary) -> dict:
    return {
        "releaseLabel": summary.release_label,
        "runs": summary.runs,
        "rows": [{"operation": row.operation, "gpu": row.gpu, "runs": row.runs, "releases": list(row.releases),
                  "first": row.first, "last": row.last} for row in summary.rows],
    }


def _json(summary: Summary, name: str, no_headers: bool) -> str:
    from kidx.output.serialize import to_json

    return to_json(summary_document(summary))


def _yaml(summary: Summary, name: str, no_headers: bool) -> str:
    from kidx.output.serialize import to_yaml

    return to_yaml(summary_document(summary))


def _delimited(summary: Summary, name: str, no_headers: bool) -> str:
    from kidx.output.delimited import render_delimited

    return render_delimited(name, None if no_headers else list(CSV_FIELDS), summary_rows(summary))


def _table(summary: Summary, name: str, no_headers: bool) -> str:
    return summary_table(summary, no_headers) if summary.runs else ""  # as get: no table when nothing is selected


def summary_rows(summary: Summary) -> list[list[str]]:
    return [[row.operation, row.gpu, str(row.runs), str(len(row.releases)), row.first or "", row.last or ""]
            for row in summary.rows]


# the renderers by the name the printer table's rows give them: each takes the summary, the
# -o value's name (csv, tsv) and whether to leave the headers out
RENDERERS: dict[str, Callable[[Summary, str, bool], str]] = {
    "json": _json, "yaml": _yaml, "delimited": _delimited, "table": _table,
}

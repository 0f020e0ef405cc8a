"""The index and the kernel pages: implementations by GPU, each cell an implementation's
latest speedup over the baseline, coloured by the analysis layer's verdict
(``model.Summary.verdict``) under the request's threshold."""

from __future__ import annotations

import functools
from collections.abc import Callable

from kidx.operations.select.analysed_runs import Referenced
from kidx.publish import charts
from kidx.publish.context import SiteContext, group_path, version_order
from kidx.publish.model import TITLE_SEPARATOR, Summary, short_titles, summary


def cell_view(summary: Summary, href: str, memory: bool = False, host: tuple[int, int, str] | None = None) -> dict:
    """A matrix cell; its hover text says what the header and row do not. ``host``: how
    many of its drawn points are marked host-bound (``host_of``), of how many, and why the
    first is; a cell with any is marked ⚑."""
    speedup = summary.speedup
    if summary.baseline:
        tip = "the baseline"
    elif speedup is None:
        tip = "no baseline run to compare with"
    elif memory:
        tip = f"{speedup:.2f}× less memory than the baseline (REDUCTION)"
    else:
        tip = f"{speedup:.2f}× the baseline's speed"
    if summary.shapes > 1 and not summary.baseline:
        tip += f", geometric mean of {summary.shapes} shapes"
        if summary.families > 1:
            tip += f" in {summary.families} families"
        tip += ", each shape one vote"
        if summary.interval is not None:
            tip += f" (95% interval {summary.interval[0]:.2f}-{summary.interval[1]:.2f}×)"
    if summary.verdicts:
        tip += "; " + ", ".join(f"{count} {verdict}" for verdict, count in summary.verdicts.items())
    if len(summary.history) > 1:
        tip += f"; {len(summary.history)} days"
    if host is not None:
        marked, shapes, reason = host
        tip += f"; ⚑ {marked} of {shapes} shapes' timings likely the host's, not the kernel's ({reason})"
    return {
        "href": href, "baseline": summary.baseline,
        "speedup": f"{speedup:.2f}×" if speedup is not None else "–",
        "class": "baseline" if summary.baseline else summary.verdict or "none",
        "spark": (charts.sparkline([v for _, v in summary.history])
                  if len(summary.history) > 1 and not summary.baseline else ""),
        "tip": tip,
        "host": host is not None,
    }


def host_of(site: SiteContext, cells) -> tuple[int, int, str] | None:
    """Of the points the cells' lines draw (each shape's latest run), how many the site
    marks host-bound (``SiteContext.host``), of how many, and the first one's reason
    (its x and why); None where none is."""
    points = [(cell.family, point) for cell in cells for point in cell.line.points]
    marked = [(family, point) for family, point in points if point.run.name in site.host]
    if not marked:
        return None
    family, first = marked[0]
    where = f"{family.x_label or family.x_param} {first.x}" if family.x_param else family.title
    return len(marked), len(points), f"{where}: {site.host[first.run.name]}"


def _columns(site: SiteContext, rows, keys: set[str]) -> list[tuple[Referenced, str, str]]:
    """The environments the rows have cells on: each with its short title and the
    ``key=value`` labels of the page's filters that its runs have, by which a filter
    hides the columns with no run of its value (the other GPUs')."""
    present = {digest for row in rows for digest in row.cells}
    environments = [e for e in site.model.environments if e.digest in present]
    names = short_titles({e.digest or "": site.title(e) for e in environments})
    held = _environment_labels(site)
    return [(e, names.get(e.digest or "", e.label),
             " ".join(label for label in held.get(e.digest or "", ()) if label.partition("=")[0] in keys))
            for e in environments]


def _environment_labels(site: SiteContext) -> dict[str, list[str]]:
    """Per environment, the ``key=value`` labels of its runs, sorted."""
    if site.environment_labels is None:
        found: dict[str, set[str]] = {}
        for run in site.model.runs:
            found.setdefault(run.environment.digest or "", set()).update(f"{k}={v}" for k, v in run.labels.items())
        site.environment_labels = {digest: sorted(labels) for digest, labels in found.items()}
    return site.environment_labels


def _protocol_names(site: SiteContext) -> dict[str, str]:
    return short_titles({f.protocol.digest or "": site.title(f.protocol) for f in site.model.families})


def index_page(site: SiteContext) -> tuple[str, str]:
    model = site.model
    protocols = _protocol_names(site)
    filters = _filters(model.kernels)
    keys = {key for key, _ in filters}
    columns = _columns(site, model.kernels, keys)
    memory_protocols = {f.protocol.digest for f in model.families if f.metric == "peak_memory"}
    # each index cell's family cells (as model.build_model groups them), for the host marks
    family_cells: dict[tuple, list] = {}
    if site.host:
        for kernel_row in model.rows:
            for environment, one in kernel_row.cells.items():
                family_cells.setdefault((kernel_row.kernel, kernel_row.protocol.digest, kernel_row.implementation,
                                         environment), []).append(one)
    rows, previous, host_marked = [], None, False
    for row in model.kernels:
        href = f"kernels/{row.kernel}.html"
        memory = row.protocol.digest in memory_protocols
        cells = [cell_view(row.cells[e.digest or ""], href, memory,
                           host_of(site, family_cells.get((row.kernel, row.protocol.digest, row.implementation,
                                                           e.digest or ""), ())))
                 if (e.digest or "") in row.cells else None for e, _, _ in columns]
        host_marked = host_marked or any(cell is not None and cell["host"] for cell in cells)
        head = (row.kernel, row.protocol.digest) != previous
        previous = (row.kernel, row.protocol.digest)
        rows.append({"head": head, "title": row.title, "href": href, "cells": cells,
                     "protocol": protocols.get(row.protocol.digest or "", row.protocol.label), "detail": "",
                     "implementation": row.implementation, "labels": _filtered(row.labels, keys),
                     "search": row.search})
    return site.page("index.html", "index.html", rows=rows, columns=columns, filters=filters,
                     host_marked=host_marked,
                     runs=len(model.runs), families=len(model.families),
                     kernels=len({row.kernel for row in model.kernels}),
                     series=sum(len(members) for members in site.series_pages.values()),
                     series_pages=len(site.series_pages), environments_count=len(model.environments))


def kernel_pages(site: SiteContext) -> list[Callable[[], list[tuple[str, str]]]]:
    """A job (``workers``) per kernel page."""
    protocols = _protocol_names(site)
    by_kernel: dict[str, list] = {}
    for row in site.model.rows:
        by_kernel.setdefault(row.kernel, []).append(row)
    return [functools.partial(_kernel_page, site, protocols, kernel, members)
            for kernel, members in sorted(by_kernel.items())]


def _kernel_page(site: SiteContext, protocols: dict[str, str], kernel: str, members: list) -> list[tuple[str, str]]:
    filters = _filters(members)
    keys = {key for key, _ in filters}
    columns = _columns(site, members, keys)
    rows, previous, host_marked = [], None, False
    for row in members:
        cells = []
        for environment, _, _ in columns:
            cell = row.cells.get(environment.digest or "")
            href = "../" + group_path(cell.family.id) if cell else ""
            cells.append(cell_view(summary([cell]), href, cell.family.metric == "peak_memory", host_of(site, [cell]))
                         if cell else None)
        host_marked = host_marked or any(cell is not None and cell["host"] for cell in cells)
        head = (row.id, row.title) != previous
        previous = (row.id, row.title)
        _, _, shape = row.title.partition(TITLE_SEPARATOR)
        detail = (f"by {row.x_label}" if row.x_label else "") + (
            f" · {shape.replace(TITLE_SEPARATOR, ', ')}" if shape else "")
        rows.append({"head": head, "title": row.title.split(TITLE_SEPARATOR)[0], "href": "",
                     "cells": cells, "protocol": protocols.get(row.protocol.digest or "", row.protocol.label),
                     "detail": detail, "implementation": row.implementation,
                     "labels": _filtered(row.labels, keys),
                     "search": row.search})
    title = rows[0]["title"]
    return [site.page("kernel.html", f"kernels/{kernel}.html", rows=rows, columns=columns, title=title,
                      filters=filters, host_marked=host_marked)]


def _filters(rows) -> list[tuple[str, list[str]]]:
    values: dict[str, set] = {}
    for row in rows:
        for pair in row.labels:
            key, _, value = pair.partition("=")
            values.setdefault(key, set()).add(value)
    return [(key, sorted(found, key=version_order)) for key, found in sorted(values.items())
            if 2 <= len(found) <= 80]


def _filtered(labels: list[str], keys: set[str]) -> str:
    """The ``key=value`` labels the page's filters can choose, space-separated."""
    return " ".join(label for label in labels if label.partition("=")[0] in keys)

"""Printing what ``get`` found (``kidx.operations.select.get.QueryResult``) in each output format.

``print_listing`` prints with the renderer the format's entry in the printer table
(``kidx.output.printers``) names in ``RENDERERS`` here, each taking the result, the
parsed format and the listing's options. Tables follow kubectl: one table per kind,
separated by a blank line, names prefixed with ``kind.group/`` when more than one kind
is shown (or with --show-kind).
"""

from __future__ import annotations

from kidx.errors import UsageError
from kidx.kinds.registry import KindInfo
from kidx.operations.select.get import QueryResult
from kidx.output.columns import ColumnSet, ReferenceNamer, label_column_header, labels_cell
from kidx.output.formats import OutputFormat
from kidx.output.table import render_table
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from kidx.output.gateway import Output

Groups = list[tuple[KindInfo, list[dict]]]


class ListingOptions(NamedTuple):
    """``get``'s options of how its listing looks."""

    show_labels: bool = False
    label_columns: tuple[str, ...] = ()  # -L keys, comma-separated values split
    no_headers: bool = False
    show_kind: bool = False
    namer: ReferenceNamer | None = None  # a referenced object's name, for reference columns

    @property
    def prints_labels(self) -> bool:
        return self.show_labels or bool(self.label_columns)


def listing_options(fmt: OutputFormat, show_labels: bool, label_columns: list[str] | None, no_headers: bool,
                    show_kind: bool) -> ListingOptions:
    """The options, refused (kubectl's wording) where the format does not print them."""
    keys = tuple(key for value in label_columns or [] for key in value.split(",") if key)
    if show_labels and not (fmt.is_table or fmt.is_delimited):
        raise UsageError(f"--show-labels option cannot be used with {fmt.kind} printer")
    if keys and (fmt.kind.startswith("custom-columns") or (fmt.is_delimited and fmt.argument)):
        raise UsageError(f"--label-columns option cannot be used with {fmt.kind} printer")
    return ListingOptions(show_labels, keys, no_headers, show_kind)


def print_listing(out: Output, result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> None:
    """The result in its format on stdout; ``No resources found`` on stderr when a
    listing of columns found nothing."""
    text = RENDERERS[fmt.printer.render](result, fmt, options)
    if text is not None:
        out.data(text)
    if not result.total and not result.missing and fmt.reads_columns:
        out.notice("No resources found")


def render_tables(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str:
    table = TableOptions(fmt.kind == "wide", options.show_labels, options.label_columns, options.no_headers,
                         options.show_kind, speed_of_light=fmt.speed_of_light)
    return tables_text(result.groups, table, options.namer)


def render_delimited(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str:
    table = TableOptions(True, options.show_labels, options.label_columns, options.no_headers, False,
                         speed_of_light=fmt.speed_of_light)
    return delimited_text(result.groups, fmt, table, options.namer)


def render_names(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str:
    return names_text([(info, [m["metadata"]["name"] for m in ms]) for info, ms in result.groups])


def render_documents(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str | None:
    """yaml/json: one object bare when a single item was implied, else a List; the
    objects as stored, without the referenced objects attached for sorting."""
    if not result.total and result.missing:
        return None
    groups = result.groups
    if result.attached:
        from kidx.operations.select.get import without_referenced

        groups = [(info, without_referenced(ms, result.attached)) for info, ms in groups]
    from kidx.output.serialize import as_list, to_json, to_yaml  # documents only: a table needs none

    manifests = [manifest for _, group in groups for manifest in group]
    document = manifests[0] if result.single and len(manifests) == 1 else as_list(manifests)
    return to_json(document) if fmt.kind == "json" else to_yaml(document)


def render_jsonpath(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str | None:
    from kidx.jsonpath import JSONPathTemplate
    from kidx.output.serialize import as_list

    if not result.total and result.missing:
        return None
    manifests = [manifest for _, group in result.groups for manifest in group]
    data = manifests[0] if result.single and len(manifests) == 1 else as_list(manifests)
    return JSONPathTemplate.parse(fmt.argument or "").render(data)


def render_custom_columns(result: QueryResult, fmt: OutputFormat, options: ListingOptions) -> str | None:
    from kidx.output.custom_columns import (
        custom_column_cells,
        parse_custom_columns,
        parse_custom_columns_file,
    )

    if not result.total:
        return None
    if fmt.kind == "custom-columns-file":
        columns = parse_custom_columns_file(fmt.argument or "")
    else:
        columns = parse_custom_columns(fmt.argument or "")
    rows = [custom_column_cells(columns, m) for _, group in result.groups for m in group]
    headers = None if options.no_headers else [header for header, _ in columns]
    return render_table(headers, rows)


# the renderers by the name the printer table's get rows give them (tests/output/
# test_printers.py holds the two equal)
RENDERERS: dict[str, Callable[[QueryResult, OutputFormat, ListingOptions], str | None]] = {
    "tables": render_tables, "delimited": render_delimited, "names": render_names, "documents": render_documents,
    "jsonpath": render_jsonpath, "custom_columns": render_custom_columns,
}


class TableOptions(NamedTuple):
    wide: bool = False
    show_labels: bool = False
    label_columns: tuple[str, ...] | list[str] = ()
    no_headers: bool = False
    show_kind: bool = False
    # -o wide of runs: achieved bandwidth, FLOP/s and share of peak (kidx.output.speed_of_light);
    # each manifest then carries its workload and environment under "workload" and "environment"
    speed_of_light: bool = False


def tables_text(groups: Groups, options: TableOptions, namer: ReferenceNamer | None = None) -> str:
    shown = [(info, manifests) for info, manifests in groups if manifests]
    prefix_names = options.show_kind or len(shown) > 1
    tables = [_table(info, manifests, options, namer, prefix_names) for info, manifests in shown]
    return "\n".join(tables)


def _table(info: KindInfo, manifests: list[dict], options: TableOptions, namer, prefix_names: bool) -> str:
    columns = ColumnSet(info, options.wide, namer)
    sol_headers: list[str] = []
    sol_cells: list[list[str]] = [[] for _ in manifests]
    if options.speed_of_light and info.kind == "BenchmarkRun":
        sol_headers, sol_cells = _speed_of_light(manifests)
    headers = ["NAME", *columns.headers, *sol_headers, *(label_column_header(k) for k in options.label_columns)]
    if options.show_labels:
        headers.append("LABELS")
    prefix = f"{info.qualified_name}/" if prefix_names else ""
    label_columns, show_labels = options.label_columns, options.show_labels
    names = [prefix + manifest["metadata"]["name"] for manifest in manifests]
    rows = list(map(list, zip(names, *columns.column_cells(manifests), strict=True)))
    if not (sol_headers or label_columns or show_labels):
        return render_table(None if options.no_headers else headers, rows)
    for row, manifest, extra in zip(rows, manifests, sol_cells, strict=True):
        row.extend(extra)
        if label_columns or show_labels:
            labels = manifest["metadata"].get("labels") or {}
            row.extend([labels.get(key, "") for key in label_columns])
            if show_labels:
                row.append(labels_cell(labels))
    return render_table(None if options.no_headers else headers, rows)


def _speed_of_light(manifests: list[dict], raw: bool = False) -> tuple[list[str], list[list[str]]]:
    from kidx.output.speed_of_light import run_columns
    from kidx.speed_of_light.achieved import achieved_of_view

    return run_columns([achieved_of_view(m) for m in manifests], raw)


def names_text(groups: list[tuple[KindInfo, list[str]]]) -> str:
    return "".join(f"{info.qualified_name}/{name}\n" for info, names in groups for name in names)


def delimited_text(
    groups: Groups, fmt: OutputFormat, options: TableOptions, namer: ReferenceNamer | None = None,
) -> str:
    """``-o csv|tsv``: the ``-o wide`` columns with raw values; ``-o csv=SPEC``: custom columns."""
    from kidx.output.delimited import render_delimited as delimited_rows

    shown = [(info, manifests) for info, manifests in groups if manifests]
    if len(shown) > 1:
        kinds = ", ".join(info.plural for info, _ in shown)
        raise UsageError(f"-o {fmt.kind} prints one kind at a time (one header row); this selection holds {kinds}")
    if fmt.argument:
        from kidx.output.custom_columns import parse_custom_columns, raw_custom_column_cells

        columns = parse_custom_columns(fmt.argument)
        headers = [header for header, _ in columns]
        rows = [raw_custom_column_cells(columns, m) for _, manifests in shown for m in manifests]
        return delimited_rows(fmt.kind, None if options.no_headers else headers, rows)
    if not shown and len(groups) != 1:
        return ""
    info, manifests = shown[0] if shown else groups[0]
    column_set = ColumnSet(info, True, namer)
    sol_headers: list[str] = []
    sol_cells: list[list[str]] = [[] for _ in manifests]
    if options.speed_of_light and info.kind == "BenchmarkRun":
        sol_headers, sol_cells = _speed_of_light(manifests, raw=True)
    headers = ["NAME", *column_set.headers, *sol_headers, *(label_column_header(k) for k in options.label_columns)]
    if options.show_labels:
        headers.append("LABELS")
    rows = []
    for manifest, extra in zip(manifests, sol_cells, strict=True):
        labels = manifest["metadata"].get("labels") or {}
        row = [manifest["metadata"]["name"], *column_set.raw_cells(manifest), *extra]
        row.extend(labels.get(key, "") for key in options.label_columns)
        if options.show_labels:
            row.append(",".join(f"{key}={labels[key]}" for key in sorted(labels)))
        rows.append(row)
    return delimited_rows(fmt.kind, None if options.no_headers else headers, rows)

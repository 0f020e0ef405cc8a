"""kidx export as one operation: the selection, then the file in the format asked for,
written whole or not at all, or returned for standard output. A bundle is
``bundle_export.py``'s; the other formats read the selected runs from the store here
(``selected_runs``; Parquet's rows, ``parquet_rows.py``) and are written by their format's
exporter: ``kidx.formats.bmf.exporter``, ``kidx.formats.pytorch_benchmark.exporter``,
``kidx.formats.parquet``, each beside the importer that reads its format back, where kidx
reads it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kidx.errors import UsageError
from kidx.records import NamedTuple

if TYPE_CHECKING:
    from kidx.formats.run_objects import RunObjects
    from kidx.kinds.registry import KindRegistry
    from kidx.store.store import Store

FORMATS = ("bundle", "bmf", "pytorch-benchmark", "parquet")
STANDARD_OUTPUT = "-"


class ExportRequest(NamedTuple):
    arguments: list[str]  # TYPE [NAME…] | TYPE/NAME…; none: the whole store
    selector: Any  # a parsed label selector, or None
    format_name: str  # one of FORMATS
    output_file: str  # a path, or "-" for standard output
    description: str  # the selection as the user wrote it, kept in a bundle


class Exported(NamedTuple):
    format_name: str
    output_file: str
    missing: list[str]  # NotFound messages of names that matched nothing: then nothing is written
    data: str | None = None  # what goes to standard output (``-o -``)
    report: Any = None  # the format's report: ExportReport, BmfReport, PytorchBenchmarkReport, ParquetReport


def check_format(format_name: str, output_file: str) -> None:
    if format_name not in FORMATS:
        raise UsageError(f"unknown --format {format_name}: {', '.join(FORMATS[:-1])} or {FORMATS[-1]}")
    if format_name == "parquet" and output_file == STANDARD_OUTPUT:
        raise UsageError("--format parquet writes a binary file: give -o FILE, not -o -")


def export_store(store: Store, registry: KindRegistry, request: ExportRequest,
                 require_store: Callable[[], None] = lambda: None) -> Exported:
    """Select, then write the request's file (or return its text for standard output);
    ``require_store`` refuses a store that does not exist, after the arguments' own errors."""
    check_format(request.format_name, request.output_file)
    selected, missing = export_selection(store, registry, request.arguments, request.selector,
                                         runs_only=request.format_name != "bundle", format_name=request.format_name)
    require_store()
    if request.format_name == "parquet":
        from kidx.formats.parquet import require_pyarrow

        require_pyarrow()  # before the runs are read
    if missing:
        return Exported(request.format_name, request.output_file, missing)
    writer = {"bundle": _bundle, "bmf": _bmf, "pytorch-benchmark": _pytorch_benchmark,
              "parquet": _parquet}[request.format_name]
    return writer(store, registry, selected, request)


def export_selection(
    store: Store, registry: KindRegistry, arguments: list[str], selector, runs_only: bool = False,
    format_name: str = "bmf",
) -> tuple[list[tuple[str, str]] | None, list[str]]:
    """``(kind, name)`` of what ``export`` writes (None: the whole store) and the
    NotFound messages of names asked for that matched nothing. With ``runs_only`` (the
    Bencher Metric Format) a selection of any other kind is refused."""
    if not arguments and selector is None:
        return None, []
    from kidx.query.selection import select
    from kidx.query.targets import parse_targets, selection_rules

    selection_rules(arguments, selector)
    targets = parse_targets(arguments, registry, "export")
    others = sorted({target.info.kind for target in targets} - {"BenchmarkRun"})
    if runs_only and others:
        holder = "BMF" if format_name == "bmf" else format_name
        raise UsageError(f"{holder} holds runs only, not {', '.join(others)}: select runs (kidx export runs …)")
    chosen = select(store.catalog(), targets, selector)
    return [(info.kind, entry.name) for info, entry in chosen.entries], chosen.missing


def selected_runs(store: Store, selected: list[tuple[str, str]] | None) -> tuple[list[dict], RunObjects]:
    """The selected runs' manifests (every run when ``selected`` is None; other kinds are
    the caller's to refuse), and the objects they refer to, by reference field and digest:
    what every export reads, in one read of the store."""
    from kidx.formats.run_objects import ROLES

    with store.reading() as catalog:
        if selected is None:
            entries = [entry for entry in catalog.all_entries() if entry.kind == "BenchmarkRun"]
        else:
            found = catalog.get_many("BenchmarkRun", [name for _, name in selected])
            entries = [found[name] for _, name in selected if name in found]
        runs = [store.manifest(entry) for entry in entries]
        objects: RunObjects = {}
        for role, kind in ROLES:
            digests = {run["spec"].get(role) for run in runs} - {None}
            objects[role] = store.referenced_manifests(digests, kind, catalog)
    return runs, objects


def _bundle(store: Store, registry: KindRegistry, selected, request: ExportRequest) -> Exported:
    from pathlib import Path

    from kidx.operations.export.bundle_export import export

    if request.output_file == STANDARD_OUTPUT:
        import io

        buffer = io.BytesIO()
        report = export(store, registry, selected, request.description, None, buffer)
        return Exported(request.format_name, request.output_file, [], buffer.getvalue().decode("utf-8"), report)
    report = export(store, registry, selected, request.description, Path(request.output_file))
    return Exported(request.format_name, request.output_file, [], None, report)


def _bmf(store: Store, registry: KindRegistry, selected, request: ExportRequest) -> Exported:
    from kidx.formats.bmf.exporter import bmf_report

    report = bmf_report(*selected_runs(store, selected))
    return _written(request, report.text(), report)


def _pytorch_benchmark(store: Store, registry: KindRegistry, selected, request: ExportRequest) -> Exported:
    from kidx.formats.pytorch_benchmark.exporter import pytorch_benchmark_report

    report = pytorch_benchmark_report(*selected_runs(store, selected))
    return _written(request, report.text(), report)


def _parquet(store: Store, registry: KindRegistry, selected, request: ExportRequest) -> Exported:
    from pathlib import Path

    from kidx.formats.parquet import write_parquet
    from kidx.operations.export.parquet_rows import parquet_columns, parquet_rows

    rows = parquet_rows(store, registry, selected)
    report = write_parquet(rows, parquet_columns(rows), Path(request.output_file))
    return Exported(request.format_name, request.output_file, [], None, report)


def _written(request: ExportRequest, text: str, report: Any) -> Exported:
    """``text`` written to the request's file (synced: the data is the user's), or kept for
    standard output."""
    if request.output_file == STANDARD_OUTPUT:
        return Exported(request.format_name, request.output_file, [], text, report)
    from kidx.files import write_output

    write_output(request.output_file, text.encode("utf-8"), sync=True)
    return Exported(request.format_name, request.output_file, [], None, report)


__all__ = ["FORMATS", "ExportRequest", "Exported", "check_format", "export_selection", "export_store", "selected_runs"]

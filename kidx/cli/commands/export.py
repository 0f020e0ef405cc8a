"""kidx export [TYPE [NAME…] | TYPE/NAME… | TYPE -l SEL] -o FILE"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import (
    SelectorOption,
    StoreOption,
    kind_registry,
    open_store,
    output,
    parse_selector,
    require_store,
)
from kidx.errors import UsageError
from kidx.output.printers import output_help

FORMATS = ("bundle", "bmf", "pytorch-benchmark", "parquet")

EXAMPLES = """\b
Examples:
  kidx export -o backup.kidx.json
  kidx export runs -l liger_version=0.6.1 -o runs.kidx.json
  kidx import bundle backup.kidx.json --store /tmp/restored
  kidx export runs -l commit=abc123 --format bmf -o results.bmf.json
  kidx export runs -l gpu=nvidia-h100-80gb-hbm3 --format pytorch-benchmark -o records.json
  kidx export runs -l gpu=nvidia-h100-80gb-hbm3 --format parquet -o runs.parquet
"""


def export(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(
            help="What to export: TYPE [NAME…], TYPE/NAME… or TYPE -l SEL; nothing: the whole store.",
            show_default=False,
        ),
    ] = None,
    output_file: Annotated[
        str | None,
        typer.Option("--output", "-o", help=output_help("export")),
    ] = None,
    selector: SelectorOption = None,
    export_format: Annotated[
        str,
        typer.Option("--format", help="bundle: a kidx bundle (a backup); bmf: the selected runs' figures in "
                                      "Bencher Metric Format, for bencher run --adapter json; pytorch-benchmark: one "
                                      "PyTorch OSS benchmark (v3) record per run, as JSON lines; parquet: one row per "
                                      "run, the columns of Store.records() (needs pyarrow)."),
    ] = "bundle",
    store: StoreOption = None,
) -> int:
    """Write a portable bundle: the selected objects, every object they refer to, and
    their names, metadata and complete history.

    'kidx import bundle FILE' into an empty store reproduces the same digests, names and
    revisions. With no selection the whole store is exported: a backup.
    """

    from kidx.operations.export import export_selection

    if not output_file:
        raise UsageError("must specify -o FILE (or -o - for standard output)")
    if export_format not in FORMATS:
        raise UsageError(f"unknown --format {export_format}: {', '.join(FORMATS[:-1])} or {FORMATS[-1]}")
    if export_format == "parquet" and output_file == "-":
        raise UsageError("--format parquet writes a binary file: give -o FILE, not -o -")
    label_selector = parse_selector(selector)
    registry = kind_registry()
    the_store = open_store(store)
    selected, missing = export_selection(the_store, registry, arguments or [], label_selector,
                                         runs_only=export_format != "bundle",
                                         format_name=export_format)
    require_store(the_store, store)  # after the arguments' own errors
    if export_format == "parquet":
        from kidx.operations.parquet_export import require_pyarrow

        require_pyarrow()  # before the runs are read
    description = " ".join([*(arguments or []), *(["-l", selector] if selector else [])]) or "all"
    out = output()
    if missing:
        from kidx.cli.common import report_missing

        return report_missing(out, missing, False)
    if export_format == "bmf":
        return _export_bmf(out, the_store, selected, output_file)
    if export_format == "pytorch-benchmark":
        return _export_pytorch_benchmark(out, the_store, selected, output_file)
    if export_format == "parquet":
        return _export_parquet(out, the_store, registry, selected, output_file)
    return _export_bundle(out, the_store, registry, selected, description, output_file)


def _export_bundle(out, the_store, registry, selected, description: str, output_file: str) -> int:
    from pathlib import Path

    from kidx.operations.export import export as write_export
    from kidx.output.terminal import escape_control

    if output_file == "-":
        import io

        buffer = io.BytesIO()
        report = write_export(the_store, registry, selected, description, None, buffer)
        out.data(buffer.getvalue().decode("utf-8"))
        where = "standard output"
    else:
        report = write_export(the_store, registry, selected, description, Path(output_file))
        where = f"{output_file} ({report.size:,} bytes)"
    for warning in report.warnings:
        out.warning(escape_control(warning))
    dangling = f"; {report.dangling:,} references to objects not in the store" if report.dangling else ""
    out.notice(
        f"exported {report.names:,} names, {report.revisions:,} revisions and {report.objects:,} objects "
        f"to {where}{dangling}"
    )
    return 0


def _export_bmf(out, the_store, selected, output_file: str) -> int:
    from kidx.operations.bmf_export import bmf_report

    report = bmf_report(the_store, selected)
    text = report.text()
    if output_file == "-":
        out.data(text)
        where = "standard output"
    else:
        _write(out, text, output_file)
        where = output_file
    left = [f"{count:,} {what}" for count, what in ((report.older, "older runs of the same benchmarks"),
                                                     (report.without_figure, "runs without a figure")) if count]
    out.notice(f"exported {len(report.benchmarks):,} benchmarks in Bencher Metric Format to {where}"
               + (f"; left out: {', '.join(left)}" if left else ""))
    return 0


def _export_pytorch_benchmark(out, the_store, selected, output_file: str) -> int:
    from kidx.operations.pytorch_benchmark_export import pytorch_benchmark_report

    report = pytorch_benchmark_report(the_store, selected)
    _write(out, report.text(), output_file)
    where = "standard output" if output_file == "-" else output_file
    out.notice(f"exported {len(report.records):,} runs as PyTorch OSS benchmark (v3) records to {where}")
    return 0


def _export_parquet(out, the_store, registry, selected, output_file: str) -> int:
    from pathlib import Path

    from kidx.operations.parquet_export import parquet_rows, write_parquet

    rows = parquet_rows(the_store, registry, selected)
    report = write_parquet(rows, Path(output_file))
    out.notice(f"exported {report.runs:,} runs ({report.columns:,} columns) as Parquet to {output_file} "
               f"({report.size:,} bytes)")
    return 0


def _write(out, text: str, output_file: str) -> None:
    if output_file == "-":
        out.data(text)
        return
    from kidx.files import write_file

    write_file(output_file, text.encode("utf-8"), sync=True)


def register(app: typer.Typer) -> None:
    app.command("export", epilog=EXAMPLES)(export)

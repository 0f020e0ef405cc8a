"""kidx export [TYPE [NAME…] | TYPE/NAME… | TYPE -l SEL] -o FILE"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_selector, require_store
from kidx.cli.options import SelectorOption, StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help

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

    from kidx.operations.export.exporting import ExportRequest, check_format, export_store
    from kidx.output.reports import export_summary

    if not output_file:
        raise UsageError("must specify -o FILE (or -o - for standard output)")
    check_format(export_format, output_file)
    label_selector = parse_selector(selector)
    description = " ".join([*(arguments or []), *(["-l", selector] if selector else [])]) or "all"
    the_store = open_store(store)
    request = ExportRequest(arguments or [], label_selector, export_format, output_file, description)
    exported = export_store(the_store, kind_registry(), request, lambda: require_store(the_store, store))
    out = output()
    if exported.missing:
        from kidx.cli.common import report_missing

        return report_missing(out, exported.missing, False)
    if exported.data is not None:
        out.data(exported.data)
    if export_format == "bundle":
        from kidx.output.terminal import escape_control

        for warning in exported.report.warnings:
            out.warning(escape_control(warning))
    out.notice(export_summary(exported))
    return 0


def register(app: typer.Typer) -> None:
    app.command("export", epilog=EXAMPLES)(export)

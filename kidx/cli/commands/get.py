"""kidx get TYPE [NAME…] | TYPE/NAME… | T1,T2 | all  [-l SEL] [-o FORMAT] …"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.options import SelectorOption, StoreOption
from kidx.output.printers import output_help

OutputOption = Annotated[str | None, typer.Option("--output", "-o", help=output_help("get"))]


EXAMPLES = """\b
Examples:
  kidx get runs -l liger_version=0.6.1
  kidx get runs --references environment/liger-bench-nvidia-h100-80gb-hbm3 -o name
  kidx get runs --field-selector spec.status=failed --sort-by=-.spec.timing.latencyNs.median
  kidx get runs -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.spec.timing.latencyNs.median}{"\\n"}{end}'
  kidx get runs -o custom-columns=NAME:.metadata.name,DIGEST:.metadata.digest
  kidx get run DIGEST-PREFIX -o yaml    (a name, a digest, or its first 8+ hex digits)
  kidx get runs -l liger_version=0.6.1 -o csv > runs.csv
  kidx get runs -o csv='NAME:.metadata.name,MEDIAN_NS:.spec.timing.latencyNs.median'
"""


def get(
    arguments: Annotated[
        list[str] | None,
        typer.Argument(help="TYPE [NAME…], TYPE/NAME…, T1,T2 or all.", show_default=False),
    ] = None,
    output_format: OutputOption = None,
    selector: SelectorOption = None,
    field_selector: Annotated[
        str | None,
        typer.Option("--field-selector", help="Field selector: metadata.name=x,spec.status!=passed."),
    ] = None,
    show_labels: Annotated[bool, typer.Option("--show-labels", help="Add a LABELS column.")] = False,
    label_columns: Annotated[
        list[str] | None,
        typer.Option("--label-columns", "-L", help="Add a column per label key (repeatable, comma-separated)."),
    ] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="Omit the header row.")] = False,
    show_kind: Annotated[bool, typer.Option("--show-kind", help="Prefix names with their kind.")] = False,
    sort_by: Annotated[
        str | None,
        typer.Option("--sort-by", help="Sort by a field path; '-path' for descending; comma-separated keys."),
    ] = None,
    ignore_not_found: Annotated[
        bool,
        typer.Option("--ignore-not-found", help="Named objects that do not exist are not an error."),
    ] = False,
    references: Annotated[
        list[str] | None,
        typer.Option(
            "--references",
            help="Only objects that refer to TYPE/NAME, a digest, or TYPE:SELECTOR (repeatable: all must hold).",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Print at most N objects.", min=0)] = None,
    store: StoreOption = None,
) -> int:
    """Display one or many objects.

    Types may be spelled as plural, singular, short name or Kind (runs, run, br,
    BenchmarkRun); 'all' means every kind. An object may be named by its digest or a
    unique digest prefix of at least 8 hex digits.
    """
    from kidx.cli.everyday import run_get

    return run_get(
        arguments=arguments, output_format=output_format, selector=selector, field_selector=field_selector,
        show_labels=show_labels, label_columns=label_columns, no_headers=no_headers, show_kind=show_kind,
        sort_by=sort_by, ignore_not_found=ignore_not_found, references=references, limit=limit, store=store,
    )


def register(app: typer.Typer) -> None:
    app.command("get", epilog=EXAMPLES)(get)

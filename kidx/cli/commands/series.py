"""kidx series [NAME…] [-l SEL] [--field-selector SEL] [--label KEY] [--baseline IMPL] …"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kidx.cli.analysis_options import ANALYSIS_ERROR_EXIT, FORMATS, parse_threshold
from kidx.cli.common import SelectorOption, StoreOption, kind_registry, open_store, output, parse_field_selector, parse_selector
from kidx.errors import KidxError, UsageError

EXAMPLES = """\b
Examples:
  kidx series -l 'liger_version in (0.5.3,0.5.4)' --label liger_version --baseline transformers
  kidx series --references environment/liger-bench-nvidia-h100-pcie --label liger_version \\
      --baseline torch --fail-on-regression -o csv
"""


def series(
    names: Annotated[Optional[list[str]], typer.Argument(help="Runs (names or digests); else every run the selectors select.", show_default=False)] = None,
    selector: SelectorOption = None,
    field_selector: Annotated[Optional[str], typer.Option("--field-selector", help="Field selector, also through references.")] = None,
    references: Annotated[Optional[list[str]], typer.Option("--references", help="Only runs that refer to TYPE/NAME, a digest, or TYPE:SELECTOR (repeatable).")] = None,
    label: Annotated[Optional[str], typer.Option("--label", help="The release label to show at each point, e.g. liger_version.")] = None,
    baseline: Annotated[Optional[str], typer.Option("--baseline", help="An implementation (name or library) measured in the same sessions: show the speedup over it and its change.")] = None,
    threshold: Annotated[float, typer.Option("--threshold", help="Smallest change, in percent, that can count as faster or slower.")] = 5.0,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="Exit 1 when any point is slower than the one before.")] = False,
    output_format: Annotated[Optional[str], typer.Option("--output", "-o", help="table, json, yaml, csv or tsv.")] = None,
    store: StoreOption = None,
) -> int:
    """Follow each (protocol, workload, environment, implementation) over time.

    Points are ordered by observedAt; each shows the change from the previous point and
    whether it is significant (the rule printed with it). With --baseline, each point also
    shows the speedup over the baseline implementation measured in the same session, so a
    machine change (both moved) can be told from a kernel change. Series of a single
    point are counted, not shown. Exit status: 0 done; 1 with --fail-on-regression when a
    point is slower than the one before; 2 an error.
    """
    try:
        from kidx.operations.series import SeriesRequest, build_series

        fmt = output_format or "table"
        if fmt not in FORMATS:
            raise UsageError(f'unknown output format "{fmt}" for series: use {", ".join(FORMATS)}')
        request = SeriesRequest(
            names=list(names or ()),
            selector=parse_selector(selector),
            field_selector=parse_field_selector(field_selector),
            references=tuple(references or ()),
            label_key=label,
            baseline=baseline,
            threshold=parse_threshold(threshold),
        )
        result = build_series(open_store(store), kind_registry(), request)
    except KidxError as exc:
        exc.exit_code = ANALYSIS_ERROR_EXIT
        raise
    _print(result, fmt)
    return 1 if fail_on_regression and result.regressions else 0


def _print(result, fmt: str) -> None:
    from kidx.output import series as printed

    out = output()
    if fmt == "table":
        text = printed.render_series_table(result)
        out.data(text)
        for note in printed.series_notes(result):
            out.notice(note)
        if not text:
            out.notice("No series of two or more points found")
    elif fmt in ("json", "yaml"):
        from kidx.output.serialize import to_json, to_yaml

        document = printed.series_document(result)
        out.data(to_json(document) if fmt == "json" else to_yaml(document))
    else:
        from kidx.output.delimited import render_delimited

        out.data(render_delimited(fmt, printed.CSV_FIELDS, printed.series_rows(result)))


def register(app: typer.Typer) -> None:
    app.command("series", epilog=EXAMPLES)(series)

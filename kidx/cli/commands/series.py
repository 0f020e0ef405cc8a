"""kidx series [NAME…] [-l SEL] [--field-selector SEL] [--label KEY] [--baseline IMPL] …"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.analysis_options import (
    FieldSelectorOption,
    FormatOption,
    ReferencesOption,
    RunsArgument,
    ThresholdOption,
    analysis_errors,
    parse_format,
    parse_threshold,
    print_analysis,
)
from kidx.cli.common import SelectorOption, StoreOption, kind_registry, open_store, parse_field_selector, parse_selector

EXAMPLES = """\b
Examples:
  kidx series -l 'liger_version in (0.5.3,0.5.4)' --label liger_version --baseline transformers
  kidx series --references environment/liger-bench-nvidia-h100-pcie --label liger_version \\
      --baseline torch --fail-on-regression -o csv
"""


def series(
    names: RunsArgument = None,
    selector: SelectorOption = None,
    field_selector: FieldSelectorOption = None,
    references: ReferencesOption = None,
    label: Annotated[
        str | None, typer.Option("--label", help="The release label to show at each point, e.g. liger_version.")
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="An implementation (name or library) measured in the same sessions: "
                                        "show the speedup over it and its change."),
    ] = None,
    threshold: ThresholdOption = 5.0,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when any point is slower than the one before.")
    ] = False,
    output_format: FormatOption = None,
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
    with analysis_errors():
        from kidx.operations.series import SeriesRequest, build_series

        fmt = parse_format(output_format, "series")
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
    _print(result, fmt)
    return 1 if fail_on_regression and result.regressions else 0


def _print(result, fmt: str) -> None:
    from kidx.output import series as printed

    def notices(text: str) -> list[str]:
        return [*printed.series_notes(result), *([] if text else ["No series of two or more points found"])]

    print_analysis(
        fmt, lambda: printed.render_series_table(result), notices, lambda: printed.series_document(result),
        printed.CSV_FIELDS, lambda: printed.series_rows(result),
    )


def register(app: typer.Typer) -> None:
    app.command("series", epilog=EXAMPLES)(series)

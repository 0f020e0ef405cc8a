"""kidx compare [NAME…] [-l SEL] [--field-selector SEL] [--references REF] [--by …] [--baseline V] …"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.analysis_options import (
    FormatOption,
    ReferencesOption,
    ThresholdOption,
    analysis_errors,
    parse_by,
    parse_format,
    parse_only,
    parse_threshold,
    print_analysis,
)
from kidx.cli.common import SelectorOption, StoreOption, kind_registry, open_store, parse_field_selector, parse_selector

EXAMPLES = """\b
Examples:
  kidx compare -l kernel=llama4_rope,operation=backward,gpu=nvidia-h100-80gb-hbm3 \\
      --field-selector workload.spec.parameters.seq=16384 --baseline transformers
  kidx compare RUN-A RUN-B
  kidx compare -l 'liger_version in (0.3.0,0.3.1)' --by label=liger_version --baseline 0.3.0 \\
      --only slower --fail-on-regression
"""


def compare(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Runs to compare (names or digests); else every run the selectors select.",
                       show_default=False),
    ] = None,
    selector: SelectorOption = None,
    field_selector: Annotated[
        str | None,
        typer.Option("--field-selector",
                     help="Field selector, also through references: workload.spec.parameters.seq=16384."),
    ] = None,
    references: ReferencesOption = None,
    by: Annotated[
        str,
        typer.Option("--by", help="implementation: compare implementations within each group; "
                                  "label=KEY: compare the values of a label for each implementation."),
    ] = "implementation",
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="The baseline: an implementation (name or library), or a label value "
                                        "with --by label=KEY. Default: the earliest observed run of each group."),
    ] = None,
    threshold: ThresholdOption = 5.0,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when any run is slower than its baseline.")
    ] = False,
    only: Annotated[
        str | None,
        typer.Option("--only", help="Show only rows with these verdicts (faster, slower, same; comma-separated), "
                                    "each with its baseline."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Compare named runs even when protocol, workload or environment differ "
                                     "(every row says so)."),
    ] = False,
    output_format: FormatOption = None,
    store: StoreOption = None,
) -> int:
    """Compare runs against a baseline, only within comparable groups.

    Runs are comparable when they share protocol, workload and environment. Each row
    shows the primary statistic with its p20-p80 spread, the ratio to the baseline, the
    speedup, and a verdict (baseline, faster, slower, same) by the rule printed with it.
    Exit status: 0 done; 1 with --fail-on-regression when a row is slower; 2 an error.
    """
    with analysis_errors():
        from kidx.operations.compare import CompareRequest
        from kidx.operations.compare import compare as run_compare

        fmt = parse_format(output_format, "compare")
        request = CompareRequest(
            names=list(names or ()),
            selector=parse_selector(selector),
            field_selector=parse_field_selector(field_selector),
            references=tuple(references or ()),
            label_key=parse_by(by),
            baseline=baseline,
            threshold=parse_threshold(threshold),
            force=force,
            only=parse_only(only),
        )
        comparison = run_compare(open_store(store), kind_registry(), request)
    _print(comparison, fmt)
    return 1 if fail_on_regression and comparison.regressions else 0


def _print(comparison, fmt: str) -> None:
    from kidx.output import comparison as printed

    def notices(text: str) -> list[str]:
        nothing = "No runs found" if not comparison.groups else None if text else "Nothing compared"
        return [*printed.comparison_notes(comparison), *([nothing] if nothing else [])]

    print_analysis(
        fmt, lambda: printed.render_comparison_table(comparison), notices,
        lambda: printed.comparison_document(comparison), printed.CSV_FIELDS,
        lambda: printed.comparison_rows(comparison),
    )


def register(app: typer.Typer) -> None:
    app.command("compare", epilog=EXAMPLES)(compare)

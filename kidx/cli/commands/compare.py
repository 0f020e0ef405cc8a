"""kidx compare [NAME…] [-l SEL] [--field-selector SEL] [--references REF] [--by …] [--baseline V] …"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kidx.cli.common import SelectorOption, StoreOption, kind_registry, open_store, output, parse_field_selector, parse_selector
from kidx.cli.analysis_options import ANALYSIS_ERROR_EXIT, FORMATS, parse_by, parse_only, parse_threshold
from kidx.errors import KidxError, UsageError


EXAMPLES = """\b
Examples:
  kidx compare -l kernel=llama4_rope,operation=backward,gpu=nvidia-h100-80gb-hbm3 \\
      --field-selector workload.spec.parameters.seq=16384 --baseline transformers
  kidx compare RUN-A RUN-B
  kidx compare -l 'liger_version in (0.3.0,0.3.1)' --by label=liger_version --baseline 0.3.0 \\
      --only slower --fail-on-regression
"""


def compare(
    names: Annotated[Optional[list[str]], typer.Argument(help="Runs to compare (names or digests); else every run the selectors select.", show_default=False)] = None,
    selector: SelectorOption = None,
    field_selector: Annotated[Optional[str], typer.Option("--field-selector", help="Field selector, also through references: workload.spec.parameters.seq=16384.")] = None,
    references: Annotated[Optional[list[str]], typer.Option("--references", help="Only runs that refer to TYPE/NAME, a digest, or TYPE:SELECTOR (repeatable).")] = None,
    by: Annotated[str, typer.Option("--by", help="implementation: compare implementations within each group; label=KEY: compare the values of a label for each implementation.")] = "implementation",
    baseline: Annotated[Optional[str], typer.Option("--baseline", help="The baseline: an implementation (name or library), or a label value with --by label=KEY. Default: the earliest observed run of each group.")] = None,
    threshold: Annotated[float, typer.Option("--threshold", help="Smallest change, in percent, that can count as faster or slower.")] = 5.0,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="Exit 1 when any run is slower than its baseline.")] = False,
    only: Annotated[Optional[str], typer.Option("--only", help="Show only rows with these verdicts (faster, slower, same; comma-separated), each with its baseline.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Compare named runs even when protocol, workload or environment differ (every row says so).")] = False,
    output_format: Annotated[Optional[str], typer.Option("--output", "-o", help="table, json, yaml, csv or tsv.")] = None,
    store: StoreOption = None,
) -> int:
    """Compare runs against a baseline, only within comparable groups.

    Runs are comparable when they share protocol, workload and environment. Each row
    shows the primary statistic with its p20-p80 spread, the ratio to the baseline, the
    speedup, and a verdict (baseline, faster, slower, same) by the rule printed with it.
    Exit status: 0 done; 1 with --fail-on-regression when a row is slower; 2 an error.
    """
    try:
        from kidx.operations.compare import CompareRequest
        from kidx.operations.compare import compare as run_compare

        fmt = output_format or "table"
        if fmt not in FORMATS:
            raise UsageError(f'unknown output format "{fmt}" for compare: use {", ".join(FORMATS)}')
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
    except KidxError as exc:
        exc.exit_code = ANALYSIS_ERROR_EXIT
        raise
    _print(comparison, fmt)
    return 1 if fail_on_regression and comparison.regressions else 0


def _print(comparison, fmt: str) -> None:
    from kidx.output import comparison as printed

    out = output()
    if fmt == "table":
        text = printed.render_comparison_table(comparison)
        out.data(text)
        for note in printed.comparison_notes(comparison):
            out.notice(note)
        if not comparison.groups:
            out.notice("No runs found")
        elif not text:
            out.notice("Nothing compared")
    elif fmt in ("json", "yaml"):
        from kidx.output.serialize import to_json, to_yaml

        document = printed.comparison_document(comparison)
        out.data(to_json(document) if fmt == "json" else to_yaml(document))
    else:
        from kidx.output.delimited import render_delimited

        out.data(render_delimited(fmt, printed.CSV_FIELDS, printed.comparison_rows(comparison)))


def register(app: typer.Typer) -> None:
    app.command("compare", epilog=EXAMPLES)(compare)

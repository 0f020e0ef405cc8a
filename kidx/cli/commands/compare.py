"""kidx compare [NAME…] [-l SEL] [--field-selector SEL] [--references REF] [--by …] [--baseline V] …"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.analysis.defaults import ALPHA, DEFAULT_THRESHOLD
from kidx.analysis.significance import VERDICTS
from kidx.cli.analysis_options import (
    BY_IMPLEMENTATION,
    AllowEmptyOption,
    AlphaOption,
    FailOnInconclusiveOption,
    FormatOption,
    ReferencesOption,
    ThresholdOption,
    gated_analysis,
)
from kidx.cli.common import kind_registry, open_store
from kidx.cli.options import SelectorOption, StoreOption
from kidx.operations.analyse.aggregate import AGGREGATE_KEYS

EXAMPLES = """\b
Examples:
  kidx compare -l kernel=llama4_rope,operation=backward,gpu=nvidia-h100-80gb-hbm3 \\
      --field-selector workload.spec.parameters.seq=16384 --baseline huggingface
  kidx compare RUN-A RUN-B
  kidx compare -l 'liger_version in (0.3.0,0.3.1)' --by label=liger_version --baseline 0.3.0 \\
      --only slower --fail-on-regression
  kidx compare -l 'gpu in (nvidia-h100-80gb-hbm3,nvidia-b200)' --by label=liger_version -o markdown
  kidx compare -l gpu=nvidia-h100-80gb-hbm3 --baseline huggingface --aggregate operation
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
    ] = BY_IMPLEMENTATION,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="The baseline: an implementation (name, library, backend, provider or "
                                        "backend label), or a label value with --by label=KEY, or 'previous' with "
                                        "--by label=KEY: "
                                        "each value against the one before it in version order. Default: the "
                                        "lowest version-like label value, else the earliest observed run of each "
                                        "group."),
    ] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    alpha: AlphaOption = ALPHA,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when any row is slower than its baseline; exit 2 "
                                                        "when nothing could be judged.")
    ] = False,
    fail_on_inconclusive: FailOnInconclusiveOption = False,
    allow_empty: AllowEmptyOption = False,
    only: Annotated[
        str | None,
        typer.Option("--only", help=f"Show only rows with these verdicts ({', '.join(VERDICTS)}; comma-separated), "
                                    "each with its baseline. A verdict keeps the unconfirmed rows its way too: "
                                    "slower keeps 'unconfirmed (slower)'."),
    ] = None,
    aggregate: Annotated[
        str | None,
        typer.Option("--aggregate", help=f"Take the compared rows together per value of KEY "
                                         f"({', '.join(AGGREGATE_KEYS)}) and implementation: the configurations, "
                                         "their verdicts counted, the geometric-mean ratio (one configuration one "
                                         "vote) with its interval, and the worst; the table shows these instead of "
                                         "the rows (json, yaml and markdown carry both).",
                     metavar="KEY"),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Compare named runs even when protocol, workload or environment differ "
                                     "(every row says so)."),
    ] = False,
    metric: Annotated[
        str | None,
        typer.Option("--metric", help="Judge each run by this metric of its measurements instead of its headline "
                                      "figure: a bandwidth or throughput a latency run also measured "
                                      "(memory_bandwidth, throughput, global_memory_bandwidth); runs without it "
                                      "are left out.", metavar="METRIC"),
    ] = None,
    output_format: FormatOption = None,
    store: StoreOption = None,
) -> int:
    """Compare runs against a baseline, only within comparable groups.

    Runs are comparable when they share protocol, workload and environment. Within a
    group the runs of one implementation (or one label value) form an arm, pooled. Each
    row shows an arm's statistic with its p20-p80 spread, its runs and their spread, the
    ratio to the baseline with its confidence interval, the speedup, and a verdict
    (baseline, faster, slower, same, inconclusive, unconfirmed) by the rule printed with
    it; the summary line counts them. Exit status: 0 done; 1 with --fail-on-regression
    when a row is slower (or --fail-on-inconclusive when one is inconclusive or
    unconfirmed); 2 an error, or a gate that could not judge (unless --allow-empty).
    """
    from kidx.output.aggregates import printer_for

    def analyse():
        from kidx.api.analysis import compare_request
        from kidx.operations.analyse.compare import compare as run_compare

        request = compare_request(names or (), selector, field_selector, references or (), by, baseline, threshold,
                                  only, force, alpha, aggregate, metric=metric)
        return run_compare(open_store(store, must_exist=True), kind_registry(), request)

    return gated_analysis("compare", output_format, analyse, printer_for, lambda comparison: comparison.verdicts,
                          fail_on_regression, fail_on_inconclusive, allow_empty)


def register(app: typer.Typer) -> None:
    app.command("compare", epilog=EXAMPLES)(compare)

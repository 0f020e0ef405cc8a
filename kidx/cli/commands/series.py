"""kidx series [NAME…] [-l SEL] [--field-selector SEL] [--label KEY] [--baseline IMPL] …"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.analysis.defaults import ALPHA, DEFAULT_THRESHOLD
from kidx.cli.analysis_options import (
    AllowEmptyOption,
    AlphaOption,
    FailOnInconclusiveOption,
    FieldSelectorOption,
    FormatOption,
    ReferencesOption,
    RunsArgument,
    ThresholdOption,
    gated_analysis,
)
from kidx.cli.common import kind_registry, open_store
from kidx.cli.options import SelectorOption, StoreOption

EXAMPLES = """\b
Examples:
  kidx series -l 'liger_version in (0.5.3,0.5.4)' --label liger_version --baseline huggingface
  kidx series --references implementation/liger-jsd-liger-triton --tail 10 --fail-on-regression
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
        typer.Option("--baseline", help="An implementation (name, library, backend, provider or backend label) "
                                        "measured in the same sessions: show the speedup over it and its change."),
    ] = None,
    threshold: ThresholdOption = DEFAULT_THRESHOLD,
    alpha: AlphaOption = ALPHA,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when any point is slower than the one before, or "
                                                        "a change point moved the level the slower way (a drift of "
                                                        "small steps); exit 2 when nothing could be judged.")
    ] = False,
    fail_on_inconclusive: FailOnInconclusiveOption = False,
    allow_empty: AllowEmptyOption = False,
    tail: Annotated[
        int | None,
        typer.Option("--tail", help="Show each series' N newest points only (by observedAt), the first judged "
                                    "against the point before it; verdicts and change points are found over the "
                                    "N + 1 points read, and the --fail-on-… gates judge what is shown.",
                     metavar="N", show_default=False),
    ] = None,
    output_format: FormatOption = None,
    store: StoreOption = None,
) -> int:
    """Follow each (protocol, workload, environment, implementation) over time.

    Points are ordered by observedAt; each shows the change from the previous point and
    its verdict (the rule printed with it), and change points found over the whole series
    are listed under it with their size, p-value and cause. With --baseline, each point
    also shows the speedup over the baseline implementation measured in the same session,
    so a machine change (both moved) can be told from a kernel change. Series of a single
    point are counted, not shown. With --tail N, each series shows its N newest points,
    read with the one before the first (no more of the series is read). Exit status: 0
    done; 1 with --fail-on-regression when a shown point is slower than the one before or
    a change point moved the level the slower way (or --fail-on-inconclusive when one is
    inconclusive or unconfirmed); 2 an error, or a gate that could not judge.
    """
    from kidx.output.series import SERIES

    def analyse():
        from kidx.api.analysis import series_request
        from kidx.operations.analyse.series import build_series

        request = series_request(names or (), selector, field_selector, references or (), label, baseline,
                                 threshold, alpha, tail)
        return build_series(open_store(store, must_exist=True), kind_registry(), request)

    return gated_analysis("series", output_format, analyse, lambda result: SERIES,
                          lambda result: result.gate_verdicts, fail_on_regression, fail_on_inconclusive, allow_empty)


def register(app: typer.Typer) -> None:
    app.command("series", epilog=EXAMPLES)(series)

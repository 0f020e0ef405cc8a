"""Options shared by the analysis commands (compare, series, plot), and the gated run
that compare and series share."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer

# read the same way by the Python API (re-exported for the commands)
from kidx.api.arguments import BY_IMPLEMENTATION as BY_IMPLEMENTATION
from kidx.api.arguments import parse_alpha as parse_alpha
from kidx.api.arguments import parse_by as parse_by
from kidx.api.arguments import parse_only as parse_only
from kidx.api.arguments import parse_threshold as parse_threshold
from kidx.errors import KidxError
from kidx.output.printers import output_help

ANALYSIS_ERROR_EXIT = 2  # as kidx diff: 1 is kept for "a regression was found"

RunsArgument = Annotated[
    list[str] | None,
    typer.Argument(help="Runs (names or digests); else every run the selectors select.", show_default=False),
]
FieldSelectorOption = Annotated[
    str | None, typer.Option("--field-selector", help="Field selector, also through references.")
]
ReferencesOption = Annotated[
    list[str] | None,
    typer.Option("--references", help="Only runs that refer to TYPE/NAME, a digest, or TYPE:SELECTOR (repeatable)."),
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--threshold", help="Smallest change, in percent, that can count as faster or slower, and the ± of "
                                     "same. Default: it follows the evidence (a change from 0.5 % counts once the "
                                     "runs show it beyond their noise; same says within how much, up to 5 %).",
                 show_default=False),
]
FormatOption = Annotated[str | None, typer.Option("--output", "-o", help=output_help("compare"))]
AllowEmptyOption = Annotated[
    bool,
    typer.Option("--allow-empty", help="With --fail-on-regression or --fail-on-inconclusive: pass (exit 0) when "
                                       "nothing could be judged, instead of failing (exit 2)."),
]
FailOnInconclusiveOption = Annotated[
    bool,
    typer.Option("--fail-on-inconclusive", help="Exit 1 when any verdict is inconclusive or unconfirmed "
                                                "(for strict gates)."),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", help="Significance level of the tests; the confidence intervals are at 1 - alpha.")
]


def parse_format(value: str | None, command: str) -> str:
    from kidx.output.printers import check_output

    return check_output(command, value, "table") or "table"


@contextmanager
def analysis_errors() -> Iterator[None]:
    """Errors exit with ANALYSIS_ERROR_EXIT, so that 1 can only mean a regression."""
    try:
        yield
    except KidxError as exc:
        exc.exit_code = ANALYSIS_ERROR_EXIT
        raise


def gate(problems: Sequence[str], gating: bool, allow_empty: bool) -> None:
    """A gate fails closed: with --fail-on-… and without --allow-empty, anything that left
    it unable to judge is an error (exit 2) that says what matched nothing."""
    if gating and problems and not allow_empty:
        error = KidxError("the gate cannot judge: " + "; ".join(problems)
                          + " (--allow-empty passes when nothing could be judged)")
        error.exit_code = ANALYSIS_ERROR_EXIT
        raise error


def gated_analysis(command: str, output_format: str | None, analyse: Callable[[], Any],
                   printer: Callable[[Any], Any], verdicts: Callable[[Any], Sequence[str | None]],
                   fail_on_regression: bool, fail_on_inconclusive: bool, allow_empty: bool) -> int:
    """compare and series: ``-o`` checked, the analysis run (``analyse()``), the gate
    asked whether it could judge, the result printed with ``printer(result)``, and the exit
    status the gate gives its ``verdicts(result)``."""
    from kidx.cli.common import output
    from kidx.output.analysis_printing import print_analysis

    with analysis_errors():
        fmt = parse_format(output_format, command)
        result = analyse()
        gate(result.problems, fail_on_regression or fail_on_inconclusive, allow_empty)
    print_analysis(output(), command, result, fmt, printer(result))
    return gate_status(verdicts(result), fail_on_regression, fail_on_inconclusive)


def gate_status(verdicts: Sequence[str | None], fail_on_regression: bool, fail_on_inconclusive: bool) -> int:
    """1 when a gate's verdicts fail it, else 0."""
    from kidx.analysis.significance import REGRESSIONS, UNDECIDED

    if fail_on_regression and any(v in REGRESSIONS for v in verdicts):
        return 1
    if fail_on_inconclusive and any(v in UNDECIDED for v in verdicts):
        return 1
    return 0

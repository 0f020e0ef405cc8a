"""kidx plot --x PATH -o FILE.svg|.png|.csv [NAME…] [-l SEL] [--field-selector SEL] [--by …]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.analysis_options import BY_IMPLEMENTATION, FieldSelectorOption, ReferencesOption, RunsArgument, parse_by
from kidx.cli.common import kind_registry, open_store, output, parse_field_selector, parse_selector
from kidx.cli.options import SelectorOption, StoreOption
from kidx.errors import UsageError
from kidx.output.printers import output_help

SUFFIXES = (".svg", ".png", ".csv")
EXAMPLES = """\b
Examples:
  kidx plot --x workload.spec.parameters.seq --references environment/liger-bench-nvidia-h100-80gb-hbm3 \\
      --field-selector spec.sourceNative.benchmark=llama4_rope/backward -o llama4_rope.svg
  kidx plot --x workload.spec.parameters.vocab -l 'liger_version in (0.3.0,0.3.1)' \\
      --by label=liger_version --references implementation/liger-jsd-liger-triton -o jsd.png
  kidx plot --x workload.spec.parameters.seq --y sol --references environment/nvidia-h200-1x-2959180400 \\
      --field-selector spec.sourceNative.benchmark=llama4_rope/forward -o llama4_rope-sol.svg
"""


def plot(
    names: RunsArgument = None,
    x: Annotated[str | None, typer.Option("--x", help="The swept field, e.g. workload.spec.parameters.seq.")] = None,
    output_file: Annotated[
        str | None,
        typer.Option("--output", "-o", help=output_help("plot")),
    ] = None,
    selector: SelectorOption = None,
    field_selector: FieldSelectorOption = None,
    references: ReferencesOption = None,
    by: Annotated[
        str,
        typer.Option("--by", help="implementation: a line per implementation; label=KEY: a line per value of a label."),
    ] = BY_IMPLEMENTATION,
    title: Annotated[str | None, typer.Option("--title", help="A title over the whole figure.")] = None,
    y: Annotated[
        str,
        typer.Option("--y", help="statistic: the primary statistic; bandwidth: achieved bytes/s; flops: achieved "
                     "FLOP/s; sol: % of the GPU's published peak (runs without a known cost or peak left out)."),
    ] = "statistic",
    store: StoreOption = None,
) -> None:
    """Draw the primary statistic against a swept parameter, as Liger's visualizer does;
    or, with --y, the runs' achieved bandwidth, FLOP/s or share of the GPU's peak.

    One line per implementation (or label value), the p20-p80 band shaded, one panel per
    comparable group (same protocol and environment, workloads equal apart from --x);
    groups are never mixed in one panel.
    """
    from kidx.operations.analyse.plot import Y_CHOICES, PlotRequest, plot_data
    from kidx.query.reference_paths import parse_field_path, reference_roles

    if not x:
        raise UsageError("--x is required: the swept field, e.g. --x workload.spec.parameters.seq")
    if not output_file or not output_file.lower().endswith(SUFFIXES):
        raise UsageError("-o FILE is required, ending in .svg, .png or .csv")
    if y not in Y_CHOICES:
        raise UsageError(f"--y must be one of {', '.join(Y_CHOICES)}, not {y!r}")
    registry = kind_registry()
    request = PlotRequest(
        x=parse_field_path(x, reference_roles(registry.resolve("benchmarkruns"))),
        names=list(names or ()),
        selector=parse_selector(selector),
        field_selector=parse_field_selector(field_selector),
        references=tuple(references or ()),
        label_key=parse_by(by),
        y=y,
    )
    data = plot_data(open_store(store, must_exist=True), registry, request)
    if not data.panels:
        figure = "a figure" if y == "statistic" else f"a known --y {y}"
        raise UsageError(f"nothing to plot: no selected run has {figure} and a value at {request.x.text}")
    from kidx.operations.events import PlotWritten, PointsRepeated, RunsLeftOut
    from kidx.output.events import stderr_reporter
    from kidx.output.plot import write_plot_file

    write_plot_file(data, output_file, title)
    report = stderr_reporter(output())
    report(PlotWritten(output_file, len(data.panels), sum(len(panel.lines) for panel in data.panels),
                       sum(len(line.points) for panel in data.panels for line in panel.lines)))
    if data.repeated:
        report(PointsRepeated(data.repeated))
    if data.left_out:
        report(RunsLeftOut(len(data.left_out), y, request.x.text))


def register(app: typer.Typer) -> None:
    app.command("plot", epilog=EXAMPLES)(plot)

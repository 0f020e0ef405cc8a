"""Drawing plot data with matplotlib (the optional ``kidx[plot]`` extra), or writing its
points as csv.

One panel per comparable group; one line per implementation or label value; the p20-p80
band shaded where runs have it. SVG keeps its text as text (searchable, and testable),
and carries no creation date, so the same data draws the same file.
"""

from __future__ import annotations

from kidx.errors import KidxError, install_hint
from kidx.files import output_file, write_output
from kidx.output.columns import raw_text
from kidx.records import TYPE_CHECKING
from kidx.units import AXIS_SCALES

if TYPE_CHECKING:
    from kidx.operations.analyse.plot import Panel, PlotData

MISSING = f"kidx plot needs matplotlib: {install_hint('plot')}"
QUANTITIES = {"peak_memory": "peak memory", "memory_bandwidth": "bandwidth",
              "achieved_bandwidth": "achieved bandwidth", "achieved_flops": "achieved FLOP/s",
              "speed_of_light": "speed of light"}
POINT_FIELDS = ("panel", "protocol", "environment", "workload", "implementation", "line", "x", "value", "unit", "low",
                "high", "run")


def panel_title(panel: Panel) -> str:
    spec = panel.workload.spec or {}
    what = " ".join(str(spec[k]) for k in ("operation", "dtype") if k in spec)
    fixed = ", ".join(f"{k}={v}" for k, v in sorted(panel.fixed.items()))
    lines = [f"{panel.protocol.label} · {panel.environment.label}"]
    if panel.implementation is not None:
        lines.append(panel.implementation.label)
    if what or fixed:
        lines.append(": ".join(part for part in (what, fixed) if part))
    return "\n".join(lines)


def write_plot_file(data: PlotData, path: str, title: str | None = None) -> None:
    """The plot as ``path`` says (.csv: its points; .svg or .png: the figure), written to a
    temporary file beside it and renamed, so a failed write leaves no half a file."""
    if path.lower().endswith(".csv"):
        from kidx.output.delimited import render_delimited

        write_output(path, render_delimited("csv", POINT_FIELDS, point_rows(data)).encode("utf-8"), sync=False)
    else:
        write_plot(data, path, title)


def write_plot(data: PlotData, path: str, title: str | None = None) -> None:
    try:
        import matplotlib
    except ImportError:
        raise KidxError(MISSING) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "kidx"
    count = len(data.panels)
    columns = min(count, 3)
    rows = (count + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(6 * columns, 4.5 * rows), squeeze=False)
    for index, panel in enumerate(data.panels):
        _draw_panel(axes[index // columns][index % columns], panel, data.x.text, index + 1)
    for index in range(count, rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure_format = "svg" if path.lower().endswith(".svg") else "png"
    metadata = {"Date": None} if figure_format == "svg" else {}
    try:
        with output_file(path, sync=False) as handle:
            figure.savefig(handle, format=figure_format, metadata=metadata)
    finally:
        plt.close(figure)


# as the published site draws (kidx.publish.charts): a marker shape and a dash pattern per
# line besides its colour, so lines are told apart without colour
MARKERS = ("o", "s", "^", "D", "v", "X", "P", "*")
DASHES = ("solid", (0, (7, 4)), (0, (2, 3)), (0, (9, 3, 2, 3)), (0, (12, 5)), (0, (4, 2, 1, 2)), (0, (1, 2)),
          (0, (6, 2, 6, 6)))


def line_style(index: int) -> tuple[str, object]:
    """The marker and dash of a panel's ``index``-th line."""
    return MARKERS[index % len(MARKERS)], DASHES[index % len(DASHES)]


def _draw_panel(ax, panel, x_label: str, number: int) -> None:
    first = panel.lines[0].points[0].run.known_measure
    scale, unit = AXIS_SCALES.get(first.unit, (1, first.unit))
    what = QUANTITIES.get(first.metric, first.metric.replace("_", " "))
    for index, line in enumerate(panel.lines):
        xs = [point.x for point in line.points]
        ys = [point.run.measure.value / scale for point in line.points]
        marker, dash = line_style(index)
        drawn = ax.plot(xs, ys, marker=marker, linestyle=dash, label=line.title or line.label,
                        gid=f"panel{number}-line-{line.label}")[0]
        bands = [(p.x, p.run.measure.low, p.run.measure.high) for p in line.points if p.run.measure.low is not None]
        if len(bands) == len(line.points):
            ax.fill_between(xs, [b[1] / scale for b in bands], [b[2] / scale for b in bands],
                            alpha=0.2, color=drawn.get_color(), gid=f"panel{number}-band-{line.label}")
    xs = sorted({point.x for line in panel.lines for point in line.points})
    if len(xs) > 2 and xs[0] > 0 and xs[-1] / xs[0] >= 16:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(panel.x_label or x_label)
    ax.set_ylabel(f"{first.statistic} {what} ({unit})")
    ax.set_title(panel_title(panel), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def point_rows(data: PlotData) -> list[list[str]]:
    rows = []
    for number, panel in enumerate(data.panels, start=1):
        for line in panel.lines:
            for point in line.points:
                measure = point.run.known_measure
                cells = [number, panel.protocol.name, panel.environment.name, point.run.workload.name,
                         point.run.implementation.name, line.label, point.x, measure.value, measure.unit,
                         measure.low, measure.high, point.run.name]
                rows.append(["" if cell is None else raw_text(cell) for cell in cells])
    return rows

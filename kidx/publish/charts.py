"""Charts as SVG, laid out here rather than by a chart library in the browser: the same
store gives the same files. A chart is SVG elements as data (``kidx.publish.tree``),
which the group and series pages keep in their compressed data and the site's script
builds; ``line_chart`` writes the same chart as SVG text.

Every line has a colour, a marker shape and a dash pattern of its own, so lines can be
told apart without colour. Each point is a link to its run and carries what the hover
box shows as ``data-`` attributes (the page's script reads them; nothing is evaluated).
Every string can come from the store: it is only ever text or an attribute's value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from kidx.publish.tree import E, Element, html

# Okabe-Ito: told apart by most colour-blind readers too
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DASHES = ("", "7 4", "2 3", "9 3 2 3", "12 5", "4 2 1 2", "1 2", "6 2 6 6")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross", "plus", "star")
WIDTH, HEIGHT = 880, 420
# what a screen reader says for a point: which line, where, how much
SPOKEN = frozenset(("impl", "x", "value", "change", "host"))
_DATA = {key: f"data-{key}" for key in ("impl", "x", "value", "spread", "change", "host", "run", "digest")}  # made once
SPARK_POINTS = 30  # a sparkline shows the last this many days
LEFT, RIGHT, TOP, BOTTOM = 96, 18, 16, 56


class ChartPoint(NamedTuple):
    x: float | str
    y: float
    low: float | None
    high: float | None
    href: str
    tip: dict[str, str]  # shown on hover, in order
    ring: bool = False  # marked (a change point, a regression)
    host: bool = False  # marked with a dashed ring: the timing is likely the host's (its tip's "host" says why)


class ChartLine(NamedTuple):
    label: str
    points: list[ChartPoint]


def style(index: int) -> tuple[str, str, str]:
    return COLOURS[index % len(COLOURS)], DASHES[index % len(DASHES)], MARKERS[index % len(MARKERS)]


_STAR = [(math.sin(a * math.pi / 5) * (1.2 if a % 2 == 0 else 0.5),
          -math.cos(a * math.pi / 5) * (1.2 if a % 2 == 0 else 0.5)) for a in range(10)]


# each polygon marker's corners, in units of its size (made once: a site draws hundreds of thousands)
_CORNERS: dict[str, list[tuple[float, float]]] = {
    "triangle": [(0, -1.1), (1, 0.75), (-1, 0.75)],
    "down": [(0, 1.1), (1, -0.75), (-1, -0.75)],
    "diamond": [(0, -1.2), (1, 0), (0, 1.2), (-1, 0)],
    "cross": [(-1, -0.6), (-0.6, -1), (0, -0.4), (0.6, -1), (1, -0.6), (0.4, 0), (1, 0.6), (0.6, 1), (0, 0.4),
              (-0.6, 1), (-1, 0.6), (-0.4, 0)],
    "plus": [(-0.3, -1), (0.3, -1), (0.3, -0.3), (1, -0.3), (1, 0.3), (0.3, 0.3), (0.3, 1), (-0.3, 1),
             (-0.3, 0.3), (-1, 0.3), (-1, -0.3), (-0.3, -0.3)],
    "star": _STAR,
}


def marker(shape: str, x: float, y: float, size: float = 5.0) -> Element:
    """The SVG element of one marker centred on (x, y)."""
    s = size
    if shape == "circle":
        return E("circle", {"cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": f"{s * 0.9:.1f}"})
    if shape == "square":
        return E("rect", {"x": f"{x - s * 0.8:.1f}", "y": f"{y - s * 0.8:.1f}", "width": f"{s * 1.6:.1f}",
                          "height": f"{s * 1.6:.1f}"})
    corners = _CORNERS[shape]
    points = " ".join(f"{x + dx * s:.1f},{y + dy * s:.1f}" for dx, dy in corners)
    return E("polygon", {"points": points})


def legend_marker(index: int) -> Element:
    colour, dash, shape = style(index)
    line = {"x1": "2", "y1": "7", "x2": "42", "y2": "7", "stroke": colour, "stroke-width": "2"}
    if dash:
        line["stroke-dasharray"] = dash
    return E("svg", {"class": "key", "width": "44", "height": "14", "viewBox": "0 0 44 14", "aria-hidden": "true"},
             E("line", line), E("g", {"fill": colour}, marker(shape, 22, 7, 4)))


class _Scale:
    def __init__(self, low: float, high: float, start: float, end: float, log: bool):
        if log:
            low, high = math.log(low), math.log(high)
        if high == low:
            low, high = low - 1, high + 1
        self.low, self.high, self.start, self.end, self.log = low, high, start, end, log

    def __call__(self, value: float) -> float:
        v = math.log(value) if self.log else value
        return self.start + (v - self.low) / (self.high - self.low) * (self.end - self.start)


def doubling(values: list[float]) -> bool:
    """Whether the values grow by factors of two (or more): a log axis shows them evenly."""
    ordered = sorted(set(values))
    if len(ordered) < 3 or ordered[0] <= 0:
        return False
    return all(b / a >= 1.9 for a, b in zip(ordered, ordered[1:], strict=False))


def _nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    span = high - low or abs(high) or 1.0
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 2.5, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    first = math.floor(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        if value >= low - step * 1e-9:
            ticks.append(round(value, 12))
        value += step
    return ticks


def _log_ticks(low: float, high: float) -> list[float]:
    ticks = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10 ** exponent
            if low <= value <= high:
                ticks.append(value)
    if len(ticks) < 2:
        ticks = [low, high]
    return ticks


def _power_two_ticks(low: float, high: float) -> list[float]:
    ticks = [2.0 ** e for e in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1)
             if low <= 2.0 ** e <= high]
    while len(ticks) > 12:
        ticks = ticks[::2]
    return ticks


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"


def line_chart(lines: list[ChartLine], x_label: str, y_label: str, y_format: Callable[[float], str],
               description: str, x_names: list[str] | None = None, binary: bool = False) -> str:
    """``chart`` as SVG text ("" where nothing can be drawn)."""
    drawn = chart(lines, x_label, y_label, y_format, description, x_names, binary)
    return html(drawn) if drawn is not None else ""


def chart(lines: list[ChartLine], x_label: str, y_label: str, y_format: Callable[[float], str],
          description: str, x_names: list[str] | None = None, binary: bool = False) -> Element | None:
    """A chart of lines against x (an SVG element); ``x_names``: categorical x values, in order; ``binary``:
    y is a size in bytes, ticked at round numbers of KiB, MiB or GiB. None where no value is positive."""
    xs = [p.x for line in lines for p in line.points]
    categorical = x_names is not None or any(isinstance(x, str) for x in xs)
    if categorical and x_names is None:
        x_names = sorted({str(x) for x in xs})
    ys = [v for line in lines for p in line.points for v in (p.y, p.low, p.high) if v is not None and v > 0]
    if not ys:
        return None
    # long category names are written slanted, in room taken from the plot
    rotate = categorical and max((len(name) for name in x_names or ()), default=0) > 8
    plot_left, plot_right, plot_top, plot_bottom = LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM - (34 if rotate else 0)
    y_log = max(ys) / min(ys) > 20
    y_low, y_high = min(ys), max(ys)
    if not y_log:
        y_low, y_high = min(0.0, y_low), y_high * 1.05
    else:
        y_low, y_high = y_low / 1.15, y_high * 1.15
    y_scale = _Scale(y_low, y_high, plot_bottom, plot_top, y_log)
    if categorical:
        names = x_names or []
        index = {name: i for i, name in enumerate(names)}
        x_scale = _Scale(-0.5, len(names) - 0.5, plot_left, plot_right, False)

        def x_pos(x) -> float:
            return x_scale(index[str(x)])
        x_ticks = [(x_scale(i), name) for i, name in enumerate(names)]
        x_log = False
    else:
        numbers = [float(x) for x in xs]
        x_log = doubling(numbers)
        lo, hi = min(numbers), max(numbers)
        if x_log:
            pad = (hi / lo) ** 0.04
            x_scale = _Scale(lo / pad, hi * pad, plot_left, plot_right, True)
            ticks = _power_two_ticks(lo, hi)
        else:
            pad = (hi - lo) * 0.04 or 1
            x_scale = _Scale(lo - pad, hi + pad, plot_left, plot_right, False)
            ticks = _nice_ticks(lo, hi)

        def x_pos(x) -> float:
            return x_scale(float(x))
        x_ticks = [(x_scale(t), _number(t)) for t in ticks]
    if y_log:
        y_ticks = _log_ticks(y_low, y_high)
    else:
        unit = next((2.0 ** e for e in (40, 30, 20, 10) if y_high >= 2.0 ** e), 1.0) if binary else 1.0
        y_ticks = [t * unit for t in _nice_ticks(y_low / unit, y_high / unit)]
    grid = E("g", {"class": "grid"})
    for tick in y_ticks:
        tick_y = f"{y_scale(tick):.1f}"
        grid.append(E("line", {"x1": str(plot_left), "y1": tick_y, "x2": str(plot_right), "y2": tick_y}))
    for x, _ in x_ticks:
        grid.append(E("line", {"x1": f"{x:.1f}", "y1": str(plot_top), "x2": f"{x:.1f}", "y2": str(plot_bottom)}))
    svg = E("svg", {"class": "chart", "viewBox": f"0 0 {WIDTH} {HEIGHT}", "role": "group", "aria-label": description},
            E("title", {}, description), grid,
            E("rect", {"class": "frame", "x": str(plot_left), "y": str(plot_top), "width": str(plot_right - plot_left),
                       "height": str(plot_bottom - plot_top)}))
    labels = E("g", {"class": "ticks"})
    for tick in y_ticks:
        labels.append(E("text", {"x": str(plot_left - 8), "y": f"{y_scale(tick) + 4:.1f}", "text-anchor": "end"},
                        y_format(tick)))
    for x, name in x_ticks:
        if rotate:
            labels.append(E("text", {"x": f"{x:.1f}", "y": str(plot_bottom + 14), "text-anchor": "end",
                                     "transform": f"rotate(-20 {x:.1f} {plot_bottom + 14})"}, name))
        else:
            labels.append(E("text", {"x": f"{x:.1f}", "y": str(plot_bottom + 18), "text-anchor": "middle"}, name))
    svg.append(labels)
    axis_note = " (log₂ scale)" if x_log else ""
    svg.append(E("text", {"class": "axis", "x": f"{(plot_left + plot_right) / 2:.1f}", "y": str(HEIGHT - 8),
                          "text-anchor": "middle"}, x_label + axis_note))
    y_note = " (log scale)" if y_log else ""
    svg.append(E("text", {"class": "axis", "transform": "rotate(-90)", "x": f"{-(plot_top + plot_bottom) / 2:.1f}",
                          "y": "16", "text-anchor": "middle"}, y_label + y_note))
    for number, line in enumerate(lines):
        colour, dash, shape = style(number)
        placed = _placed(line.points, x_pos, (x_scale(1) - x_scale(0)) if categorical else 0.0)
        band = [(x, p.low, p.high) for x, p in placed if p.low is not None and p.high is not None and p.low > 0]
        group = E("g", {"class": "series", "data-line": line.label})
        if len(band) >= 2:
            upper = " ".join(f"{x:.1f},{y_scale(high):.1f}" for x, _, high in band)
            lower = " ".join(f"{x:.1f},{y_scale(low):.1f}" for x, low, _ in reversed(band))
            group.append(E("polygon", {"class": "band", "fill": colour, "points": f"{upper} {lower}"}))
        if len(placed) >= 2:
            attributes = {"class": "line", "stroke": colour}
            if dash:
                attributes["stroke-dasharray"] = dash
            attributes["points"] = " ".join(f"{x:.1f},{y_scale(p.y):.1f}" for x, p in placed)
            group.append(E("polyline", attributes))
        points = E("g", {"class": "points", "fill": colour})
        for x, p in placed:
            y = y_scale(p.y)
            attributes = {"class": "pt", "href": p.href}
            tip = p.tip
            for key, value in tip.items():
                attributes[_DATA.get(key) or f"data-{key}"] = value
            attributes["aria-label"] = " ".join([tip[key] for key in tip if key in SPOKEN and tip[key]])
            rings = []
            if p.ring:
                rings.append(E("circle", {"class": "ring", "cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": "9"}))
            if p.host:
                rings.append(E("circle", {"class": "host", "cx": f"{x:.1f}", "cy": f"{y:.1f}", "r": "12"}))
            points.append(E("a", attributes, *rings, marker(shape, x, y)))
        group.append(points)
        svg.append(group)
    return svg


def _placed(points: list[ChartPoint], x_pos: Callable[[object], float], slot: float) -> list[tuple[float, ChartPoint]]:
    """Each point's x. On a categorical axis a line's points that share a category (runs of
    one release) each get their own place across the middle half of its slot, in the
    line's order, so the line runs from one to the next rather than up and down one x."""
    if not slot:
        return [(x_pos(p.x), p) for p in points]
    counts: dict[str, int] = {}
    for p in points:
        counts[str(p.x)] = counts.get(str(p.x), 0) + 1
    seen: dict[str, int] = {}
    placed = []
    for p in points:
        key, shared = str(p.x), counts[str(p.x)]
        nth = seen[key] = seen.get(key, -1) + 1
        offset = (nth / (shared - 1) - 0.5) * slot * 0.5 if shared > 1 else 0.0
        placed.append((x_pos(p.x) + offset, p))
    return placed


def sparkline(values: list[float], width: int = 60, height: int = 20) -> str:
    """A small line of a cell's history; the last value dotted."""
    if not values:
        return ""
    values = values[-SPARK_POINTS:]
    logs = [math.log(v) for v in values]
    low, high = min(logs), max(logs)
    if high - low < 1e-9:
        low, high = low - 0.1, high + 0.1
    step = (width - 6) / max(len(values) - 1, 1)
    points = [(3 + i * step, height - 3 - (v - low) / (high - low) * (height - 6)) for i, v in enumerate(logs)]
    if len(points) == 1:
        points = [(3, points[0][1]), (width - 3, points[0][1])]
    path = " ".join(f"{x:.0f},{y:.0f}" for x, y in points)
    x, y = points[-1]
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" aria-hidden="true">'
            f'<polyline points="{path}"/><circle cx="{x:.0f}" cy="{y:.0f}" r="2.2"/></svg>')

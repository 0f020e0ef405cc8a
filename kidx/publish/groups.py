"""The group family pages: one comparable group with one workload parameter set free,
its chart (one line per implementation), its points, the ``kidx plot`` command that draws
the same chart (``hints``), and its data as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator

from kidx.output.units import quantity, short_digest, spread_text
from kidx.publish import charts
from kidx.publish.context import SiteContext, axis_format, metric_words
from kidx.publish.hints import plot_command, workload_fields
from kidx.publish.model import TITLE_SEPARATOR, Family


def group_pages(site: SiteContext) -> Iterator[tuple[str, str]]:
    fields = workload_fields(site.model.runs)
    for family in site.model.families:
        yield from _group_page(site, family, fields)


def _group_page(site: SiteContext, family: Family, fields: dict[str, set[str]]) -> Iterator[tuple[str, str]]:
    path = f"groups/{family.id}.html"
    root = "../"
    unit = family.unit
    chart_lines = []
    for line in family.lines:
        points = []
        for point in line.points:
            m = point.measure
            x = point.x if point.x != "" else family.title
            points.append(charts.ChartPoint(
                x, m.value, m.low, m.high, root + site.run_path(point.run),
                {"impl": line.label, "x": f"{family.x_label or family.x_param or ''} {x}".strip(),
                 "value": quantity(m.value, unit), "spread": spread_text(m.low, m.high, unit, " – ", ""),
                 "run": point.run.name, "digest": short_digest(point.run.manifest["metadata"]["digest"])}))
        chart_lines.append(charts.ChartLine(line.label, points))
    words = metric_words(family.metric)
    x_label = family.x_label or family.x_param or "workload"
    description = (f"{words} of {family.title} against {x_label}, one line per implementation, "
                   f"on {family.environment.label}")
    x_names = [family.title] if family.x_param is None else None
    better = "lower is better" if family.lower_is_better else "higher is better"
    svg = charts.line_chart(chart_lines, x_label, f"{words} ({better})", axis_format(unit), description, x_names,
                            binary=unit == "B")
    table = []
    for number, line in enumerate(family.lines):
        for point in line.points:
            m = point.measure
            table.append({
                "line": line, "number": number, "x": point.x, "value": quantity(m.value, unit),
                "spread": spread_text(m.low, m.high, unit, " – ", ""),
                "run": point.run, "href": root + site.run_path(point.run),
                "series": site.series_of_run.get(point.run.name),
            })
    legend = [{"label": line.label, "marker": charts.legend_marker(number), "baseline": line.baseline,
               "implementation": line.implementation} for number, line in enumerate(family.lines)]
    kernel, _, shape = family.title.partition(TITLE_SEPARATOR)
    yield site.page("group.html", path, family=family, svg=svg, kernel=kernel, shape=shape, legend=legend,
                    table=table, protocol_title=site.title(family.protocol),
                    environment_title=site.title(family.environment),
                    environment_href=site.environment_href(family.environment, root),
                    quantity=words, x_label=x_label,
                    plot_command=plot_command(family, site.request, fields))
    data = {
        "title": family.title, "protocol": family.protocol.name, "environment": family.environment.name,
        "x": {"parameter": family.x_param, "label": family.x_label}, "metric": family.metric, "unit": family.unit,
        "lines": [{"implementation": line.implementation.name, "label": line.label, "baseline": line.baseline,
                   "points": [{"x": p.x, "value": p.measure.value, "low": p.measure.low, "high": p.measure.high,
                               "run": p.run.name, "digest": p.run.manifest["metadata"]["digest"]}
                              for p in line.points]} for line in family.lines],
    }
    yield f"groups/{family.id}.json", json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"

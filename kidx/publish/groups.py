"""The group family pages: one comparable group with one workload parameter set free,
its chart (one line per implementation), its points and the ``kidx plot`` command that
draws the same chart (``hints``); many families to a page (``sections``), each drawn by
the site's script from the page's data, which holds its points too."""

from __future__ import annotations

from collections.abc import Callable

from kidx.output.units import short_digest
from kidx.publish import charts
from kidx.publish.context import HOST_NOTE, SiteContext, axis_format, host_mark, host_notes, metric_words, series_path
from kidx.publish.hints import plot_command, workload_fields
from kidx.publish.model import TITLE_SEPARATOR, Family
from kidx.publish.sections import Section, shard_jobs
from kidx.publish.tree import E
from kidx.units import BYTES

ROOT = "../"  # from a page of groups/ to the site's root


def group_pages(site: SiteContext) -> list[Callable[[], list[tuple[str, str]]]]:
    """A job (``workers``) per page of ``groups/``."""
    fields = workload_fields(site.model.runs)
    families = sorted(site.model.families, key=lambda family: family.id)
    commands: dict = {}  # the plot commands' field selectors, made once per workload and axis (in each process)
    return shard_jobs(site, "groups", "group families", ((family.id, family) for family in families),
                      lambda family: _group_section(site, family, fields, commands))


def _group_section(site: SiteContext, family: Family, fields: dict[str, set[str]], commands: dict) -> Section:
    root = ROOT
    unit = family.unit
    chart_lines = []
    rows = []
    for line in family.lines:
        points = []
        for point in line.points:
            m = point.measure
            x = point.x if point.x != "" else family.title
            value, spread = site.figures(point.run, unit)
            href = root + site.run_path(point.run)
            host = site.host.get(point.run.name)
            tip = {"impl": line.label, "x": f"{family.x_label or family.x_param or ''} {x}".strip(),
                   "value": value, "spread": spread}
            if host:
                tip["host"] = host
            tip.update(run=point.run.name, digest=short_digest(point.run.manifest["metadata"]["digest"]))
            points.append(charts.ChartPoint(x, m.value, m.low, m.high, href, tip, host=bool(host)))
            series = site.series_of_run.get(point.run.name)
            rows.append(E("tr", {}, E("td", {}, line.label), E("td", {"class": "num"}, str(point.x)),
                          E("td", {"class": "num"}, value, " " if host else None, host_mark(host) if host else None),
                          E("td", {"class": "num"}, spread),
                          E("td", {}, E("a", {"href": href}, point.run.name)),
                          E("td", {}, E("a", {"href": root + series_path(series)}, "over time") if series else None)))
        chart_lines.append(charts.ChartLine(line.label, points))
    words = metric_words(family.metric)
    x_label = family.x_label or family.x_param or "workload"
    marked = [(line.label, f"{x_label} {point.x}" if point.x != "" else family.title, point.run)
              for line in family.lines for point in line.points if point.run.name in site.host]
    description = (f"{words} of {family.title} against {x_label}, one line per implementation, "
                   f"on {family.environment.label}")
    x_names = [family.title] if family.x_param is None else None
    better = "lower is better" if family.lower_is_better else "higher is better"
    svg = charts.chart(chart_lines, x_label, f"{words} ({better})", axis_format(unit), description, x_names,
                       binary=unit == BYTES)
    legend = E("ul", {"class": "legend"}, *(
        E("li", {}, charts.legend_marker(number), " " + line.label, " " if line.baseline else None,
          E("em", {}, "(baseline)") if line.baseline else None)
        for number, line in enumerate(family.lines)))
    kernel, _, shape = family.title.partition(TITLE_SEPARATOR)
    environment_title = site.title(family.environment)
    environment_href = site.environment_href(family.environment, root)
    command = plot_command(family, site.request, fields, commands)
    headings = ["implementation", x_label, words, "p20 – p80", "run", "series"]
    body = E(
        "div", {"class": "section"},
        E("p", {"class": "crumbs"}, E("a", {"href": root + "index.html"}, "Index"), " › group family"),
        E("h1", {}, kernel, " " if shape else None, E("small", {}, shape) if shape else None),
        E("p", {"class": "lede"}, f"{site.title(family.protocol)} · ",
          E("a", {"href": environment_href}, environment_title) if environment_href else environment_title,
          f" · {words} against {x_label} · {family.runs} runs, the latest observation of each point drawn; "
          "bands: p20–p80" + ("; " + HOST_NOTE if marked else ".")),
        legend,
        E("figure", {"class": "chartbox"}, svg),
        E("h2", {}, "Points"),
        E("div", {"class": "scroll"}, E("table", {"class": "points"},
                                        E("thead", {}, E("tr", {}, *(E("th", {"scope": "col"}, h) for h in headings))),
                                        E("tbody", {}, *rows))),
        host_notes(site, marked),
        E("p", {"class": "cli"}, "In the CLI: ", E("code", {}, command)) if command else None,
    )
    data = {
        "title": family.title, "protocol": family.protocol.name, "environment": family.environment.name,
        "x": {"parameter": family.x_param, "label": family.x_label}, "metric": family.metric, "unit": family.unit,
        "lines": [{"implementation": line.implementation.name, "label": line.label, "baseline": line.baseline,
                   "points": [{"x": p.x, "value": p.measure.value, "low": p.measure.low, "high": p.measure.high,
                               "run": p.run.name, "digest": p.run.manifest["metadata"]["digest"],
                               **({"host": site.host[p.run.name]} if p.run.name in site.host else {})}
                              for p in line.points]} for line in family.lines],
    }
    return Section(family.id, family.title, body, data)

"""The group family pages: one comparable group with one workload parameter set free,
its chart (one line per implementation), its points, the ``kidx plot`` command that draws
the same chart, and its data as JSON."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator

from kidx.operations.analysed_runs import AnalysedRun, Referenced
from kidx.output.units import quantity, short_digest, spread_text
from kidx.publish import charts
from kidx.publish.context import PublishRequest, SiteContext, axis_format, metric_words
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


def _reference_argument(role: str, referenced: Referenced) -> str:
    return f"{role}/{referenced.name}" if referenced.name is not None else referenced.digest or ""


def _scalar_terms(prefix: str, value, terms: list) -> bool:
    """``prefix.key=value`` for every scalar under ``value``; False where one cannot be
    selected on (a list, or a key that is not a field name)."""
    from kidx.query.field_selector import FieldRequirement, FieldSelectorError
    from kidx.store.catalog import scalar_text

    if isinstance(value, dict):
        return all(_scalar_terms(f"{prefix}.{key}", item, terms) for key, item in sorted(value.items()))
    text = scalar_text(value)
    if text is None:
        return False
    try:
        terms.append(FieldRequirement(prefix, "=", text))
    except FieldSelectorError:
        return False
    return True


def workload_fields(runs: list[AnalysedRun]) -> dict[str, set[str]]:
    """Per operation, the field selector paths of every scalar its workloads have."""
    fields: dict[str, set[str]] = {}
    seen: set = set()
    for run in runs:
        if run.workload.digest in seen:
            continue
        seen.add(run.workload.digest)
        terms: list = []
        _scalar_terms("workload.spec", run.workload.spec or {}, terms)
        fields.setdefault(str((run.workload.spec or {}).get("operation")), set()).update(t.field for t in terms)
    return fields


def plot_command(family: Family, request: PublishRequest, fields: dict[str, set[str]]) -> str | None:
    """The ``kidx plot`` command that draws a group page's chart: the published selection,
    narrowed to the family's protocol, environment and workloads (every workload field
    but the swept parameter, and ``FIELD=`` for the fields other workloads of its
    operation have and its own lack); None where plot cannot draw it (no numeric swept
    parameter, or a workload field a field selector cannot name)."""
    from kidx.query.field_selector import FieldRequirement, FieldSelector

    spec = dict(family.lines[0].points[0].run.workload.spec or {})
    spec.pop("key", None)  # a text form of the parameters: it varies with the swept one
    parameters = dict(spec.get("parameters") or {})
    x = family.x_param
    if x is None:  # one workload: any numeric parameter serves as the axis
        x = next((name for name, value in sorted(parameters.items()) if _plottable(value)), None)
    elif not all(_plottable(point.x) for line in family.lines for point in line.points):
        return None
    if x is None:
        return None
    parameters.pop(x, None)
    spec["parameters"] = parameters
    terms: list = []
    if not _scalar_terms("workload.spec", spec, terms) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x):
        return None
    named = {term.field for term in terms} | {f"workload.spec.parameters.{x}", "workload.spec.key"}
    others = fields.get(str(spec.get("operation")), set()) - named
    terms += [FieldRequirement(field, "=", "") for field in sorted(others)]
    if isinstance(request.field_selector, FieldSelector):
        terms.extend(request.field_selector.requirements)
    arguments = ["kidx", "plot", "--x", f"workload.spec.parameters.{x}", *request.names]
    if request.selector is not None:
        arguments += ["-l", str(request.selector)]
    arguments += ["--field-selector", str(FieldSelector(sorted(terms, key=str)))]
    for reference in (*request.references, _reference_argument("protocol", family.protocol),
                      _reference_argument("environment", family.environment)):
        arguments += ["--references", reference]
    return shlex.join([*arguments, "-o", "chart.svg"])


def _plottable(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

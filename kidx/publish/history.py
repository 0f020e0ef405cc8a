"""The site's pages over time: a series page per comparable group (each implementation's
points over releases or time, judged as ``kidx series`` judges them, with its change
points and their causes) and the regressions page (each series' latest step)."""

from __future__ import annotations

from collections.abc import Iterator

from kidx.analysis.significance import FASTER, SEVERITY, SLOWER
from kidx.operations.analysed_runs import AnalysedRun
from kidx.operations.series import Series
from kidx.output.comparison import verdict_text
from kidx.output.units import quantity, short_digest, spread_text
from kidx.publish import charts
from kidx.publish.context import PublishRequest, SiteContext, axis_format, metric_words, version_order
from kidx.publish.hints import regressions_command, series_command
from kidx.publish.model import line_label


def series_pages(site: SiteContext) -> Iterator[tuple[str, str]]:
    groups: dict[tuple, list[AnalysedRun]] = {}  # every published run of a comparable group, for its baseline
    for run in site.model.runs:
        groups.setdefault((run.protocol.digest, run.workload.digest, run.environment.digest), []).append(run)
    for pid, members in sorted(site.series_pages.items()):
        first = members[0]
        environments = list({point.run.environment.digest: point.run.environment
                             for one in members for point in one.points}.values())
        group = [run for environment in environments
                 for run in groups.get((first.protocol.digest, first.workload.digest, environment.digest), [])]
        cli = series_command(site.request, first.protocol, first.workload, environments, group)
        yield _series_page(site, pid, members, cli)


def _series_page(site: SiteContext, pid: str, members: list[Series], cli: str | None) -> tuple[str, str]:
    path = f"series/{pid}.html"
    root = "../"
    first = members[0]
    unit = first.points[0].run.known_measure.unit
    steps: dict[str, str] = {}
    for one in members:
        for point in one.points:
            step = site.step(point)
            if step not in steps or point.run.observed < steps[step]:
                steps[step] = point.run.observed
    order = sorted(steps, key=lambda s: (steps[s], s))
    chart_lines, tables = [], []
    title = site.title(first.workload)
    for number, one in enumerate(members):
        label = line_label(one.implementation, site.titles.get(one.implementation.digest or ""), title)
        # the change points kidx series finds, each with what differs on either side of it
        shifts = {shift.run.name: shift for shift in one.changes}
        points, rows = [], []
        for point in one.points:
            m = point.run.known_measure
            shift = shifts.get(point.run.name)
            change = (f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change is not None else "")
            points.append(charts.ChartPoint(
                site.step(point), m.value, m.low, m.high, root + site.run_path(point.run),
                {"impl": label, "x": site.step(point), "value": quantity(m.value, unit),
                 "spread": spread_text(m.low, m.high, unit, " – ", ""),
                 "change": (f"{change} ({point.verdict})" if point.verdict else "")
                 + (f"; change point {shift.point.change * 100:+.1f}%: {'; '.join(shift.cause)}" if shift else ""),
                 "run": point.run.name, "digest": short_digest(point.run.manifest["metadata"]["digest"])},
                ring=point.verdict == SLOWER or shift is not None))
            rows.append({"point": point, "step": site.step(point), "value": quantity(m.value, unit),
                         "verdict": verdict_text(point.verdict, point.change),
                         "change": change, "href": root + site.run_path(point.run),
                         "cause": "; ".join(shift.cause) if shift else _cause(site.request, point, one),
                         "shift": f"{shift.point.change * 100:+.1f}%" if shift else ""})
        chart_lines.append(charts.ChartLine(label, points))
        changes = [{"step": site.step(next(p for p in one.points if p.run.name == name)),
                    "change": f"{shift.point.change * 100:+.1f}%", "p": f"{shift.point.p_value:.2g}",
                    "cause": "; ".join(shift.cause), "before": root + site.run_path(shift.before),
                    "after": root + site.run_path(shift.run)} for name, shift in shifts.items()]
        tables.append({"series": one, "label": label, "rows": rows, "marker": charts.legend_marker(number),
                       "changes": changes})
    words = metric_words(first.points[0].run.known_measure.metric)
    axis = site.request.release_label or "observed"
    description = f"{words} of {title} over {axis}, one line per implementation"
    svg = charts.line_chart(chart_lines, axis, words, axis_format(unit), description, order,
                            binary=unit == "B")
    family = site.family_of_run.get(first.points[-1].run.name)
    return site.page("series.html", path, title=title, svg=svg, tables=tables, first=first,
                     protocol_title=site.title(first.protocol), environment_title=site.title(first.environment),
                     environment_href=site.environment_href(first.environment, root),
                     family_href=f"{root}groups/{family.id}.html" if family else "", axis=axis,
                     cli=cli,
                     memory=first.points[0].run.known_measure.metric == "peak_memory")

def _cause(request: PublishRequest, point, one: Series) -> str:
    """What changed between a point and the one before it, as far as the runs say."""
    if point.change is None:
        return ""
    index = one.points.index(point)
    before = one.points[index - 1]
    causes = []
    if request.release_label and point.label != before.label:
        causes.append(f"{request.release_label} {before.label} → {point.label}")
    if point.speedup_change is not None and abs(point.speedup_change) >= request.threshold:
        causes.append(f"speedup over the baseline {point.speedup_change * 100:+.1f}%")
    elif point.speedup_change is not None and point.verdict in (SLOWER, FASTER):
        causes.append("the baseline moved too: the machine, not the kernel")
    return "; ".join(causes)

# regressions ----------------------------------------------------------------------
def regressions_page(site: SiteContext, limit: int) -> tuple[str, str]:
    label = site.request.release_label
    rows: list[dict] = []
    for pid, members in site.series_pages.items():
        for one in members:
            steps = [(i, p) for i, p in enumerate(one.points)
                     if p.change is not None and (label is None or p.label != one.points[i - 1].label)]
            if not steps:
                continue
            index, point = steps[-1]
            before = one.points[index - 1]
            unit = point.run.known_measure.unit
            rows.append({
                "verdict": point.verdict, "ratio": point.change.ratio if point.change else 1.0,
                "title": site.title(one.workload), "implementation": site.title(one.implementation),
                "environment": one.environment.label, "protocol": site.title(one.protocol),
                "from": before.label if label else before.run.observed[:10],
                "to": point.label if label else point.run.observed[:10],
                "before": quantity(before.run.known_measure.value, unit),
                "after": quantity(point.run.known_measure.value, unit),
                "change": f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change else "",
                "href": f"series/{pid}.html", "run": "" + site.run_path(point.run),
            })
    rows.sort(key=lambda r: (_severity(r["verdict"]), -r["ratio"], r["title"], r["implementation"],
                             r["environment"], r["href"]))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["verdict"] or ""] = counts.get(row["verdict"] or "", 0) + 1
    left = rows[limit:]
    unlisted = [(verdict, sum(1 for r in left if r["verdict"] == verdict)) for verdict in counts]

    def by_order(pair: tuple[str, int]) -> tuple:
        return _severity(pair[0]), pair[0]

    releases = sorted({run.labels[label] for run in site.model.runs if label in run.labels} if label else (),
                      key=version_order)
    return site.page("regressions.html", "regressions.html", rows=rows[:limit], release_label=label,
                     cli=regressions_command(site.request, releases),
                     counts=sorted(counts.items(), key=by_order),
                     unlisted=sorted(((v, n) for v, n in unlisted if n), key=by_order), total=len(rows))


def _severity(verdict: str | None) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)

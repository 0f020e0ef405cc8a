"""The site's pages over time: a series page per comparable group (each implementation's
points over releases or time, judged as ``kidx series`` judges them, with its change
points and their causes) and the regressions page (each series' latest step)."""

from __future__ import annotations

from collections.abc import Callable

from kidx.analysis.significance import BASELINE, FASTER, SEVERITY, SLOWER, counted_change
from kidx.operations.analyse.compare import Comparison
from kidx.operations.analyse.series import Series
from kidx.operations.select.analysed_runs import AnalysedRun
from kidx.output.comparison import summary_text, verdict_cell, verdict_text
from kidx.output.units import quantity, short_digest
from kidx.publish import charts
from kidx.publish.context import (
    HOST_NOTE,
    PublishRequest,
    SiteContext,
    axis_format,
    group_path,
    host_mark,
    host_notes,
    metric_words,
    series_path,
)
from kidx.publish.hints import regressions_command, series_command
from kidx.publish.model import line_label
from kidx.publish.sections import Section, shard_jobs
from kidx.publish.tree import E
from kidx.units import BYTES


def series_pages(site: SiteContext) -> list[Callable[[], list[tuple[str, str]]]]:
    """A job (``workers``) per page of ``series/``."""
    groups: dict[tuple, list[AnalysedRun]] = {}  # every published run of a comparable group, for its baseline
    for run in site.model.runs:
        groups.setdefault((run.protocol.digest, run.workload.digest, run.environment.digest), []).append(run)
    pages = sorted(site.series_pages.items())
    return shard_jobs(site, "series", "series", ((pid, (pid, members)) for pid, members in pages),
                      lambda item: _series_of_page(site, groups, *item))


def _series_of_page(site: SiteContext, groups: dict[tuple, list[AnalysedRun]], pid: str,
                    members: list[Series]) -> Section:
    first = members[0]
    environments = list({point.run.environment.digest: point.run.environment
                         for one in members for point in one.points}.values())
    group = [run for environment in environments
             for run in groups.get((first.protocol.digest, first.workload.digest, environment.digest), [])]
    cli = series_command(site.request, first.protocol, first.workload, environments, group)
    return _series_section(site, pid, members, cli)


def _series_section(site: SiteContext, pid: str, members: list[Series], cli: str | None) -> Section:
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
    chart_lines, legend, tables = [], [], []
    marked: list[tuple] = []  # the points whose timing is likely the host's: (line, step, run)
    title = site.title(first.workload)
    memory = first.points[0].run.known_measure.metric == "peak_memory"
    axis = site.request.release_label or "observed"
    headings = [axis, "observed", "value", "change", "verdict", "change point",
                "reduction" if memory else "speedup", "cause", "run"]
    head = E("thead", {}, E("tr", {}, *(E("th", {"scope": "col"}, h) for h in headings)))  # every line's table's
    for number, one in enumerate(members):
        label = line_label(one.implementation, site.titles.get(one.implementation.digest or ""), title)
        # the change points kidx series finds, each with what differs on either side of it
        shifts = {shift.run.name: shift for shift in one.changes}
        points, rows = [], []
        for point in one.points:
            m = point.run.known_measure
            shift = shifts.get(point.run.name)
            change = (f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change is not None else "")
            step = site.step(point)
            value, spread = site.figures(point.run, unit)
            href = root + site.run_path(point.run)
            host = site.host.get(point.run.name)
            tip = {"impl": label, "x": step, "value": value, "spread": spread,
                   "change": (f"{change} ({point.verdict})" if point.verdict else "")
                   + (f"; change point {shift.point.change * 100:+.1f}%: {'; '.join(shift.cause)}" if shift else "")}
            if host:
                tip["host"] = host
                marked.append((label, step, point.run))
            tip.update(run=point.run.name, digest=short_digest(point.run.manifest["metadata"]["digest"]))
            points.append(charts.ChartPoint(step, m.value, m.low, m.high, href, tip,
                                            ring=point.verdict == SLOWER or shift is not None, host=bool(host)))
            rows.append(E(
                "tr", {"class": f"verdict-{point.verdict or 'first'}"}, E("td", {}, step),
                E("td", {}, point.run.observed),
                E("td", {"class": "num"}, value, " " if host else None, host_mark(host) if host else None),
                E("td", {"class": "num"}, change), E("td", {}, verdict_cell(point.verdict, point.change)),
                E("td", {"class": "num"}, f"{shift.point.change * 100:+.1f}%" if shift else ""),
                E("td", {"class": "num"}, f"{point.speedup:.2f}×" if point.speedup else ""),
                E("td", {}, "; ".join(shift.cause) if shift else _cause(site.request, point, one)),
                E("td", {}, E("a", {"href": href}, point.run.name))))
        chart_lines.append(charts.ChartLine(label, points))
        marker = charts.legend_marker(number)
        legend.append(E("li", {}, marker, " " + label))
        tables += [E("h2", {}, marker, " " + label),
                   E("div", {"class": "scroll"}, E("table", {"class": "points"},
                     head, E("tbody", {}, *rows)))]
        changes = [E("li", {}, E("strong", {}, "Change point at "
                                 + site.step(next(p for p in one.points if p.run.name == name))),
                     f": the level moved {shift.point.change * 100:+.1f}% (p = {shift.point.p_value:.2g}); "
                     f"cause: {'; '.join(shift.cause)} · ",
                     E("a", {"href": root + site.run_path(shift.before)}, "run before"), " · ",
                     E("a", {"href": root + site.run_path(shift.run)}, "run after"))
                   for name, shift in shifts.items()]
        if changes:
            tables.append(E("ul", {"class": "changes"}, *changes))
    words = metric_words(first.points[0].run.known_measure.metric)
    description = f"{words} of {title} over {axis}, one line per implementation"
    svg = charts.chart(chart_lines, axis, words, axis_format(unit), description, order, binary=unit == BYTES)
    family = site.family_of_run.get(first.points[-1].run.name)
    environment_title = site.title(first.environment)
    environment_href = site.environment_href(first.environment, root)
    crumbs = E("p", {"class": "crumbs"}, E("a", {"href": root + "index.html"}, "Index"))
    if family:
        crumbs += [" › ", E("a", {"href": root + group_path(family.id)}, "group family")]
    crumbs.append(" › series")
    body = E(
        "div", {"class": "section"}, crumbs, E("h1", {}, title),
        E("p", {"class": "lede"}, f"{site.title(first.protocol)} · ",
          E("a", {"href": environment_href}, environment_title) if environment_href else environment_title,
          f" · each implementation over {axis}; each point is judged against the one before it; a ringed point "
          "is slower, or a change point (where the level moved), with its cause below"
          + ("; " + HOST_NOTE if marked else ".")),
        E("ul", {"class": "legend"}, *legend), E("figure", {"class": "chartbox"}, svg), *tables,
        host_notes(site, marked),
        E("p", {"class": "cli"}, "In the CLI: ", E("code", {}, cli)) if cli else None)
    return Section(pid, f"{title} over time", body)


def _cause(request: PublishRequest, point, one: Series) -> str:
    """What changed between a point and the one before it, as far as the runs say."""
    if point.change is None:
        return ""
    index = one.points.index(point)
    before = one.points[index - 1]
    causes = []
    if request.release_label and point.label != before.label:
        causes.append(f"{request.release_label} {before.label} → {point.label}")
    if point.speedup_change is not None and abs(point.speedup_change) >= counted_change(request.threshold):
        causes.append(f"speedup over the baseline {point.speedup_change * 100:+.1f}%")
    elif point.speedup_change is not None and point.verdict in (SLOWER, FASTER):
        causes.append("the baseline moved too: the machine, not the kernel")
    return "; ".join(causes)

# regressions ----------------------------------------------------------------------
def regressions_page(site: SiteContext, limit: int) -> tuple[str, str]:
    """With ``--release-label``: compare's rows of each release against the one before it
    that got slower, confirmed or not (``hints.regressions_request``, worked out by
    ``site.publish``), as the page's "In the CLI" command prints them; without it, each
    series' latest step, judged as ``kidx series`` judges it."""
    label = site.request.release_label
    comparison = site.regressions
    if comparison is not None:
        rows, counts = _compared_rows(site, comparison)
    else:
        rows, counts = _series_rows(site, label)
    rows.sort(key=lambda r: (_severity(r["verdict"]), -r["ratio"], r["title"], r["implementation"],
                             r["environment"], r["from"], r["href"]))
    left = rows[limit:]
    unlisted: dict[str, int] = {}
    for row in left:
        unlisted[row["text"]] = unlisted.get(row["text"], 0) + 1

    def by_order(pair: tuple[str, int]) -> tuple:
        word = pair[0].split(" (")[0]
        return _severity(word or None), pair[0]

    judged = comparison is not None and bool(counts)
    listed: dict[str, int] = {}  # compare's rows by verdict as printed (the series' counts are those already)
    for row in rows:
        listed[row["text"]] = listed.get(row["text"], 0) + 1
    return site.page("regressions.html", "regressions.html", rows=rows[:limit], release_label=label,
                     compared=comparison is not None, summary=summary_text(counts),
                     cli=regressions_command(site.request) if judged else None,
                     counts=sorted((listed if comparison is not None else counts).items(), key=by_order),
                     unlisted=sorted(unlisted.items(), key=by_order), total=len(rows),
                     judged=sum(counts.values()))


def _compared_rows(site: SiteContext, comparison: Comparison) -> tuple[list[dict], dict[str, int]]:
    """The rows compare shows (``--only slower``), and every row it judged, counted by verdict."""
    counts: dict[str, int] = {}
    for verdict in comparison.verdicts:
        if verdict not in (None, BASELINE):
            counts[verdict] = counts.get(verdict, 0) + 1
    rows = []
    for group in comparison.groups:
        for row in group.rows:
            if row.judgement is None or row.against is None:
                continue
            unit = row.measure.unit
            pid = site.series_of_run.get(row.run.name)
            rows.append({
                "verdict": row.verdict, "text": verdict_text(row.verdict, row.judgement),
                "cell": verdict_cell(row.verdict, row.judgement),
                "ratio": row.judgement.ratio, "change": f"{(row.judgement.ratio - 1) * 100:+.1f}%",
                "title": site.title(group.workload),
                "implementation": site.title(group.implementation) if group.implementation else "",
                "environment": group.environment.label, "protocol": site.title(group.protocol),
                "from": row.against.label or "", "to": row.label or "",
                "before": quantity(row.against.measure.value, unit), "after": quantity(row.measure.value, unit),
                "href": series_path(pid) if pid else "", "run": site.run_path(row.run), "name": row.run.name,
            })
    return rows, counts


def _series_rows(site: SiteContext, label: str | None) -> tuple[list[dict], dict[str, int]]:
    """Each series' latest step (from one release to the next, with a release label), and
    the steps counted by verdict as printed."""
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
                "verdict": point.verdict, "text": verdict_text(point.verdict, point.change),
                "cell": verdict_cell(point.verdict, point.change),
                "ratio": point.change.ratio if point.change else 1.0,
                "title": site.title(one.workload), "implementation": site.title(one.implementation),
                "environment": one.environment.label, "protocol": site.title(one.protocol),
                "from": before.label if label else before.run.observed[:10],
                "to": point.label if label else point.run.observed[:10],
                "before": quantity(before.run.known_measure.value, unit),
                "after": quantity(point.run.known_measure.value, unit),
                "change": f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change else "",
                "href": series_path(pid), "run": site.run_path(point.run), "name": point.run.name,
            })
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["text"]] = counts.get(row["text"], 0) + 1
    return rows, counts


def _severity(verdict: str | None) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)

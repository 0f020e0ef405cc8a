"""``kidx publish``: the pages of a static site of the index, from the selected runs.

The selection is read once through the analysis operations (as ``compare``, ``series``
and ``plot`` read it); the pages are rendered with Jinja2, which escapes every value, and
the runs' sections by ``run_shards`` (a large store has a hundred thousand), through the same
``escape``; ``files.SiteFolder`` writes only what changed. No page carries a build
time: the "data as of" line is the latest ``creationTimestamp`` among the runs shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import jinja2  # kidx[publish]; kidx.publish.require_jinja says so when it is missing

from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD, rule_text
from kidx.operations.analysed_runs import AnalysedRun, Referenced, run_reference_fields
from kidx.operations.series import Series, SeriesRequest, build_series
from kidx.output.units import byte_size, nanoseconds, short_digest
from kidx.publish import charts
from kidx.publish.files import SiteFolder
from kidx.publish.model import (
    TITLE_SEPARATOR,
    Family,
    SiteModel,
    Summary,
    build_model,
    digest_hex,
    line_label,
    page_id,
    short_titles,
    summary,
)

ASSETS = ("site.css", "site.js")
ROLES = ("protocol", "workload", "environment", "implementation")
RUN_SHARD = 3  # hex digits: 4,096 run pages at most
REGRESSION_ROWS = 1000  # the regressions page lists this many steps, slower first
# every path a page can have (files.SiteFolder removes only these, never a hidden path or another file)
LAYOUT_FOLDERS = ("assets", "environments", "groups", "kernels", "runs", "series")
LAYOUT = re.compile(r"(?:index|regressions)\.html|assets/site\.(?:css|js)|runs/[0-9a-f]{" + str(RUN_SHARD) + r"}\.html"
                    r"|environments/[0-9a-f]{64}\.html|groups/[0-9a-f]{16}\.(?:html|json)"
                    r"|(?:kernels|series)/[0-9a-f]{16}\.html")
REFERENCED_KINDS = ("BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation")


class PublishRequest(NamedTuple):
    folder: Path
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    title: str = "Kernel benchmarks"
    base_url: str | None = None
    baselines: tuple[str, ...] = ()
    release_label: str | None = None
    dry_run: bool = False
    threshold: float = DEFAULT_THRESHOLD  # the verdict rule's (kidx.analysis.significance), for cells and series
    alpha: float = ALPHA


class PublishReport(NamedTuple):
    pages: int
    written: list[str]
    unchanged: int
    removed: list[str]
    runs: int
    families: int
    series: int


def publish(store, registry, request: PublishRequest) -> PublishReport:
    jinja = _jinja()
    folder = SiteFolder(request.folder, LAYOUT, LAYOUT_FOLDERS, request.dry_run)
    # the series read the selection: every page is made from the runs they read
    series = build_series(store, registry, SeriesRequest(
        names=request.names, selector=request.selector, field_selector=request.field_selector,
        references=request.references, label_key=request.release_label,
        baseline=request.baselines[0] if request.baselines else None, more_baselines=request.baselines[1:],
        threshold=request.threshold, alpha=request.alpha,
    ))
    runs = list(series.inputs)
    titles = _titles(store, runs)
    model = build_model(runs, request.baselines, titles, request.threshold, request.alpha)
    pages = _Pages(jinja, request, model, series.series, titles, run_reference_fields(registry))
    try:
        for path, text in pages.render():
            folder.add(path, text)
        for asset in ASSETS:
            folder.add(f"assets/{asset}",
                       resources.files("kidx.publish").joinpath("assets", asset).read_text("utf-8"))
        removed = folder.finish()
    finally:
        folder.close()
    return PublishReport(len(folder.pages), folder.written, folder.unchanged, removed, len(runs),
                         len(model.families), len(series.series))


def _jinja():
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("kidx.publish").joinpath("templates"))),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment


def _titles(store, runs: list[AnalysedRun]) -> dict[str, str]:
    """Stored titles of the objects the runs refer to, by digest."""
    titles: dict[str, str] = {}
    for role, kind in zip(ROLES, REFERENCED_KINDS, strict=True):
        digests = {run.reference(role).digest for run in runs if run.reference(role).digest}
        if not digests:
            continue
        for digest, manifest in store.referenced_manifests(digests, kind).items():
            title = (manifest.get("metadata") or {}).get("title")
            if isinstance(title, str) and title:
                titles[digest] = title
    return titles


def format_value(value: float, unit: str) -> str:
    if value == 0:
        return "0"
    return byte_size(value) if unit == "B" else nanoseconds(value)


def speed_of_light_text(run: AnalysedRun) -> str:
    """``1.861TB/s, 38.8% of the H200 SXM 141GB's peak`` where the run's cost is known
    (docs/speed-of-light.md); "" otherwise."""
    from kidx.output.speed_of_light import bandwidth, flop_rate, percent
    from kidx.speed_of_light.achieved import achieved

    measure = run.measure
    if measure is None or measure.metric != "latency":
        return ""
    environment = {"spec": run.environment.spec} if run.environment.spec is not None else None
    figures = achieved(run.manifest.get("spec") or {}, run.workload.spec, environment, measure.value)
    if figures is None:
        return ""
    rates = [text for value, text in ((figures.bytes_per_second, bandwidth(figures.bytes_per_second)),
                                      (figures.flops_per_second, flop_rate(figures.flops_per_second)))
             if value is not None]
    if figures.peak is not None and figures.peak.sol is not None:
        rates.append(f"{percent(figures.peak.sol)} of the {figures.gpu}'s peak")
    return ", ".join(rates)


def _quantity(metric: str) -> str:
    return {"latency": "latency", "peak_memory": "peak memory"}.get(metric, metric)


def run_page(run: AnalysedRun) -> str:
    """The page a run is on: runs whose digests share their first RUN_SHARD hex digits share one."""
    return f"runs/{digest_hex(run.manifest['metadata']['digest'])[:RUN_SHARD]}.html"


def environment_path(environment: Referenced) -> str:
    return f"environments/{digest_hex(environment.digest or '')}.html"


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
    import shlex

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


class _Pages:
    def __init__(self, jinja, request: PublishRequest, model: SiteModel, series: list[Series],
                 titles: dict[str, str], reference_fields: dict[str, tuple[str, str]]):
        self.jinja, self.request, self.model, self.titles = jinja, request, model, titles
        self.series_pages: dict[str, list[Series]] = {}
        for one in series:
            key = [one.protocol.digest, one.workload.digest, one.environment.digest]
            self.series_pages.setdefault(page_id(key), []).append(one)
        self.series_of_run: dict[str, str] = {}
        for pid, members in self.series_pages.items():
            for one in members:
                for point in one.points:
                    self.series_of_run[point.run.name] = pid
        self.family_of_run: dict[str, Family] = {}
        for family in model.families:
            for line in family.lines:
                for drawn in line.points:
                    self.family_of_run[drawn.run.name] = family
        self.fields = sorted(field for field, _ in reference_fields.values())
        self.referrers: dict[str, list[AnalysedRun]] = {}
        for run in model.runs:
            spec = run.manifest.get("spec") or {}
            for field in self.fields:
                if isinstance(spec.get(field), str):
                    self.referrers.setdefault(spec[field], []).append(run)
        self.workload_fields = workload_fields(model.runs)
        self.memory_protocols = {f.protocol.digest for f in model.families if f.metric == "peak_memory"}
        self.as_of = max((run.manifest["metadata"].get("creationTimestamp") or "" for run in model.runs), default="")
        # a run's anchor is its digest's hex digits; runs that share a digest (one spec under
        # several names) each get their own: the first by name the digest's, the others it
        # and their name, so that no two sections of a page share an id
        by_digest: dict[str, list[str]] = {}
        for run in model.runs:
            by_digest.setdefault(run.manifest["metadata"]["digest"], []).append(run.name)
        self.anchors: dict[str, str] = {}
        for digest, names in by_digest.items():
            first, *others = sorted(names)
            self.anchors[first] = digest_hex(digest)
            self.anchors.update({name: f"{digest_hex(digest)}-{name}" for name in others})

    def run_path(self, run: AnalysedRun) -> str:
        """A run's permanent address: its page and, as the anchor, its digest's hex digits
        (and its name, for a run whose digest another published run has too)."""
        return f"{run_page(run)}#{self.anchors.get(run.name) or digest_hex(run.manifest['metadata']['digest'])}"

    def title(self, referenced: Referenced) -> str:
        return self.titles.get(referenced.digest or "", referenced.label)

    def page(self, template: str, path: str, **values) -> tuple[str, str]:
        root = "../" * path.count("/")
        text = self.jinja.get_template(template).render(
            root=root, site_title=self.request.title, as_of=self.as_of, base_url=self.request.base_url,
            path=path, threshold=f"{self.request.threshold * 100:g}%",
            rule=rule_text(self.request.threshold, self.request.alpha), **values)
        return path, text

    def render(self):
        yield self.index()
        yield from self.kernels()
        yield self.regressions()
        for family in self.model.families:
            yield from self.family(family)
        for pid, members in sorted(self.series_pages.items()):
            yield self.series_page(pid, members)
        for environment in self.model.environments:
            yield self.environment(environment)
        yield from self.run_pages()

    # the index and the kernel pages --------------------------------------------------
    def _cell(self, summary: Summary, href: str, memory: bool = False) -> dict:
        """A matrix cell; its hover text says what the header and row do not."""
        speedup = summary.speedup
        if summary.baseline:
            tip = "the baseline"
        elif speedup is None:
            tip = "no baseline run to compare with"
        elif memory:
            tip = f"{speedup:.2f}× less memory than the baseline (REDUCTION)"
        else:
            tip = f"{speedup:.2f}× the baseline's speed"
        if summary.families > 1:
            tip += f", mean of {summary.families} families"
        if summary.verdicts:
            tip += "; " + ", ".join(f"{count} {verdict}" for verdict, count in summary.verdicts.items())
        if len(summary.history) > 1:
            tip += f"; {len(summary.history)} days"
        return {
            "href": href, "baseline": summary.baseline,
            "speedup": f"{speedup:.2f}×" if speedup is not None else "–",
            "class": "baseline" if summary.baseline else summary.verdict or "none",
            "spark": (charts.sparkline([v for _, v in summary.history])
                      if len(summary.history) > 1 and not summary.baseline else ""),
            "tip": tip,
        }

    def _columns(self, rows) -> list[tuple[Referenced, str]]:
        present = {digest for row in rows for digest in row.cells}
        environments = [e for e in self.model.environments if e.digest in present]
        names = short_titles({e.digest or "": self.title(e) for e in environments})
        return [(e, names.get(e.digest or "", e.label)) for e in environments]

    def _protocol_names(self) -> dict[str, str]:
        return short_titles({f.protocol.digest or "": self.title(f.protocol) for f in self.model.families})

    def index(self):
        columns = self._columns(self.model.kernels)
        protocols = self._protocol_names()
        filters = self._filters()
        keys = {key for key, _ in filters}
        rows, previous = [], None
        for row in self.model.kernels:
            href = f"kernels/{row.kernel}.html"
            memory = row.protocol.digest in self.memory_protocols
            cells = [self._cell(row.cells[e.digest or ""], href, memory)
                     if (e.digest or "") in row.cells else None for e, _ in columns]
            head = (row.kernel, row.protocol.digest) != previous
            previous = (row.kernel, row.protocol.digest)
            rows.append({"head": head, "title": row.title, "href": href, "cells": cells,
                         "protocol": protocols.get(row.protocol.digest or "", row.protocol.label), "detail": "",
                         "implementation": row.implementation, "labels": _filtered(row.labels, keys),
                         "search": row.search})
        return self.page("index.html", "index.html", rows=rows, columns=columns, filters=filters,
                         runs=len(self.model.runs), families=len(self.model.families),
                         kernels=len({row.kernel for row in self.model.kernels}),
                         series=sum(len(members) for members in self.series_pages.values()),
                         series_pages=len(self.series_pages), environments_count=len(self.model.environments))

    def kernels(self):
        protocols = self._protocol_names()
        by_kernel: dict[str, list] = {}
        for row in self.model.rows:
            by_kernel.setdefault(row.kernel, []).append(row)
        for kernel, members in sorted(by_kernel.items()):
            columns = self._columns(members)
            filters = self._filters(members)
            keys = {key for key, _ in filters}
            rows, previous = [], None
            for row in members:
                cells = []
                for environment, _ in columns:
                    cell = row.cells.get(environment.digest or "")
                    href = f"../groups/{cell.family.id}.html" if cell else ""
                    cells.append(self._cell(summary([cell]), href, cell.family.metric == "peak_memory")
                                 if cell else None)
                head = (row.id, row.title) != previous
                previous = (row.id, row.title)
                _, _, shape = row.title.partition(TITLE_SEPARATOR)
                detail = (f"by {row.x_label}" if row.x_label else "") + (
                    f" · {shape.replace(TITLE_SEPARATOR, ', ')}" if shape else "")
                rows.append({"head": head, "title": row.title.split(TITLE_SEPARATOR)[0], "href": "",
                             "cells": cells, "protocol": protocols.get(row.protocol.digest or "", row.protocol.label),
                             "detail": detail, "implementation": row.implementation,
                             "labels": _filtered(row.labels, keys),
                             "search": row.search})
            title = rows[0]["title"]
            yield self.page("kernel.html", f"kernels/{kernel}.html", rows=rows, columns=columns, title=title,
                            filters=filters)

    def _filters(self, rows=None) -> list[tuple[str, list[str]]]:
        values: dict[str, set] = {}
        for row in self.model.kernels if rows is None else rows:
            for pair in row.labels:
                key, _, value = pair.partition("=")
                values.setdefault(key, set()).add(value)
        return [(key, sorted(found, key=_version_order)) for key, found in sorted(values.items())
                if 2 <= len(found) <= 80]

    # a group family ----------------------------------------------------------------------
    def family(self, family: Family):
        path = f"groups/{family.id}.html"
        root = "../"

        def unit_format(value: float) -> str:
            return format_value(value, family.unit)
        chart_lines = []
        for line in family.lines:
            points = []
            for point in line.points:
                m = point.measure
                spread = (f"{format_value(m.low, family.unit)} – {format_value(m.high, family.unit)}"
                          if m.low is not None and m.high is not None else "")
                x = point.x if point.x != "" else family.title
                points.append(charts.ChartPoint(
                    x, m.value, m.low, m.high, root + self.run_path(point.run),
                    {"impl": line.label, "x": f"{family.x_label or family.x_param or ''} {x}".strip(),
                     "value": format_value(m.value, family.unit), "spread": spread, "run": point.run.name,
                     "digest": short_digest(point.run.manifest["metadata"]["digest"])}))
            chart_lines.append(charts.ChartLine(line.label, points))
        quantity = _quantity(family.metric)
        x_label = family.x_label or family.x_param or "workload"
        description = (f"{quantity} of {family.title} against {x_label}, one line per implementation, "
                       f"on {family.environment.label}")
        x_names = [family.title] if family.x_param is None else None
        better = "lower is better" if family.lower_is_better else "higher is better"
        svg = charts.line_chart(chart_lines, x_label, f"{quantity} ({better})", unit_format, description, x_names,
                                binary=family.unit == "B")
        table = []
        for number, line in enumerate(family.lines):
            for point in line.points:
                m = point.measure
                table.append({
                    "line": line, "number": number, "x": point.x, "value": format_value(m.value, family.unit),
                    "spread": (f"{format_value(m.low, family.unit)} – {format_value(m.high, family.unit)}"
                               if m.low is not None and m.high is not None else ""),
                    "run": point.run, "href": root + self.run_path(point.run),
                    "series": self.series_of_run.get(point.run.name),
                })
        legend = [{"label": line.label, "marker": charts.legend_marker(number), "baseline": line.baseline,
                   "implementation": line.implementation} for number, line in enumerate(family.lines)]
        kernel, _, shape = family.title.partition(TITLE_SEPARATOR)
        yield self.page("group.html", path, family=family, svg=svg, kernel=kernel, shape=shape, legend=legend,
                        table=table, protocol_title=self.title(family.protocol),
                        environment_title=self.title(family.environment),
                        environment_href=self._environment_href(family.environment, root),
                        quantity=quantity, x_label=x_label,
                        plot_command=plot_command(family, self.request, self.workload_fields))
        data = {
            "title": family.title, "protocol": family.protocol.name, "environment": family.environment.name,
            "x": {"parameter": family.x_param, "label": family.x_label}, "metric": family.metric, "unit": family.unit,
            "lines": [{"implementation": line.implementation.name, "label": line.label, "baseline": line.baseline,
                       "points": [{"x": p.x, "value": p.measure.value, "low": p.measure.low, "high": p.measure.high,
                                   "run": p.run.name, "digest": p.run.manifest["metadata"]["digest"]}
                                  for p in line.points]} for line in family.lines],
        }
        yield f"groups/{family.id}.json", json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"

    # a series page: every implementation's series of one comparable group ---------------
    def series_page(self, pid: str, members: list[Series]):
        path = f"series/{pid}.html"
        root = "../"
        first = members[0]
        unit = first.points[0].run.known_measure.unit
        steps: dict[str, str] = {}
        for one in members:
            for point in one.points:
                step = self._step(point)
                if step not in steps or point.run.observed < steps[step]:
                    steps[step] = point.run.observed
        order = sorted(steps, key=lambda s: (steps[s], s))
        chart_lines, tables = [], []
        title = self.title(first.workload)
        for number, one in enumerate(members):
            label = line_label(one.implementation, self.titles.get(one.implementation.digest or ""), title)
            # the change points kidx series finds, each with what differs on either side of it
            shifts = {shift.run.name: shift for shift in one.changes}
            points, rows = [], []
            for point in one.points:
                m = point.run.known_measure
                shift = shifts.get(point.run.name)
                change = (f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change is not None else "")
                points.append(charts.ChartPoint(
                    self._step(point), m.value, m.low, m.high, root + self.run_path(point.run),
                    {"impl": label, "x": self._step(point), "value": format_value(m.value, unit),
                     "spread": (f"{format_value(m.low, unit)} – {format_value(m.high, unit)}"
                                if m.low is not None and m.high is not None else ""),
                     "change": (f"{change} ({point.verdict})" if point.verdict else "")
                     + (f"; change point {shift.point.change * 100:+.1f}%: {'; '.join(shift.cause)}" if shift else ""),
                     "run": point.run.name, "digest": short_digest(point.run.manifest["metadata"]["digest"])},
                    ring=point.verdict == "slower" or shift is not None))
                rows.append({"point": point, "step": self._step(point), "value": format_value(m.value, unit),
                             "verdict": _verdict_text(point),
                             "change": change, "href": root + self.run_path(point.run),
                             "cause": "; ".join(shift.cause) if shift else self._cause(point, one),
                             "shift": f"{shift.point.change * 100:+.1f}%" if shift else ""})
            chart_lines.append(charts.ChartLine(label, points))
            changes = [{"step": self._step(next(p for p in one.points if p.run.name == name)),
                        "change": f"{shift.point.change * 100:+.1f}%", "p": f"{shift.point.p_value:.2g}",
                        "cause": "; ".join(shift.cause), "before": root + self.run_path(shift.before),
                        "after": root + self.run_path(shift.run)} for name, shift in shifts.items()]
            tables.append({"series": one, "label": label, "rows": rows, "marker": charts.legend_marker(number),
                           "changes": changes})
        quantity = _quantity(first.points[0].run.known_measure.metric)
        axis = self.request.release_label or "observed"
        description = f"{quantity} of {title} over {axis}, one line per implementation"
        svg = charts.line_chart(chart_lines, axis, quantity, lambda v: format_value(v, unit), description, order,
                                binary=unit == "B")
        family = self.family_of_run.get(first.points[-1].run.name)
        return self.page("series.html", path, title=title, svg=svg, tables=tables, first=first,
                         protocol_title=self.title(first.protocol), environment_title=self.title(first.environment),
                         environment_href=self._environment_href(first.environment, root),
                         family_href=f"{root}groups/{family.id}.html" if family else "", axis=axis,
                         release_label=self.request.release_label,
                         memory=first.points[0].run.known_measure.metric == "peak_memory")

    @staticmethod
    def _environment_href(environment: Referenced, root: str) -> str:
        return root + environment_path(environment) if environment.digest else ""

    def _step(self, point) -> str:
        if self.request.release_label and point.label is not None:
            return point.label
        return point.run.observed[:16].replace("T", " ")

    def _cause(self, point, one: Series) -> str:
        """What changed between a point and the one before it, as far as the runs say."""
        if point.change is None:
            return ""
        index = one.points.index(point)
        before = one.points[index - 1]
        causes = []
        if self.request.release_label and point.label != before.label:
            causes.append(f"{self.request.release_label} {before.label} → {point.label}")
        if point.speedup_change is not None and abs(point.speedup_change) >= 0.05:
            causes.append(f"speedup over the baseline {point.speedup_change * 100:+.1f}%")
        elif point.speedup_change is not None and point.verdict in ("slower", "faster"):
            causes.append("the baseline moved too: the machine, not the kernel")
        return "; ".join(causes)

    # regressions ----------------------------------------------------------------------
    def regressions(self):
        label = self.request.release_label
        rows = []
        for pid, members in self.series_pages.items():
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
                    "title": self.title(one.workload), "implementation": self.title(one.implementation),
                    "environment": one.environment.label, "protocol": self.title(one.protocol),
                    "from": before.label if label else before.run.observed[:10],
                    "to": point.label if label else point.run.observed[:10],
                    "before": format_value(before.run.known_measure.value, unit),
                    "after": format_value(point.run.known_measure.value, unit),
                    "change": f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change else "",
                    "href": f"series/{pid}.html", "run": "" + self.run_path(point.run),
                })
        order = {"slower": 0, "unconfirmed": 1, "inconclusive": 2, "same": 3, "faster": 4}
        rows.sort(key=lambda r: (order.get(r["verdict"], 5), -r["ratio"], r["title"], r["implementation"],
                                 r["environment"], r["href"]))
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["verdict"] or ""] = counts.get(row["verdict"] or "", 0) + 1
        left = rows[REGRESSION_ROWS:]
        unlisted = [(verdict, sum(1 for r in left if r["verdict"] == verdict)) for verdict in counts]

        def by_order(pair: tuple[str, int]) -> tuple:
            return order.get(pair[0], 3), pair[0]

        return self.page("regressions.html", "regressions.html", rows=rows[:REGRESSION_ROWS], release_label=label,
                         counts=sorted(counts.items(), key=by_order),
                         unlisted=sorted(((v, n) for v, n in unlisted if n), key=by_order), total=len(rows))

    # environments and runs ------------------------------------------------------------
    def environment(self, environment: Referenced):
        path = environment_path(environment)
        spec = environment.spec or {}
        families = sorted((f for f in self.model.families if f.environment.digest == environment.digest),
                          key=lambda f: (f.title, self.title(f.protocol), f.id))
        return self.page("environment.html", path, environment=environment, title=self.title(environment),
                         facts=_flatten(spec), families=families,
                         runs=len(self.referrers.get(environment.digest or "", [])), titles=self.titles)

    def run_pages(self) -> Iterator[tuple[str, str]]:
        from kidx.operations.host_bound import evidence
        from kidx.publish.run_shards import RunLinks, shard

        shards: dict[str, list[AnalysedRun]] = {}
        for run in self.model.runs:
            shards.setdefault(run_page(run), []).append(run)
        links = RunLinks(
            anchor=lambda run: self.anchors.get(run.name) or digest_hex(run.manifest["metadata"]["digest"]),
            path=self.run_path, family={name: f.id for name, f in self.family_of_run.items()},
            series=self.series_of_run, titles=self.titles,
            environment_path=lambda digest: f"environments/{digest_hex(digest)}.html", referrers=self.referrers,
            figures=speed_of_light_text,
            host=evidence(self.model.runs, self.model.runs),  # twins and sweeps among the published runs
            measure=lambda run: format_value(run.measure.value, run.measure.unit) if run.measure else "")
        for path, runs in sorted(shards.items()):
            runs.sort(key=lambda r: r.manifest["metadata"]["digest"])
            sections, data = shard(runs, links)
            yield self.page("runs.html", path, runs=sections, data=data)


def _verdict_text(point) -> str:
    """A series point's verdict as kidx series prints it: ``unconfirmed (faster)``."""
    if point.verdict == "unconfirmed" and point.change is not None and point.change.within:
        return f"unconfirmed ({point.change.within})"
    return point.verdict or ""


def _version_order(value: str) -> tuple:
    """``0.5.2`` before ``0.5.10``: numbers by value, the rest as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.\-+]", value))


def _filtered(labels: list[str], keys: set[str]) -> str:
    """The ``key=value`` labels the page's filters can choose, space-separated."""
    return " ".join(label for label in labels if label.partition("=")[0] in keys)


def _flatten(value, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        out = []
        for key in sorted(value):
            out += _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
        return out
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            out += _flatten(item, f"{prefix}[{i}]")
        return out
    return [(prefix, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))]

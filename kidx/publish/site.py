"""``kidx publish``: the pages of a static site of the index, from the selected runs.

The selection is read once through the analysis operations (as ``compare``, ``series``
and ``plot`` read it); the pages are rendered with Jinja2 (autoescaping every value) and
handed to ``files.SiteFolder``, which writes only what changed. No page carries a build
time: the "data as of" line is the latest ``creationTimestamp`` among the runs shown.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from kidx.errors import KidxError
from kidx.operations.analysed_runs import AnalysedRun, Referenced, run_reference_fields, select_runs
from kidx.operations.series import Series, SeriesRequest, build_series
from kidx.output.units import byte_size, nanoseconds, short_digest
from kidx.publish import charts
from kidx.publish.files import SiteFolder
from kidx.publish.model import TITLE_SEPARATOR, Family, SiteModel, build_model, digest_hex, line_label, page_id, short_titles

ASSETS = ("site.css", "site.js")
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
    selection = select_runs(store, registry, request)
    if selection.missing:
        raise KidxError("; ".join(selection.missing))
    runs = selection.runs
    titles = _titles(store, runs)
    model = build_model(runs, request.baselines, titles)
    series = build_series(store, registry, SeriesRequest(
        names=request.names, selector=request.selector, field_selector=request.field_selector,
        references=request.references, label_key=request.release_label,
        baseline=request.baselines[0] if request.baselines else None,
    ))
    pages = _Pages(jinja, request, model, series.series, titles, run_reference_fields(registry))
    folder = SiteFolder(request.folder)
    for path, text in pages.render():
        folder.add(path, text)
    for asset in ASSETS:
        folder.add(f"assets/{asset}", resources.files("kidx.publish").joinpath("assets", asset).read_text("utf-8"))
    written, unchanged, removed = folder.commit(dry_run=request.dry_run)
    return PublishReport(len(folder.pages), written, unchanged, removed, len(runs), len(model.families),
                         len(series.series))


def _jinja():
    try:
        import jinja2
    except ImportError:
        raise KidxError("kidx publish renders its pages with Jinja2: pip install 'kidx[publish]'") from None
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("kidx.publish").joinpath("templates"))),
        autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["short"] = short_digest
    return environment


def _titles(store, runs: list[AnalysedRun]) -> dict[str, str]:
    """Stored titles of the objects the runs refer to, by digest."""
    titles: dict[str, str] = {}
    for role, kind in zip(("protocol", "workload", "environment", "implementation"), REFERENCED_KINDS, strict=True):
        digests = {run.reference(role).digest for run in runs if run.reference(role).digest}
        if not digests:
            continue
        for digest, manifest in store.referenced_manifests(digests, kind).items():
            title = (manifest.get("metadata") or {}).get("title")
            if isinstance(title, str) and title:
                titles[digest] = title
    return titles


def format_value(value: float, unit: str) -> str:
    return byte_size(value) if unit == "B" else nanoseconds(value)


def _quantity(metric: str) -> str:
    return {"latency": "latency", "peak_memory": "peak memory"}.get(metric, metric)


def run_path(run: AnalysedRun) -> str:
    hexdigits = digest_hex(run.manifest["metadata"]["digest"])
    return f"runs/{hexdigits[:2]}/{hexdigits}.html"


def environment_path(environment: Referenced) -> str:
    return f"environments/{digest_hex(environment.digest or '')}.html"


def _speedup_class(speedup: float | None) -> str:
    if speedup is None:
        return "none"
    if speedup >= 1.05:
        return "faster"
    if speedup <= 1 / 1.05:
        return "slower"
    return "same"


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
                for point in line.points:
                    self.family_of_run[point.run.name] = family
        self.fields = sorted(field for field, _ in reference_fields.values())
        self.referrers: dict[str, list[AnalysedRun]] = {}
        for run in model.runs:
            spec = run.manifest.get("spec") or {}
            for field in self.fields:
                if isinstance(spec.get(field), str):
                    self.referrers.setdefault(spec[field], []).append(run)
        self.as_of = max((run.manifest["metadata"].get("creationTimestamp") or "" for run in model.runs), default="")

    def title(self, referenced: Referenced) -> str:
        return self.titles.get(referenced.digest or "", referenced.label)

    def page(self, template: str, path: str, **values) -> tuple[str, str]:
        root = "../" * path.count("/")
        text = self.jinja.get_template(template).render(
            root=root, site_title=self.request.title, as_of=self.as_of, base_url=self.request.base_url,
            path=path, **values)
        return path, text

    def render(self):
        yield self.index()
        yield self.regressions()
        for family in self.model.families:
            yield from self.family(family)
        for pid, members in sorted(self.series_pages.items()):
            yield self.series_page(pid, members)
        for environment in self.model.environments:
            yield self.environment(environment)
        for run in self.model.runs:
            yield self.run(run)

    # the index -------------------------------------------------------------------------
    def index(self):
        environments = [e for e in self.model.environments
                        if any(e.digest in row.cells for row in self.model.rows)]
        rows = []
        previous = None
        for row in self.model.rows:
            cells = []
            for environment in environments:
                cell = row.cells.get(environment.digest or "")
                if cell is None:
                    cells.append(None)
                    continue
                cells.append({
                    "href": f"groups/{cell.family.id}.html",
                    "baseline": cell.line.baseline,
                    "speedup": f"{cell.speedup:.2f}×" if cell.speedup is not None else "–",
                    "class": "baseline" if cell.line.baseline else _speedup_class(cell.speedup),
                    "spark": charts.sparkline([v for _, v in cell.history]) if len(cell.history) > 1 else "",
                    "tip": (f"{cell.line.label} on {environment.label}: "
                            + ("the baseline" if cell.line.baseline else
                               f"{cell.speedup:.2f}× the baseline's speed" if cell.speedup else "no baseline run")
                            + (f"; {len(cell.history)} days of history" if len(cell.history) > 1 else "")),
                })
            head = (row.id, row.title) != previous
            previous = (row.id, row.title)
            rows.append({"row": row, "cells": cells, "head": head, "protocol": self.title(row.protocol)})
        filters = self._filters()
        env_names = short_titles({e.digest or "": self.title(e) for e in environments})
        protocol_names = short_titles({r.protocol.digest or "": self.title(r.protocol) for r in self.model.rows})
        for item in rows:
            head, _, rest = item["row"].title.partition(TITLE_SEPARATOR)
            item.update(kernel=head, shape=rest.replace(TITLE_SEPARATOR, ", "),
                        protocol=protocol_names.get(item["row"].protocol.digest or "", item["protocol"]))
        columns = [(e, env_names.get(e.digest or "", e.label)) for e in environments]
        return self.page("index.html", "index.html", rows=rows, columns=columns, filters=filters,
                         runs=len(self.model.runs), families=len(self.model.families),
                         series=len(self.series_pages), environments_count=len(self.model.environments))

    def _filters(self) -> list[tuple[str, list[str]]]:
        values: dict[str, set] = {}
        for row in self.model.rows:
            for pair in row.labels:
                key, _, value = pair.partition("=")
                values.setdefault(key, set()).add(value)
        return [(key, sorted(found)) for key, found in sorted(values.items()) if 2 <= len(found) <= 80]

    # a group family ----------------------------------------------------------------------
    def family(self, family: Family):
        path = f"groups/{family.id}.html"
        root = "../"
        unit_format = (lambda v: format_value(v, family.unit))
        chart_lines = []
        for line in family.lines:
            points = []
            for point in line.points:
                m = point.measure
                spread = (f"{format_value(m.low, family.unit)} – {format_value(m.high, family.unit)}"
                          if m.low is not None and m.high is not None else "")
                x = point.x if point.x != "" else family.title
                points.append(charts.ChartPoint(
                    x, m.value, m.low, m.high, root + run_path(point.run),
                    {"impl": line.label, "x": f"{family.x_label or family.x_param or ''} {x}".strip(),
                     "value": format_value(m.value, family.unit), "spread": spread, "run": point.run.name,
                     "digest": short_digest(point.run.manifest["metadata"]["digest"])}))
            chart_lines.append(charts.ChartLine(line.label, points))
        quantity = _quantity(family.metric)
        x_label = family.x_label or family.x_param or "workload"
        description = (f"{quantity} of {family.title} against {x_label}, one line per implementation, "
                       f"on {family.environment.label}")
        x_names = [family.title] if family.x_param is None else None
        svg = charts.line_chart(chart_lines, x_label, f"{quantity} ({'lower is better' if family.lower_is_better else 'higher is better'})",
                                unit_format, description, x_names)
        table = []
        for number, line in enumerate(family.lines):
            for point in line.points:
                m = point.measure
                table.append({
                    "line": line, "number": number, "x": point.x, "value": format_value(m.value, family.unit),
                    "spread": (f"{format_value(m.low, family.unit)} – {format_value(m.high, family.unit)}"
                               if m.low is not None and m.high is not None else ""),
                    "run": point.run, "href": root + run_path(point.run),
                    "series": self.series_of_run.get(point.run.name),
                })
        legend = [{"label": line.label, "marker": charts.legend_marker(number), "baseline": line.baseline,
                   "implementation": line.implementation} for number, line in enumerate(family.lines)]
        kernel, _, shape = family.title.partition(TITLE_SEPARATOR)
        yield self.page("group.html", path, family=family, svg=svg, kernel=kernel, shape=shape, legend=legend, table=table,
                        protocol_title=self.title(family.protocol), environment_title=self.title(family.environment),
                        environment_href=root + environment_path(family.environment) if family.environment.digest else "",
                        quantity=quantity, x_label=x_label)
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
            points, rows = [], []
            for point in one.points:
                m = point.run.known_measure
                change = (f"{(point.change.ratio - 1) * 100:+.1f}%" if point.change is not None else "")
                points.append(charts.ChartPoint(
                    self._step(point), m.value, m.low, m.high, root + run_path(point.run),
                    {"impl": label, "x": self._step(point), "value": format_value(m.value, unit),
                     "spread": (f"{format_value(m.low, unit)} – {format_value(m.high, unit)}"
                                if m.low is not None and m.high is not None else ""),
                     "change": (f"{change} ({point.verdict})" if point.verdict else ""),
                     "run": point.run.name, "digest": short_digest(point.run.manifest["metadata"]["digest"])},
                    ring=point.verdict == "slower"))
                rows.append({"point": point, "step": self._step(point), "value": format_value(m.value, unit),
                             "change": change, "href": root + run_path(point.run),
                             "cause": self._cause(point, one)})
            chart_lines.append(charts.ChartLine(label, points))
            tables.append({"series": one, "label": label, "rows": rows, "marker": charts.legend_marker(number)})
        quantity = _quantity(first.points[0].run.known_measure.metric)
        axis = self.request.release_label or "observed"
        description = f"{quantity} of {title} over {axis}, one line per implementation"
        svg = charts.line_chart(chart_lines, axis, quantity, lambda v: format_value(v, unit), description, order)
        family = self.family_of_run.get(first.points[-1].run.name)
        return self.page("series.html", path, title=title, svg=svg, tables=tables, first=first,
                         protocol_title=self.title(first.protocol), environment_title=self.title(first.environment),
                         environment_href=root + environment_path(first.environment) if first.environment.digest else "",
                         family_href=f"{root}groups/{family.id}.html" if family else "", axis=axis,
                         release_label=self.request.release_label)

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
                    "href": f"series/{pid}.html", "run": "" + run_path(point.run),
                })
        order = {"slower": 0, "same": 1, "faster": 2}
        rows.sort(key=lambda r: (order.get(r["verdict"], 3), -r["ratio"], r["title"], r["implementation"],
                                 r["environment"], r["href"]))
        return self.page("regressions.html", "regressions.html", rows=rows, release_label=label,
                         slower=sum(1 for r in rows if r["verdict"] == "slower"))

    # environments and runs ------------------------------------------------------------
    def environment(self, environment: Referenced):
        path = environment_path(environment)
        spec = environment.spec or {}
        families = sorted((f for f in self.model.families if f.environment.digest == environment.digest),
                          key=lambda f: (f.title, self.title(f.protocol), f.id))
        return self.page("environment.html", path, environment=environment, title=self.title(environment),
                         facts=_flatten(spec), families=families, runs=len(self.referrers.get(environment.digest or "", [])),
                         titles=self.titles)

    def run(self, run: AnalysedRun):
        path = run_path(run)
        references = []
        spec = run.manifest.get("spec") or {}
        for role in ("protocol", "workload", "environment", "implementation"):
            referenced = run.reference(role)
            if referenced.digest is None:
                continue
            references.append({
                "role": role, "field": next((f for f in self.fields if f.startswith(role)), role), "referenced": referenced,
                "title": self.titles.get(referenced.digest, ""),
                "href": environment_path(referenced) if role == "environment" and referenced.name else "",
            })
        digest = run.manifest["metadata"]["digest"]
        referrers = [r for r in self.referrers.get(digest, []) if r is not run]
        family = self.family_of_run.get(run.name)
        series = self.series_of_run.get(run.name)
        text = json.dumps(run.manifest, indent=2, ensure_ascii=False, sort_keys=False)
        del spec
        return self.page("run.html", path, run=run, digest=digest, manifest=text, references=references,
                         referrers=[(r, run_path(r)) for r in referrers],
                         family_href=f"groups/{family.id}.html" if family else "",
                         series_href=f"series/{series}.html" if series else "",
                         measure=(format_value(run.measure.value, run.measure.unit) if run.measure else ""))


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

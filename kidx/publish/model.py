"""What the site shows, worked out once from the selected runs.

- A *group family* is a comparable group with one workload parameter set free: runs that
  share protocol and environment, and whose workloads are equal apart from the swept
  parameter. The swept parameter is the harness's where it says so (Liger's raw row
  names ``x_name``, ``x_label`` and ``x_value``), else the numeric workload parameter
  with the most distinct values among workloads that are otherwise equal.
- Each family has a *baseline*: the first ``--baseline`` (implementation name, digest or
  library) it holds, else the implementation of its earliest observed run (compare's rule).
- An index *row* is a family across environments (same protocol, fixed parameters and
  swept parameter); a *cell* is one implementation of that row on one environment: its
  latest speedup over the baseline (geometric mean over the family's shapes) and the
  history of that speedup by day. The index's cell, a kernel's implementation on one
  environment, is the geometric mean over every shape of the kernel's families, one shape
  one vote (``kidx.analysis.aggregate``, as ``compare --aggregate operation`` takes them).
- A cell's verdicts are compare's (``kidx.operations.analyse.compare.GroupVerdicts``): per shape,
  the implementation's runs of that comparable group pooled against the baseline's, as
  ``kidx compare --baseline`` on the published selection judges them.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from functools import lru_cache
from typing import NamedTuple

from kidx.analysis.aggregate import Configuration, aggregate
from kidx.analysis.measures import Measure, observed_moment
from kidx.analysis.significance import ALPHA, DEFAULT_THRESHOLD
from kidx.operations.analyse.compare import CompareRequest, GroupVerdicts
from kidx.operations.select.analysed_runs import AnalysedRun, Referenced
from kidx.output.comparison import verdict_text

# Liger's importer keeps each CSV row in this annotation; its header names the sweep
LIGER_ROW_ANNOTATION = "liger.kernelindex.dev/row"
LIGER_X_NAME, LIGER_X_LABEL, LIGER_X_VALUE, LIGER_CONFIG = 5, 6, 7, 11
TITLE_SEPARATOR = " · "


def page_id(key) -> str:
    """A stable file name for a page: 16 hex digits of the sha256 of its key."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def digest_hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


class Point(NamedTuple):
    x: float | str
    run: AnalysedRun

    @property
    def measure(self) -> Measure:
        return self.run.known_measure


class Line(NamedTuple):
    implementation: Referenced
    label: str
    points: list[Point]  # by x, the latest observation of each
    baseline: bool
    runs: tuple[AnalysedRun, ...] = ()  # every observation, superseded ones too


class Family(NamedTuple):
    id: str
    row: str  # the family across environments
    protocol: Referenced
    environment: Referenced
    title: str
    x_param: str | None
    x_label: str
    metric: str
    unit: str
    lower_is_better: bool
    lines: list[Line]
    runs: int  # every run of the family, every observation


class Cell(NamedTuple):
    family: Family
    line: Line
    speedup: float | None  # latest, geometric mean over shapes; None without the baseline's runs
    history: list[tuple[str, float]]  # (day, speedup)
    # per shape, compare's verdict of the implementation's runs against the baseline's
    # (GroupVerdicts), as compare prints it (``unconfirmed (faster)``), counted
    verdicts: dict[str, int] = {}
    shapes: tuple[float, ...] = ()  # each shape's latest speedup, by workload


class Row(NamedTuple):
    id: str
    title: str
    kernel: str  # the kernel page it is on
    protocol: Referenced
    x_label: str
    implementation: str  # the line label
    cells: dict[str, Cell]  # by environment digest
    labels: list[str]  # "key=value" of its runs, for the page's filters
    search: str  # lower-case text the search box matches


class Summary(NamedTuple):
    """Cells of one kernel, pass and implementation on one environment, taken together."""

    # the geometric mean of every shape's latest speedup, one shape one vote, whichever
    # family it is in (kidx.analysis.aggregate, as compare --aggregate takes them)
    speedup: float | None
    history: list[tuple[str, float]]  # by day, the geometric mean of the families' speedups that day
    baseline: bool  # the implementation is the baseline of every family
    families: int
    verdicts: dict[str, int] = {}  # the shapes' verdicts as compare prints them, counted
    shapes: int = 0  # the shapes the speedup is the mean of
    interval: tuple[float, float] | None = None  # the speedup's 95% interval (kidx.analysis.aggregate)

    @property
    def verdict(self) -> str | None:
        """The verdict every judged shape has (its word: ``unconfirmed`` for ``unconfirmed
        (faster)``); "mixed" where they differ, None for none."""
        if not self.verdicts:
            return None
        return next(iter(self.verdicts)).split(" (")[0] if len(self.verdicts) == 1 else "mixed"


class KernelRow(NamedTuple):
    """The index's row: one kernel (operation) and protocol, one implementation."""

    kernel: str  # page id of the kernel's page
    title: str
    protocol: Referenced
    implementation: str
    cells: dict[str, Summary]  # by environment digest
    labels: list[str]
    search: str


class SiteModel(NamedTuple):
    kernels: list[KernelRow]
    families: list[Family]
    rows: list[Row]
    environments: list[Referenced]
    runs: list[AnalysedRun]
    unmeasured: int


def _declared_sweep(run: AnalysedRun, matched: dict) -> tuple[tuple, list[str], str, str] | None:
    """What the harness says about the sweep of this run: (the sweep's key, the workload
    parameters equal to the point's x value, x name, x label)."""
    row = (run.manifest.get("metadata", {}).get("annotations") or {}).get(LIGER_ROW_ANNOTATION)
    parameters = (run.workload.spec or {}).get("parameters")
    if not isinstance(row, str) or not isinstance(parameters, dict):
        return None
    if '"' in row or "\r" in row or "\n" in row:
        try:
            fields = next(csv.reader([row]))
        except (csv.Error, StopIteration):
            return None
    else:  # nothing quoted, on one line: csv reads it as split does (a hundred thousand runs: one call each)
        fields = row.split(",")
    if len(fields) <= LIGER_CONFIG:
        return None
    x_name, x_label, x_value = fields[LIGER_X_NAME], fields[LIGER_X_LABEL], fields[LIGER_X_VALUE]
    known = (run.workload.digest, x_value)  # runs of one shape share their answer
    if known not in matched:
        matched[known] = sorted(name for name, value in parameters.items() if _same_value(value, x_value))
    matching = matched[known]
    if not matching:
        return None
    operation = (run.workload.spec or {}).get("operation")
    key = (run.protocol.digest, run.environment.digest, operation, x_name, fields[LIGER_CONFIG])
    return key, matching, x_name, x_label.strip()


def declared_sweeps(runs: list[AnalysedRun]) -> dict[str, tuple[str, str] | None]:
    """Per run name: (swept parameter, axis label) where the harness says so. Of the
    parameters equal to a point's x value, the swept one equals it at every point of the
    sweep (a fixed ``hidden 8192`` equals x only where ``seq`` is 8192 too)."""
    matched: dict = {}
    found = {run.name: _declared_sweep(run, matched) for run in runs}
    shared: dict[tuple, set] = {}
    for facts in found.values():
        if facts is not None:
            points = set(facts[1])
            shared[facts[0]] = shared[facts[0]] & points if facts[0] in shared else points
    result: dict[str, tuple[str, str] | None] = {}
    for name, facts in found.items():
        if facts is None:
            result[name] = None
            continue
        key, matching, x_name, x_label = facts
        candidates = sorted(shared[key]) or matching
        chosen = x_name if x_name in candidates else candidates[0]
        result[name] = (chosen, x_label or chosen)
    return result


def _same_value(value, text: str) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return isinstance(value, str) and value == text


def _workload_rest(run: AnalysedRun, free: str | None) -> str:
    return _rest_of(run.workload.digest, free, run.workload.spec)


def _rest_of(digest: str | None, free: str | None, spec: dict | None) -> str:
    if digest is None:
        return _rest(spec, free)
    key = (digest, free)
    if key not in _RESTS:
        _RESTS[key] = _rest(spec, free)
    return _RESTS[key]


# by workload digest: a digest names one spec in every store, so the answer never goes stale
_RESTS: dict[tuple, str] = {}


def _rest(workload: dict | None, free: str | None) -> str:
    spec = dict(workload or {})
    spec.pop("key", None)  # a text form of the parameters: it varies with the swept one
    parameters = dict(spec.get("parameters") or {})
    parameters.pop(free, None)
    spec["parameters"] = parameters
    return json.dumps(spec, sort_keys=True, ensure_ascii=False)


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _guess_sweeps(runs: list[AnalysedRun]) -> dict[str, tuple[str, str] | None]:
    """For workloads the harness says nothing about: per workload digest, the numeric
    parameter with the most distinct values among otherwise equal workloads."""
    workloads = {run.workload.digest: run.workload.spec or {} for run in runs if run.workload.digest}
    found: dict[str, tuple[str, str] | None] = {}
    names = sorted({name for spec in workloads.values() for name, value in (spec.get("parameters") or {}).items()
                    if _numeric(value)})
    best: dict[str, tuple[int, str]] = {}
    for name in names:
        clusters: dict[str, set] = {}
        for digest, spec in workloads.items():
            value = (spec.get("parameters") or {}).get(name)
            if _numeric(value):
                rest = dict(spec, parameters={k: v for k, v in (spec.get("parameters") or {}).items() if k != name})
                rest.pop("key", None)
                clusters.setdefault(json.dumps(rest, sort_keys=True), set()).add(digest)
        for members in clusters.values():
            if len(members) < 2:
                continue
            for digest in members:
                if digest not in best or len(members) > best[digest][0]:
                    best[digest] = (len(members), name)
    for digest in workloads:
        found[digest] = (best[digest][1], best[digest][1]) if digest in best else None
    return found


def common_title(titles: list[str]) -> str:
    """The ``·``-separated segments every title shares, in the first title's order."""
    split = [title.split(TITLE_SEPARATOR) for title in titles if title]
    if not split:
        return ""
    shared = [segment for segment in split[0] if all(segment in other for other in split[1:])]
    return TITLE_SEPARATOR.join(shared) or split[0][0]


def short_titles(titles: dict[str, str]) -> dict[str, str]:
    """Each title without the ``·``-separated segments every one of them shares
    ("Liger benchmark host · H100 80GB HBM3" → "H100 80GB HBM3")."""
    shared = set(common_title(list(titles.values())).split(TITLE_SEPARATOR)) if len(titles) > 1 else set()
    return {key: TITLE_SEPARATOR.join(s for s in title.split(TITLE_SEPARATOR) if s not in shared) or title
            for key, title in titles.items()}


def line_label(implementation: Referenced, title: str | None, family_title: str) -> str:
    """The implementation's stored title without what the family's title already says."""
    if implementation.digest is None:
        return "(no implementation recorded)"
    if not title:
        return implementation.label
    shown = [segment for segment in title.split(TITLE_SEPARATOR) if segment not in family_title.split(TITLE_SEPARATOR)]
    return TITLE_SEPARATOR.join(shown) or title


def _matches(implementation: Referenced, wanted: str) -> bool:
    return wanted in (implementation.name, implementation.digest, (implementation.spec or {}).get("library"))


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _ratio(run: AnalysedRun, baseline: AnalysedRun) -> float:
    """How many times better than the baseline."""
    measure, base = run.known_measure, baseline.known_measure
    return base.value / measure.value if measure.lower_is_better else measure.value / base.value


def build_model(runs: list[AnalysedRun], baselines: tuple[str, ...], titles: dict[str, str],
                threshold: float | None = DEFAULT_THRESHOLD, alpha: float = ALPHA,
                judged: GroupVerdicts | None = None) -> SiteModel:
    """``titles``: stored titles of referenced objects, by digest; ``threshold`` and
    ``alpha``: the verdict rule's (kidx.analysis.significance); ``judged``: compare's
    verdicts of the selection (``GroupVerdicts``; by default on these runs alone, as
    compare judges a selection that is the whole store)."""
    if judged is None:
        judged = GroupVerdicts(None, None, CompareRequest([], threshold=threshold, alpha=alpha), runs)
    # a figure of no known better direction (a count, a plain ratio) has no speedup to show
    measured = [run for run in runs if run.measure is not None and run.measure.direction is not None]
    declared = declared_sweeps(measured)
    guessed = _guess_sweeps([run for run in measured if declared[run.name] is None])
    buckets: dict[tuple, list[AnalysedRun]] = {}
    sweeps: dict[tuple, tuple[str, str] | None] = {}
    for run in measured:
        sweep = declared[run.name] or guessed.get(run.workload.digest or "")
        free = sweep[0] if sweep else None
        row_key = (run.protocol.digest, _workload_rest(run, free), free)
        key = (*row_key, run.environment.digest)
        buckets.setdefault(key, []).append(run)
        sweeps.setdefault(key, sweep)
    # a point is drawn from the latest observation of its shape, whichever sweep measured
    # it (Liger measures a shape where two sweeps cross twice): as ``kidx plot`` draws it
    latest: dict[tuple, AnalysedRun] = {}
    for run in measured:
        shape = _shape(run)
        if shape not in latest or (run.observed, run.name) > (latest[shape].observed, latest[shape].name):
            latest[shape] = run
    families: list[Family] = []
    cells: dict[tuple, dict] = {}
    for key, members in buckets.items():
        family, family_cells = _family(key, members, sweeps[key], baselines, titles, latest, judged)
        families.append(family)
        for line, cell in family_cells:
            cells.setdefault((family.row, line.label), {})[family.environment.digest or ""] = cell
    families.sort(key=lambda f: (f.title, f.protocol.label, f.environment.label, f.id))
    rows = []
    by_row: dict[str, list[Family]] = {}
    for family in families:
        by_row.setdefault(family.row, []).append(family)
    for (row_id, label), row_cells in cells.items():
        first = next(iter(row_cells.values())).family
        # every observation's labels, so that a filter offers the releases a later run superseded
        labels = sorted({f"{k}={v}" for cell in row_cells.values() for run in cell.line.runs
                         for k, v in run.labels.items()})
        text = " ".join([first.title, label, first.protocol.label,
                         *(c.family.environment.label for c in row_cells.values()),
                         *(c.line.implementation.label for c in row_cells.values())])
        kernel = page_id(["kernel", _operation(first)])
        rows.append(Row(row_id, first.title, kernel, first.protocol, first.x_label, label, row_cells, labels,
                        text.lower()))
    rows.sort(key=lambda r: (r.title, _protocol_title(r.protocol, titles), r.x_label, r.id,
                             not any(c.line.baseline for c in r.cells.values()), r.implementation))
    kernels = _kernel_rows(rows, titles)
    environments = sorted({run.environment.digest: run.environment for run in runs if run.environment.digest}.values(),
                          key=lambda e: (e.label, e.digest))
    return SiteModel(kernels, families, rows, environments, runs, len(runs) - len(measured))


def _shape(run: AnalysedRun) -> tuple:
    return (run.protocol.digest, run.workload.digest, run.environment.digest, run.implementation.digest)


def _operation(family: Family) -> str:
    return family.title.split(TITLE_SEPARATOR)[0]


def summary(cells: list[Cell]) -> Summary:
    days: dict[str, list[float]] = {}
    for cell in cells:
        for day, value in cell.history:
            days.setdefault(day, []).append(value)
    shapes = [speedup for cell in cells for speedup in cell.shapes]
    # the aggregate of the shapes' slowdowns (1 / speedup): compare's geometric-mean ratio
    # and its t interval, turned back into a speedup
    taken = aggregate([Configuration(1 / s if s else math.inf, s, None) for s in shapes])
    speedup = 1 / taken.geomean if taken.geomean else None
    interval = (1 / taken.ci[1], 1 / taken.ci[0]) if taken.ci and taken.ci[0] and len(shapes) > 1 else None
    history = [(day, _geomean(values) or 1.0) for day, values in sorted(days.items())]
    verdicts: dict[str, int] = {}
    for cell in cells:
        for verdict, count in cell.verdicts.items():
            verdicts[verdict] = verdicts.get(verdict, 0) + count
    return Summary(speedup, history, all(cell.line.baseline for cell in cells), len(cells),
                   dict(sorted(verdicts.items())), len(shapes), interval)


def _kernel_rows(rows: list[Row], titles: dict[str, str]) -> list[KernelRow]:
    grouped: dict[tuple, list[Row]] = {}
    for row in rows:
        grouped.setdefault((row.kernel, row.protocol.digest, row.implementation), []).append(row)
    result = []
    for (kernel, _, implementation), members in grouped.items():
        by_environment: dict[str, list[Cell]] = {}
        for row in members:
            for environment, cell in row.cells.items():
                by_environment.setdefault(environment, []).append(cell)
        first = members[0]
        title = _operation(next(iter(first.cells.values())).family)
        labels = sorted({label for row in members for label in row.labels})
        search = " ".join(sorted({word for row in members for word in row.search.split()}))
        result.append(KernelRow(kernel, title, first.protocol, implementation,
                                {e: summary(cells) for e, cells in by_environment.items()}, labels, search))
    result.sort(key=lambda r: (r.title, _protocol_title(r.protocol, titles), r.protocol.digest or "",
                               not all(s.baseline for s in r.cells.values()), r.implementation))
    return result


def _protocol_title(protocol: Referenced, titles: dict[str, str]) -> str:
    return titles.get(protocol.digest or "", protocol.label)


def _family(key, members: list[AnalysedRun], sweep, baselines, titles,
            latest: dict[tuple, AnalysedRun], judged: GroupVerdicts) -> tuple[Family, list[tuple[Line, Cell]]]:
    first = members[0]
    free = sweep[0] if sweep else None
    family_title = common_title(sorted({titles.get(run.workload.digest or "", "") for run in members}))
    family_title = family_title or (first.workload.spec or {}).get("operation") or first.workload.label
    implementations = {run.implementation.digest: run.implementation for run in members}
    chosen = None
    for wanted in baselines:
        chosen = next((i for d, i in sorted(implementations.items(), key=lambda kv: kv[1].label)
                       if _matches(i, wanted)), None)
        if chosen is not None:
            break
    if chosen is None:
        chosen = min(members, key=lambda run: (run.observed, run.name)).implementation
    by_line: dict[str | None, dict] = {}
    by_shape: dict[tuple, list[AnalysedRun]] = {}
    observed: dict[str | None, list[AnalysedRun]] = {}
    for run in members:
        observed.setdefault(run.implementation.digest, []).append(run)
        x = _x_of(run, free)
        points = by_line.setdefault(run.implementation.digest, {})
        drawn = latest[_shape(run)]
        if x not in points or (drawn.observed, drawn.name) > (points[x].observed, points[x].name):
            points[x] = drawn
        by_shape.setdefault((run.workload.digest, run.implementation.digest), []).append(run)
    lines = []
    for digest, points in by_line.items():
        implementation = implementations[digest]
        label = line_label(implementation, titles.get(digest or ""), family_title)
        ordered = [Point(x, points[x]) for x in sorted(points, key=_x_order)]
        lines.append(Line(implementation, label, ordered, implementation.digest == chosen.digest,
                          tuple(observed[digest])))
    lines.sort(key=lambda line: (not line.baseline, line.label, line.implementation.digest or ""))
    measure = first.known_measure
    family = Family(
        id=page_id(list(key)),
        row=page_id(list(key[:3])),
        protocol=first.protocol,
        environment=first.environment,
        title=family_title,
        x_param=free,
        x_label=sweep[1] if sweep else "",
        metric=measure.metric,
        unit=measure.unit,
        lower_is_better=measure.lower_is_better,
        lines=lines,
        runs=len(members),
    )
    shapes: dict[str | None, set] = {}  # each line's workloads, found once for every line
    for workload, digest in by_shape:
        shapes.setdefault(digest, set()).add(workload)
    for runs_of_shape in by_shape.values():  # each shape's runs in order once, not once per line that reads them
        runs_of_shape.sort(key=_when)
    cells = []
    for line in lines:
        cells.append((line, _cell(family, line, chosen.digest, by_shape, shapes[line.implementation.digest], judged)))
    return family, cells


def _x_of(run: AnalysedRun, free: str | None):
    value = ((run.workload.spec or {}).get("parameters") or {}).get(free) if free else None
    if _numeric(value) or isinstance(value, str):
        return value
    return ""


def _x_order(x) -> tuple:
    return (0, x, "") if _numeric(x) else (1, 0, str(x))


def _when(run: AnalysedRun) -> tuple[str, str]:
    return run.observed, run.name


def _cell(family: Family, line: Line, baseline: str | None, by_shape: dict, shapes: set,
          judged: GroupVerdicts) -> Cell:
    """``shapes``: the workloads of the line's runs; ``by_shape``: each shape's runs, in the
    order observed; ``judged``: compare's rows of each shape's comparable group."""
    latest: list[float] = []
    verdicts: dict[str, int] = {}
    history: dict[str, list[float]] = {}
    for workload in sorted(shapes, key=str):
        base_runs = by_shape.get((workload, baseline), [])
        own = by_shape[(workload, line.implementation.digest)]
        if not base_runs:
            continue
        latest.append(_ratio(own[-1], base_runs[-1]))
        if line.implementation.digest != baseline:
            row = judged.rows(own[-1], baseline).get(line.implementation.digest)
            if row is not None:
                verdict = verdict_text(row.verdict, row.judgement)
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
        base_moments = [(_moment(b.observed), b) for b in base_runs]
        for run in own:
            nearest = base_runs[0] if len(base_runs) == 1 else _nearest(base_moments, _moment(run.observed))
            history.setdefault(run.observed[:10], []).append(_ratio(run, nearest))
    days = [(day, _geomean(values) or 1.0) for day, values in sorted(history.items())]
    return Cell(family, line, _geomean(latest), days, dict(sorted(verdicts.items())), tuple(latest))


def _nearest(runs: list[tuple[float | None, AnalysedRun]], moment: float | None) -> AnalysedRun:
    """The run observed nearest ``moment`` (then the earliest, then by name); a run
    without a moment is nearest to nothing."""
    def key(item: tuple[float | None, AnalysedRun]) -> tuple:
        when, run = item
        gap = math.inf if when is None or moment is None else abs(when - moment)
        return gap, run.observed, run.name

    return min(runs, key=key)[1]


@lru_cache(maxsize=65536)
def _moment(text: str) -> float | None:
    moment = observed_moment(text)
    return moment.timestamp() if moment is not None else None

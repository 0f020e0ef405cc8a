"""Plot data: the primary statistic against a swept parameter, one line per
implementation (or label value), one panel per comparable group. ``--y`` may draw the
run's speed of light instead (kidx.speed_of_light): achieved bandwidth, FLOP/s, or the
share of the GPU's published peak; a run whose cost or peak is unknown is left out.

A panel's runs share protocol and environment, and their workloads are equal except for
the swept field (``--x workload.spec.parameters.seq``): that is a comparable group with
one parameter set free. With lines per label value, a panel also holds one implementation.
A line holds one point per x value; a point measured more than once is drawn from its
latest observation.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from kidx.analysis.comparability import COMPARABLE_ROLES
from kidx.analysis.measures import Measure
from kidx.errors import NotFoundError, UsageError
from kidx.operations.select.analysed_runs import AnalysedRun, Referenced, select_runs
from kidx.query.reference_paths import FieldPath, value_at, without

MAX_PANELS = 12
# Workload.spec.key is a text form of the parameters and dtype (see its CRD): it varies
# with the swept parameter, so it does not set workloads apart here
DERIVED_WORKLOAD_FIELDS = ("key",)
# --y: what is drawn, as (metric, unit) of the measure each point gets; "statistic" is the
# run's own primary statistic
Y_QUANTITIES = {"bandwidth": ("achieved_bandwidth", "B/s"), "flops": ("achieved_flops", "FLOP/s"),
                "sol": ("speed_of_light", "%")}
Y_CHOICES = ("statistic", *Y_QUANTITIES)


class PlotRequest(NamedTuple):
    x: FieldPath
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # None: one line per implementation
    y: str = "statistic"  # or bandwidth, flops, sol (Y_QUANTITIES)


class PlotPoint(NamedTuple):
    x: float
    run: AnalysedRun


class Line(NamedTuple):
    label: str  # the implementation's name or the label value: what the csv and the SVG ids carry
    points: list[PlotPoint]
    title: str | None = None  # the legend's words: the implementation's title, less what every line shares


class Panel(NamedTuple):
    protocol: Referenced
    environment: Referenced
    workload: Referenced  # one of the panel's workloads, for its title
    fixed: dict  # the workload parameters shared by every point
    lines: list[Line]
    implementation: Referenced | None = None  # the panel's one implementation, with --by label
    x_label: str | None = None  # the harness's name for the swept parameter (Liger's x_label), where it says


class PlotData(NamedTuple):
    x: FieldPath
    panels: list[Panel]
    repeated: int  # points measured more than once (the latest drawn)
    left_out: list[str]  # runs with no figure, or no x value


def plot_data(store, registry, request: PlotRequest) -> PlotData:
    selection = select_runs(store, registry, request)
    if selection.missing:
        raise NotFoundError("; ".join(selection.missing))
    panels: dict[tuple, dict[str, dict[float, AnalysedRun]]] = {}
    firsts: dict[tuple, AnalysedRun] = {}
    left_out, repeated = [], 0
    for run in selection.runs:
        x = _x_value(run, request.x)
        line = run.labels.get(request.label_key) if request.label_key else run.implementation.label
        if request.y != "statistic":
            run = _speed_of_light(run, request.y)
        if run.measure is None or x is None or line is None:
            left_out.append(run.name)
            continue
        key = _panel_key(run, request.x)
        if request.label_key:  # lines are label values: one implementation per panel
            key += (run.implementation.digest,)
        firsts.setdefault(key, run)
        points = panels.setdefault(key, {}).setdefault(line, {})
        if x in points:
            repeated += 1
            if (run.observed, run.name) < (points[x].observed, points[x].name):
                continue
        points[x] = run
    if len(panels) > MAX_PANELS:
        raise UsageError(
            f"the selection holds {len(panels)} comparable groups (protocol, environment, workload apart from "
            f"{request.x.text}); plot draws at most {MAX_PANELS} panels and never mixes groups in one: "
            "narrow the selection with -l, --field-selector or --references"
        )
    result = []
    for key, lines in panels.items():
        first = firsts[key]
        units = {run.known_measure.unit for points in lines.values() for run in points.values()}
        if len(units) > 1:
            raise UsageError(f"panel {first.protocol.label} mixes units {sorted(units)}")
        drawn = [Line(label, [PlotPoint(x, points[x]) for x in sorted(points)])
                 for label, points in sorted(lines.items())]
        fixed: dict = {}
        if request.x.role == "workload" and first.workload.spec:
            fixed = without(first.workload.spec, request.x.keys[1:]).get("parameters") or {}
        implementation = first.implementation if request.label_key else None
        labels = {harness_x_label(run, request.x, x) for points in lines.values() for x, run in points.items()}
        x_label = labels.pop() if len(labels) == 1 else None
        result.append(Panel(first.protocol, first.environment, first.workload, fixed, drawn, implementation,
                            x_label))
    if not request.label_key:
        result = _titled(store, registry, result)
    result.sort(key=lambda panel: (panel.protocol.label, panel.environment.label, panel.workload.label,
                                   panel.implementation.label if panel.implementation else ""))
    return PlotData(request.x, result, repeated, left_out)


def harness_x_label(run: AnalysedRun, x_path: FieldPath, x: float) -> str | None:
    """What the harness called the swept parameter, where the run's source row says it
    (Liger's ``x_label``, kept with the row in an annotation), the row's x axis is the
    workload parameter ``--x`` names (as the importer names it) and its ``x_value`` is
    the point's x; None otherwise."""
    import csv

    from kidx.formats.liger import ANNOTATION_ROW, HEADER
    from kidx.formats.liger_fields import x_parameter_name

    if x_path.role != "workload" or len(x_path.keys) != 3 or x_path.keys[:2] != ("spec", "parameters"):
        return None

    row = ((run.manifest.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_ROW)
    if not isinstance(row, str):
        return None
    try:
        fields = next(csv.reader([row]))
    except (csv.Error, StopIteration):
        return None
    if len(fields) != len(HEADER):
        return None
    try:
        same = float(fields[HEADER.index("x_value")]) == x
    except ValueError:
        return None
    label = fields[HEADER.index("x_label")].strip()
    swept = x_parameter_name(fields[HEADER.index("x_name")], label)
    return label if same and label and swept == x_path.keys[2] else None


TITLE_SEPARATOR = " · "  # how the importers join a title's parts ("Jensen–Shannon divergence · Liger (Triton)")


def _titled(store, registry, panels: list[Panel]) -> list[Panel]:
    """Each line named by its implementation's title, without the parts every line of its
    panel shares ("Liger (Triton)" beside "PyTorch (eager)"); its name where it has no title."""
    kind = registry.resolve("implementations").kind
    digests = {line.points[0].run.implementation.digest for panel in panels for line in panel.lines}
    manifests = store.referenced_manifests({d for d in digests if d}, kind)
    titles = {digest: (manifest.get("metadata") or {}).get("title") for digest, manifest in manifests.items()}
    titled = []
    for panel in panels:
        found = [titles.get(line.points[0].run.implementation.digest) for line in panel.lines]
        parts = [title.split(TITLE_SEPARATOR) for title in found if isinstance(title, str) and title]
        shared = set.intersection(*map(set, parts)) if len(parts) > 1 else set()
        lines = []
        for line, title in zip(panel.lines, found, strict=True):
            if isinstance(title, str) and title:
                kept = [part for part in title.split(TITLE_SEPARATOR) if part not in shared]
                title = TITLE_SEPARATOR.join(kept) or title
            lines.append(line._replace(title=title or None))
        titled.append(panel._replace(lines=lines))
    return titled


def _speed_of_light(run: AnalysedRun, y: str) -> AnalysedRun:
    """The run with its speed of light as its measure (None when its cost or peak is
    unknown); the band from the latency band's ends, the slower end below."""
    from kidx.speed_of_light.achieved import achieved

    measure = run.measure
    if measure is None or measure.metric != "latency":
        return run._replace(measure=None)
    spec = run.manifest.get("spec") or {}
    environment = {"spec": run.environment.spec} if run.environment.spec is not None else None

    def figure(latency: float | None) -> float | None:
        found = achieved(spec, run.workload.spec, environment, latency) if latency else None
        if found is None:
            return None
        if y == "bandwidth":
            return found.bytes_per_second
        if y == "flops":
            return found.flops_per_second
        return found.peak.sol * 100 if found.peak is not None and found.peak.sol is not None else None

    value = figure(measure.value)
    if value is None:
        return run._replace(measure=None)
    low, high = figure(measure.high), figure(measure.low)
    if low is None or high is None:
        low = high = None
    metric, unit = Y_QUANTITIES[y]
    return run._replace(measure=Measure(metric, measure.statistic, value, unit, low, high, None, measure.band))


def _document(run: AnalysedRun, role: str | None) -> dict | None:
    if role is None:
        return run.manifest
    referenced = run.reference(role)
    if referenced.spec is None:
        return None
    return {"spec": referenced.spec, "metadata": {"name": referenced.name}}


def _x_value(run: AnalysedRun, x: FieldPath) -> float | None:
    value = value_at(_document(run, x.role), x.keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if value is not None:
            raise UsageError(f"--x {x.text} must be a number: run {run.name} has {json.dumps(value)}")
        return None
    return value


def _panel_key(run: AnalysedRun, x: FieldPath) -> tuple:
    key: list[str | None] = []
    for role in COMPARABLE_ROLES:
        referenced = run.reference(role)
        if role == x.role and referenced.spec is not None and x.keys[0] == "spec":
            free = without(referenced.spec, x.keys[1:])
            if role == "workload":
                free = without(free, DERIVED_WORKLOAD_FIELDS)
            key.append(json.dumps(free, sort_keys=True))
        else:
            key.append(referenced.digest)
    return tuple(key)

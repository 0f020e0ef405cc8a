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
from kidx.operations.analysed_runs import AnalysedRun, Referenced, select_runs
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
    label: str
    points: list[PlotPoint]


class Panel(NamedTuple):
    protocol: Referenced
    environment: Referenced
    workload: Referenced  # one of the panel's workloads, for its title
    fixed: dict  # the workload parameters shared by every point
    lines: list[Line]
    implementation: Referenced | None = None  # the panel's one implementation, with --by label


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
        result.append(Panel(first.protocol, first.environment, first.workload, fixed, drawn, implementation))
    result.sort(key=lambda panel: (panel.protocol.label, panel.environment.label, panel.workload.label,
                                   panel.implementation.label if panel.implementation else ""))
    return PlotData(request.x, result, repeated, left_out)


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

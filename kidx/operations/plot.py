"""Plot data: the primary statistic against a swept parameter, one line per
implementation (or label value), one panel per comparable group.

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
from kidx.errors import KidxError, UsageError
from kidx.operations.analysed_runs import AnalysedRun, Referenced, select_runs
from kidx.query.reference_paths import FieldPath, value_at, without

MAX_PANELS = 12
# Workload.spec.key is a text form of the parameters and dtype (see its CRD): it varies
# with the swept parameter, so it does not set workloads apart here
DERIVED_WORKLOAD_FIELDS = ("key",)


class PlotRequest(NamedTuple):
    x: FieldPath
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # None: one line per implementation


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
        raise KidxError("; ".join(selection.missing))
    panels: dict[tuple, dict[str, dict[float, AnalysedRun]]] = {}
    firsts: dict[tuple, AnalysedRun] = {}
    left_out, repeated = [], 0
    for run in selection.runs:
        x = _x_value(run, request.x)
        line = run.labels.get(request.label_key) if request.label_key else run.implementation.label
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

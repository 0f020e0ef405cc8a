"""Series: one (protocol, workload, environment, implementation) over time.

Each series' runs are ordered by ``observedAt`` (then name); each point is judged against
the previous one by the same rule as compare. With a baseline implementation, each point
is also set against the baseline's run measured in the same session: same protocol,
workload and environment, the same value of the release label when one is named, and
observed within SESSION_WINDOW of the point. The speedup over that run, and its change
from the previous point, tell a kernel change (latency moves, the baseline does not) from
a machine change (both move together). The baseline's runs must be in the selection.
"""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

from kidx.analysis.measures import observed_moment
from kidx.analysis.significance import DEFAULT_THRESHOLD, Judgement, judge, rule_text
from kidx.errors import KidxError
from kidx.operations.analysed_runs import AnalysedRun, Referenced, select_runs

SESSION_WINDOW = timedelta(hours=1)
SERIES_ROLES = ("protocol", "workload", "environment", "implementation")


class SeriesRequest(NamedTuple):
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # the release label shown at each point
    baseline: str | None = None  # an implementation (name or library) measured in the same sessions
    threshold: float = DEFAULT_THRESHOLD


class Point(NamedTuple):
    run: AnalysedRun
    label: str | None
    change: Judgement | None  # against the previous point; None for the first
    verdict: str | None  # faster, slower, same; None for the first point
    baseline: AnalysedRun | None  # the baseline implementation's run in the same session
    speedup: float | None  # baseline / value (how many times better than the baseline)
    speedup_change: float | None  # speedup / previous speedup - 1


class Series(NamedTuple):
    protocol: Referenced
    workload: Referenced
    environment: Referenced
    implementation: Referenced
    points: list[Point]


class SeriesResult(NamedTuple):
    series: list[Series]  # with at least two points
    single: int  # series of one point, not shown
    rule: str
    threshold: float
    label_key: str | None
    baseline: str | None
    unmeasured: list[str]
    inputs: tuple[AnalysedRun, ...] = ()  # every run read

    @property
    def regressions(self) -> list[Point]:
        return [point for series in self.series for point in series.points if point.verdict == "slower"]


def build_series(store, registry, request: SeriesRequest) -> SeriesResult:
    selection = select_runs(store, registry, request)
    if selection.missing:
        raise KidxError("; ".join(selection.missing))
    measured = [run for run in selection.runs if run.measure is not None]
    buckets: dict[tuple, list[AnalysedRun]] = {}
    for run in measured:
        buckets.setdefault(tuple(run.reference(role).digest for role in SERIES_ROLES), []).append(run)
    sessions = _baseline_runs(measured, request.baseline) if request.baseline else {}
    series, single = [], 0
    for members in buckets.values():
        if len(members) < 2:
            single += 1
            continue
        members.sort(key=lambda run: (run.observed, run.name))
        series.append(_series(members, request, sessions))
    series.sort(key=lambda s: tuple(getattr(s, role).label for role in SERIES_ROLES))
    return SeriesResult(series, single, rule_text(request.threshold), request.threshold, request.label_key,
                        request.baseline, [run.name for run in selection.runs if run.measure is None],
                        inputs=tuple(selection.runs))


def _baseline_runs(runs: list[AnalysedRun], baseline: str) -> dict[tuple, list[AnalysedRun]]:
    found: dict[tuple, list[AnalysedRun]] = {}
    for run in runs:
        implementation = run.implementation
        if baseline in (implementation.name, implementation.digest, (implementation.spec or {}).get("library")):
            key = tuple(run.reference(role).digest for role in SERIES_ROLES[:3])
            found.setdefault(key, []).append(run)
    return found


def _same_session(run: AnalysedRun, sessions: dict, label_key: str | None) -> AnalysedRun | None:
    candidates = sessions.get(tuple(run.reference(role).digest for role in SERIES_ROLES[:3]), [])
    moment = observed_moment(run.observed)
    best, best_gap = None, None
    for candidate in candidates:
        if label_key is not None and candidate.labels.get(label_key) != run.labels.get(label_key):
            continue
        when = observed_moment(candidate.observed)
        if moment is None or when is None:
            continue
        gap = abs(when - moment)
        if gap <= SESSION_WINDOW and (best_gap is None or gap < best_gap):
            best, best_gap = candidate, gap
    return best


def _series(members: list[AnalysedRun], request: SeriesRequest, sessions: dict) -> Series:
    points: list[Point] = []
    previous: Point | None = None
    for run in members:
        label = run.labels.get(request.label_key) if request.label_key else None
        baseline = _same_session(run, sessions, request.label_key) if request.baseline else None
        speedup = None
        if baseline is not None and run.known_measure.value:
            speedup = judge(run.known_measure, baseline.known_measure, request.threshold).speedup
        change = verdict = speedup_change = None
        if previous is not None:
            change = judge(run.known_measure, previous.run.known_measure, request.threshold)
            verdict = change.verdict
            if speedup is not None and previous.speedup:
                speedup_change = speedup / previous.speedup - 1
        point = Point(run, label, change, verdict, baseline, speedup, speedup_change)
        points.append(point)
        previous = point
    first = members[0]
    return Series(first.protocol, first.workload, first.environment, first.implementation, points)

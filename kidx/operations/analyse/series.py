"""Series: one implementation, workload and protocol over time on one kind of machine.

A series' points are its runs ordered by ``observedAt`` (then name); its key is
``kidx.analysis.comparability.series_key`` (a software upgrade stays in the series). Over
the whole series, change points are found (E-Divisive means, ``kidx.analysis.changepoints``),
each with its size, p-value and cause: what differs between the points on either side
(the release label, environment fields such as ``torch 2.9.0 → 2.11.0`` or the GPU, the
protocol) or nothing ("same kernel, machine and harness"). Each point is also judged
against the previous one by compare's rule, with the between-run noise taken from the
series' other points within their segment (conbench's lookback).

With a baseline implementation, each point is also set against the baseline's run measured
in the same session: same protocol, workload and environment, the same value of the
release label when one is named, and observed within SESSION_WINDOW of the point. The
speedup over that run, and its change from the previous point, tell a kernel change
(latency moves, the baseline does not) from a machine change (both move together). The
baseline's runs must be in the selection.

With a tail (``SeriesRequest.tail``, ``kidx series --tail N``), each series shows its N
newest points, judged as above over the points read: those N and the one before them,
which the first shown point is judged against. The selection is read from the catalog's
rows alone (references, status, observedAt: no object read); only each series' newest
runs are then read in full, N + 1 of them (more only where some have no figure of the
series' metric), and the baseline's runs measured within SESSION_WINDOW of them: what is
read and judged follows N, not the length of the series.
"""

from __future__ import annotations

from datetime import timedelta
from typing import NamedTuple

from kidx.analysis.changepoints import ChangePoint, change_points, segment_noise
from kidx.analysis.comparability import comparable_key, series_key
from kidx.analysis.hostbound import is_kernel_timer, timer_of
from kidx.analysis.measures import observed_moment
from kidx.analysis.significance import (
    ALPHA,
    CONFIRM_RUNS,
    DEFAULT_THRESHOLD,
    FLOOR_SHARE,
    REGRESSIONS,
    SLOWER,
    Floors,
    Judgement,
    floors_of,
    judge,
    judge_runs,
    least_change,
    least_t,
    rule_text,
)
from kidx.errors import NotFoundError
from kidx.operations.select.analysed_runs import (
    RUN_KIND,
    AnalysedRun,
    Referenced,
    Selection,
    read_runs,
    select_runs,
)

SESSION_WINDOW = timedelta(hours=1)
SAME_EVERYTHING = "same kernel, machine and harness"


class SeriesRequest(NamedTuple):
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # the release label shown at each point
    baseline: str | None = None  # an implementation (name, library or provider) measured in the same sessions
    threshold: float | None = DEFAULT_THRESHOLD  # None: it follows the evidence
    alpha: float = ALPHA
    min_t: float | None = None  # None: by the timer (significance.least_t)
    confirm_runs: int = CONFIRM_RUNS  # points a side that must agree on a change (1: one point suffices)
    # a kernel timer's points are judged on their floors where those are under this share of the
    # statistics' spread between runs (significance.FLOOR_SHARE; 0: never)
    floor_share: float = FLOOR_SHARE
    # more baselines in order of preference: each comparable group is set against the
    # first of them it holds (publish's repeatable --baseline); ``baseline`` comes first
    more_baselines: tuple[str, ...] = ()
    tail: int | None = None  # each series' newest points to show (and the one before, read); None: all

    @property
    def baselines(self) -> tuple[str, ...]:
        return ((self.baseline,) if self.baseline else ()) + self.more_baselines


class Point(NamedTuple):
    run: AnalysedRun
    label: str | None
    change: Judgement | None  # against the previous point; None for the first
    verdict: str | None  # faster, slower, same, inconclusive, unconfirmed; None for the first point
    baseline: AnalysedRun | None  # the baseline implementation's run in the same session
    speedup: float | None  # baseline / value (how many times better than the baseline)
    speedup_change: float | None  # speedup / previous speedup - 1


class SeriesChange(NamedTuple):
    """A change point: the level moved from the run before to ``run``."""

    point: ChangePoint
    run: AnalysedRun  # the first run after the change
    before: AnalysedRun  # the last run before it
    cause: list[str]  # what differs between the two; [SAME_EVERYTHING] when nothing does


class Series(NamedTuple):
    protocol: Referenced
    workload: Referenced
    environment: Referenced
    implementation: Referenced
    points: list[Point]
    changes: list[SeriesChange] = []
    # with a tail: the point read before the first shown, which that one is judged against
    previous: Point | None = None

    @property
    def points_read(self) -> int:
        """The points the verdicts and change points were found over."""
        return len(self.points) + (self.previous is not None)

    @property
    def environments(self) -> list[Referenced]:
        seen: dict[str | None, Referenced] = {}
        for point in self.points:
            seen.setdefault(point.run.environment.digest, point.run.environment)
        return list(seen.values())


class SeriesResult(NamedTuple):
    series: list[Series]  # with at least two points
    single: int  # series of one point, not shown
    rule: str
    threshold: float | None
    label_key: str | None
    baseline: str | None
    unmeasured: list[str]
    alpha: float = ALPHA
    min_t: float | None = None  # None: by the timer (significance.least_t)
    problems: tuple[str, ...] = ()  # what kept the series from being judged
    inputs: tuple[AnalysedRun, ...] = ()

    @property
    def regressions(self) -> list[Point]:
        return [point for series in self.series for point in series.points if point.verdict in REGRESSIONS]

    @property
    def verdicts(self) -> list[str | None]:
        """Each shown point's verdict against the point before it (the first point of a
        series has none, unless a tail hid the one before it)."""
        return [point.verdict for series in self.series for point in series.points if point.change is not None]

    @property
    def slower_changes(self) -> list[SeriesChange]:
        """The change points where the level moved the worse way. Each is beyond the
        threshold and significant, so each is a regression even where no step between
        neighbours was beyond the threshold (a drift of many small steps)."""
        return [change for series in self.series for change in series.changes
                if change.run.known_measure.direction is not None
                and (change.point.change > 0) == change.run.known_measure.lower_is_better
                and change.point.change != 0]

    @property
    def gate_verdicts(self) -> list[str | None]:
        """What --fail-on-… judges: each step's verdict, and ``slower`` for each slower change point."""
        return [*self.verdicts, *(SLOWER for _ in self.slower_changes)]

    def counts(self) -> dict[str, int]:
        counted: dict[str, int] = {}
        for verdict in self.verdicts:
            if verdict is not None:
                counted[verdict] = counted.get(verdict, 0) + 1
        return counted


class SeriesReading(NamedTuple):
    """What ``build_series`` reads before it judges: the selection, its measured runs, and
    each series' runs in order (two or more; in the order the series were first met)."""

    selection: Selection
    measured: list[AnalysedRun]
    members: list[list[AnalysedRun]]
    single: int  # series of one point, not shown
    sessions: dict[tuple, list[AnalysedRun]]  # the baseline runs, per comparable group
    # with a tail: the runs read in full, in the selection's order (the selection's runs
    # are then its catalog rows); None: every selected run was read in full
    read: list[AnalysedRun] | None = None


def build_series(store, registry, request: SeriesRequest) -> SeriesResult:
    reading = read_series(store, registry, request)
    return series_result(store, registry, request, reading,
                         [_shown(_series(members, request, reading.sessions), request.tail)
                          for members in reading.members])


def read_series(store, registry, request: SeriesRequest) -> SeriesReading:
    """The selected runs, in series: everything ``build_series`` judges them from."""
    if request.tail is not None:
        return _read_tail(store, registry, request, request.tail)
    selection = select_runs(store, registry, request)
    if selection.missing:
        raise NotFoundError("; ".join(selection.missing))
    measured = [run for run in selection.runs if run.measure is not None]
    series, single = _in_series(measured, None)
    sessions = _baseline_runs(measured, request.baselines) if request.baselines else {}
    return SeriesReading(selection, measured, series, single, sessions)


def _in_series(measured: list[AnalysedRun], newest: int | None) -> tuple[list[list[AnalysedRun]], int]:
    """The measured runs by series and metric, each oldest first (its ``newest`` runs
    only, if given), and how many series held a single run (not a series)."""
    buckets: dict[tuple, list[AnalysedRun]] = {}
    for run in measured:
        buckets.setdefault((*series_key(run), run.known_measure.metric), []).append(run)
    series, single = [], 0
    for members in buckets.values():
        if len(members) < 2:
            single += 1
            continue
        members.sort(key=lambda run: (run.observed, run.name))
        series.append(members if newest is None else members[-newest:])
    return series, single


def _read_tail(store, registry, request: SeriesRequest, tail: int) -> SeriesReading:
    """``read_series`` with a ``tail`` of N: the selection as catalog rows; of each series
    the newest N + 1 runs that passed, by (observedAt, name), read in full, newest first,
    N + 1 at a time until each metric among them has N + 1 runs with a figure or none is
    left; with a baseline, its runs within SESSION_WINDOW of a run read. Each series keeps
    its newest N + 1 points."""
    selection = select_runs(store, registry, request, rows_only=True)
    if selection.missing:
        raise NotFoundError("; ".join(selection.missing))
    wanted = tail + 1
    groups: dict[tuple, list[AnalysedRun]] = {}
    for row in selection.runs:
        if row.status == "passed":  # a run that did not pass has no figure: never read
            groups.setdefault(series_key(row), []).append(row)
    for rows in groups.values():
        rows.sort(key=lambda run: (run.observed, run.name), reverse=True)
    read: dict[str, AnalysedRun] = {}
    pending, start = list(groups.values()), 0
    while pending:
        for run in read_runs(store, registry, [row for rows in pending for row in rows[start:start + wanted]]):
            read[run.name] = run
        start += wanted
        pending = [rows for rows in pending if len(rows) > start and not _enough(rows[:start], read, wanted)]
    if request.baselines:
        near = _near_baselines(selection.runs, list(read.values()), request.baselines)
        for run in read_runs(store, registry, [row for row in near if row.name not in read]):
            read[run.name] = run
    runs = [read[row.name] for row in selection.runs if row.name in read]
    measured = [run for run in runs if run.measure is not None]
    series, single = _in_series(measured, wanted)
    sessions = _baseline_runs(measured, request.baselines) if request.baselines else {}
    return SeriesReading(selection, measured, series, single, sessions, runs)


def _enough(rows: list[AnalysedRun], read: dict[str, AnalysedRun], wanted: int) -> bool:
    """Whether the runs of ``rows`` read hold ``wanted`` runs with a figure of each metric among them."""
    counted: dict[str, int] = {}
    for row in rows:
        measure = read[row.name].measure
        if measure is not None:
            counted[measure.metric] = counted.get(measure.metric, 0) + 1
    return bool(counted) and all(count >= wanted for count in counted.values())


def _near_baselines(rows: list[AnalysedRun], read: list[AnalysedRun],
                    baselines: tuple[str, ...]) -> list[AnalysedRun]:
    """The ``rows`` of a baseline implementation that passed, observed within SESSION_WINDOW
    of a run ``read`` of their comparable group: the ones a point read may be set against."""
    moments: dict[tuple, list] = {}
    for run in read:
        moment = observed_moment(run.observed)
        if moment is not None:
            moments.setdefault(comparable_key(run), []).append(moment)
    wanted = set(baselines)
    near = []
    for row in rows:
        if row.status != "passed" or not row.implementation_names() & wanted:
            continue
        moment = observed_moment(row.observed)
        if moment is not None and any(abs(moment - other) <= SESSION_WINDOW
                                      for other in moments.get(comparable_key(row), ())):
            near.append(row)
    return near


def _shown(series: Series, tail: int | None) -> Series:
    """The series' newest ``tail`` points (all, where ``tail`` is None or it has no more),
    the one before them kept as ``previous``, the change points' positions among those shown."""
    if tail is None or len(series.points) <= tail:
        return series
    hidden = len(series.points) - tail
    return series._replace(
        points=series.points[hidden:], previous=series.points[hidden - 1],
        changes=[change._replace(point=change.point._replace(position=change.point.position - hidden))
                 for change in series.changes if change.point.position >= hidden])


def judged(reading: SeriesReading, request: SeriesRequest) -> list[tuple[list[tuple], list[tuple]]]:
    """Each series' judgements (``_series``) without its runs: per point its change,
    verdict, baseline run (its position among ``reading.measured``), speedup and
    speedup's change; per change point the point and its cause. Small to send from a
    process that worked them out (``kidx publish``); ``series_of`` makes the series again."""
    position = {id(run): index for index, run in enumerate(reading.measured)} if reading.sessions else {}
    found = []
    for members in reading.members:
        one = _series(members, request, reading.sessions)
        found.append(([(point.change, point.verdict, None if point.baseline is None else position[id(point.baseline)],
                        point.speedup, point.speedup_change) for point in one.points],
                      [(change.point, change.cause) for change in one.changes]))
    return found


def series_of(reading: SeriesReading, request: SeriesRequest,
              judgements: list[tuple[list[tuple], list[tuple]]]) -> list[Series]:
    """The series ``_series`` makes, from their ``judged`` judgements."""
    made = []
    for members, (points, changes) in zip(reading.members, judgements, strict=True):
        first = members[0]
        made.append(Series(
            first.protocol, first.workload, first.environment, first.implementation,
            [Point(run, run.labels.get(request.label_key) if request.label_key else None, change, verdict,
                   None if baseline is None else reading.measured[baseline], speedup, speedup_change)
             for run, (change, verdict, baseline, speedup, speedup_change) in zip(members, points, strict=True)],
            [SeriesChange(point, members[point.position], members[point.position - 1], cause)
             for point, cause in changes]))
    return made


def series_result(store, registry, request: SeriesRequest, reading: SeriesReading,
                  series: list[Series]) -> SeriesResult:
    """``build_series``' result: the ``reading``'s ``series`` (``_series`` of each of its
    members, in their order) sorted, and what kept any from being judged."""
    selection, measured, sessions = reading.selection, reading.measured, reading.sessions
    series = sorted(series, key=lambda s: (s.protocol.label, s.workload.label, s.environment.label,
                                           s.implementation.label))
    problems = []
    if not selection.runs:
        from kidx.operations.select.selection_hint import nothing_selected

        problems.append(nothing_selected(store.catalog(), registry.resolve(RUN_KIND).kind, request.selector))
    elif not series:
        problems.append(f"no series of two or more points among the {len(selection.runs)} selected runs")
    if request.label_key and measured and not any(request.label_key in run.labels for run in measured):
        keys = sorted({key for run in measured for key in run.labels})
        problems.append(f"no selected run has the label {request.label_key} (--label); labels the selected runs "
                        f"carry: {', '.join(keys[:8])}")
    if request.baselines and measured and not sessions:
        present = sorted({run.implementation.label for run in measured})
        problems.append(f"no selected run's implementation is {' or '.join(request.baselines)} (--baseline: a name, "
                        "library or "
                        f"provider label); implementations present: {', '.join(present[:8])}")
    rule = rule_text(request.threshold, request.alpha, request.min_t, request.confirm_runs, request.floor_share)
    if reading.read is None:
        unmeasured, inputs = [run.name for run in selection.runs if run.measure is None], selection.runs
    else:  # a tail: the selection's rows that did not pass, the runs read without a figure
        unmeasured = [run.name for run in selection.runs if run.status != "passed"]
        unmeasured += [run.name for run in reading.read if run.measure is None]
        inputs = reading.read
    return SeriesResult(series, reading.single, rule,
                        request.threshold, request.label_key, request.baseline,
                        unmeasured, request.alpha, request.min_t,
                        tuple(problems), tuple(inputs))


def _baseline_runs(runs: list[AnalysedRun], baselines: tuple[str, ...]) -> dict[tuple, list[AnalysedRun]]:
    """Per comparable group, the runs of the first of ``baselines`` it holds."""
    found: dict[tuple, tuple[int, list[AnalysedRun]]] = {}
    for run in runs:
        names = run.implementation_names()
        rank = next((i for i, baseline in enumerate(baselines) if baseline in names), None)
        if rank is None:
            continue
        key = comparable_key(run)
        if key not in found or rank < found[key][0]:
            found[key] = (rank, [run])
        elif rank == found[key][0]:
            found[key][1].append(run)
    return {key: members for key, (_, members) in found.items()}


def _same_session(run: AnalysedRun, sessions: dict, label_key: str | None) -> AnalysedRun | None:
    candidates = sessions.get(comparable_key(run), [])
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


def _neighbours(members: list[AnalysedRun], values: list[float], index: int,
                confirm_runs: int) -> tuple[list[float], list[float]]:
    """What confirms the step into point ``index``: that point and the ones after it, and
    the one before it and those before that, ``confirm_runs`` a side at most, all on the
    point's environment (kidx.analysis.significance.unconfirmed_because). The latest
    point's change waits for the next run; a point off both its neighbours is an outlier."""
    environment = members[index].environment.digest

    def on_environment(positions) -> list[float]:
        found = []
        for position in positions:
            if members[position].environment.digest != environment:
                break
            found.append(values[position])
        return found

    after = on_environment(range(index, min(len(values), index + max(confirm_runs, 1))))
    before = on_environment(range(index - 1, max(-1, index - 1 - max(confirm_runs, 1)), -1))
    return after, before


def _floors(members: list[AnalysedRun], floors: list[float] | None, found: list, index: int,
            confirm_runs: int) -> Floors | None:
    """The floors of point ``index`` and the one before it, with the series' spread of floors
    and the neighbours that would confirm a step between them (``_neighbours``)."""
    if floors is None:
        return None
    noise = segment_noise(floors, found, frozenset((index - 1, index)))
    if members[index - 1].environment.digest != members[index].environment.digest:
        noise = noise._replace(df=0)
    return Floors([floors[index]], [floors[index - 1]], noise, _neighbours(members, floors, index, confirm_runs))


def _series(members: list[AnalysedRun], request: SeriesRequest, sessions: dict) -> Series:
    values = [run.known_measure.value for run in members]
    kernel_timer = is_kernel_timer(timer_of(members[0].protocol.spec))  # a series has one protocol
    floor = least_change(kernel_timer)
    min_t = request.min_t if request.min_t is not None else least_t(kernel_timer)
    floors = floors_of([run.known_measure for run in members]) if kernel_timer else None
    # the floors' spread is pooled between their own change points: a step the statistics
    # blur may stand out in the floors
    counted = request.threshold if request.threshold is not None else floor
    found = change_points(values, counted)
    floor_points = change_points(floors, counted) if floors else []
    points: list[Point] = []
    previous: Point | None = None
    for index, run in enumerate(members):
        label = run.labels.get(request.label_key) if request.label_key else None
        baseline = _same_session(run, sessions, request.label_key) if sessions else None
        speedup = None
        if baseline is not None and run.known_measure.value:
            speedup = judge(run.known_measure, baseline.known_measure).speedup
        change = verdict = speedup_change = None
        if previous is not None:
            before = previous.run
            noise = segment_noise(values, found, frozenset((index - 1, index)))
            if before.environment.digest != run.environment.digest:
                noise = noise._replace(df=0)  # another environment: no noise estimate carries over
            change = judge_runs(run.known_measure, before.known_measure, [values[index]], [values[index - 1]],
                                noise, request.threshold, request.alpha, min_t, request.confirm_runs,
                                _neighbours(members, values, index, request.confirm_runs), floor=floor,
                                floors=_floors(members, floors, floor_points, index, request.confirm_runs),
                                floor_share=request.floor_share)
            verdict = change.verdict
            if speedup is not None and previous.speedup:
                speedup_change = speedup / previous.speedup - 1
        point = Point(run, label, change, verdict, baseline, speedup, speedup_change)
        points.append(point)
        previous = point
    changes = [SeriesChange(point, members[point.position], members[point.position - 1],
                            cause(members[point.position - 1], members[point.position], request.label_key))
               for point in found]
    first = members[0]
    return Series(first.protocol, first.workload, first.environment, first.implementation, points, changes)


def cause(before: AnalysedRun, after: AnalysedRun, label_key: str | None) -> list[str]:
    """What differs between two points of a series, in words."""
    causes = []
    if label_key is not None and before.labels.get(label_key) != after.labels.get(label_key):
        causes.append(f"{label_key} {before.labels.get(label_key, '<none>')} → {after.labels.get(label_key, '<none>')}")
    if before.environment.digest != after.environment.digest:
        causes.extend(_environment_changes(before.environment, after.environment))
    if before.protocol.digest != after.protocol.digest:
        causes.append(f"protocol {before.protocol.label} → {after.protocol.label}")
    return causes or [SAME_EVERYTHING]


def _environment_changes(before: Referenced, after: Referenced) -> list[str]:
    old, new = before.spec or {}, after.spec or {}
    changes = []
    old_gpu = (old.get("hardware") or {}).get("product")
    new_gpu = (new.get("hardware") or {}).get("product")
    if old_gpu != new_gpu:
        changes.append(f"GPU {old_gpu or '<none>'} → {new_gpu or '<none>'}")
    old_software, new_software = old.get("software") or {}, new.get("software") or {}
    for name in sorted(set(old_software) | set(new_software)):
        if old_software.get(name) != new_software.get(name):
            changes.append(f"{name} {old_software.get(name, '<none>')} → {new_software.get(name, '<none>')}")
    return changes or [f"environment {before.label} → {after.label}"]

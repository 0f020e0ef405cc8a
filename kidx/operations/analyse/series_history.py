"""The store's other runs of each compared series, whose spread between runs the verdicts
rest on (``kidx compare``'s history): the runs of a series oldest first, the change points
of their statistics and of their floors, and the spread within the segments between them."""

from __future__ import annotations

from kidx.analysis.changepoints import change_points, segment_noise
from kidx.analysis.comparability import comparable_key
from kidx.analysis.significance import NO_NOISE, Noise, floors_of
from kidx.operations.select.analysed_runs import AnalysedRun


class SeriesHistory:
    """The store's runs of each series, oldest first, with their change points."""

    def __init__(self, runs: list[AnalysedRun]):
        self._series: dict[tuple, list[AnalysedRun]] = {}
        for run in runs:
            if run.measure is not None:
                self._series.setdefault(series_of(run), []).append(run)
        self._ordered: set[tuple] = set()
        self._points: dict[tuple, list] = {}
        self._floor_points: dict[tuple, list] = {}
        self._floors: dict[tuple, list[float] | None] = {}
        self._asked: dict[str, AnalysedRun] = {}

    @property
    def asked(self) -> list[AnalysedRun]:
        """The runs whose series' noise was asked for, in the order asked."""
        return list(self._asked.values())

    def noise(self, run: AnalysedRun, left_out: set[str]) -> Noise:
        """The between-run spread of ``run``'s series, leaving out the named runs."""
        self._asked.setdefault(run.name, run)
        key = series_of(run)
        members = self._members(key)
        if len(members) < 2:
            return NO_NOISE
        return _spread(key, [r.known_measure.value for r in members], self._points, members, left_out)

    def floor_noise(self, run: AnalysedRun, left_out: set[str]) -> Noise:
        """The between-run spread of the floors of ``run``'s series, pooled between the
        floors' own change points and leaving out the named runs; none where a run of the
        series has no floor."""
        key = series_of(run)
        members = self._members(key)
        if len(members) < 2:
            return NO_NOISE
        if key not in self._floors:
            self._floors[key] = floors_of([r.known_measure for r in members])
        floors = self._floors[key]
        return NO_NOISE if floors is None else _spread(key, floors, self._floor_points, members, left_out)

    def _members(self, key: tuple) -> list[AnalysedRun]:
        """The series' runs, oldest first (sorted once)."""
        members = self._series.get(key, [])
        if key not in self._ordered:
            members.sort(key=lambda r: (r.observed, r.name))
            self._ordered.add(key)
        return members


def _spread(key: tuple, values: list[float], points: dict[tuple, list], members: list[AnalysedRun],
            left_out: set[str]) -> Noise:
    """The spread of ``values`` (one per member) within the segments between their change
    points (found once per series, kept in ``points``), without the named runs."""
    if key not in points:
        points[key] = change_points(values)
    out = frozenset(i for i, r in enumerate(members) if r.name in left_out)
    return segment_noise(values, points[key], out)


def series_of(run: AnalysedRun) -> tuple:
    return (*comparable_key(run), run.implementation.digest, run.known_measure.metric)

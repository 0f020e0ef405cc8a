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
        members = self._series.get(key, [])
        if len(members) < 2:
            return NO_NOISE
        if key not in self._points:
            members.sort(key=lambda r: (r.observed, r.name))
            self._points[key] = change_points([r.known_measure.value for r in members])
        values = [r.known_measure.value for r in members]
        out = frozenset(i for i, r in enumerate(members) if r.name in left_out)
        return segment_noise(values, self._points[key], out)

    def floor_noise(self, run: AnalysedRun, left_out: set[str]) -> Noise:
        """The between-run spread of the floors of ``run``'s series, pooled between the
        floors' own change points and leaving out the named runs; none where a run of the
        series has no floor."""
        self.noise(run, left_out)  # the series' members, in order
        key = series_of(run)
        members = self._series.get(key, [])
        if key not in self._floors:
            self._floors[key] = floors_of([r.known_measure for r in members]) if len(members) >= 2 else None
        floors = self._floors[key]
        if floors is None:
            return NO_NOISE
        if key not in self._floor_points:
            self._floor_points[key] = change_points(floors)
        out = frozenset(i for i, r in enumerate(members) if r.name in left_out)
        return segment_noise(floors, self._floor_points[key], out)


def series_of(run: AnalysedRun) -> tuple:
    return (*comparable_key(run), run.implementation.digest, run.known_measure.metric)

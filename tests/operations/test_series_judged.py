"""kidx.operations.analyse.series: the series' judgements worked out apart from their runs (as a
process beside ``kidx publish``'s sends them) make the very series ``build_series`` does."""

from __future__ import annotations

import pickle

from kidx.cli.common import kind_registry, open_store
from kidx.operations.analyse.series import SeriesRequest, build_series, judged, read_series, series_of, series_result


def test_judged_series_sent_pickled_are_the_series_build_series_makes(history_store):
    store, registry = open_store(str(history_store)), kind_registry()
    request = SeriesRequest(names=[], label_key="liger_version", baseline="transformers")
    built = build_series(store, registry, request)
    reading = read_series(store, registry, request)
    sent = pickle.loads(pickle.dumps(judged(reading, request)))
    made = series_result(store, registry, request, reading, series_of(reading, request, sent))
    assert len(made.series) == 178 and made.verdicts.count(None) == 0
    assert made == built
    # a point's baseline is the selection's own run, not a copy of it
    baselines = [point.baseline for one in made.series for point in one.points if point.baseline is not None]
    assert baselines and all(any(b is run for run in reading.measured) for b in baselines[:50])

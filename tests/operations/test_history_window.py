"""compare and describe read a window of each series' history, not the whole of it: the
HISTORY_WINDOW runs applied most recently (kidx.analysis.window), plus the selected runs.
A series longer than the window is judged as a store holding only its window would be,
and what a command reads stays the same however long the series grow."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from kidx.analysis.window import HISTORY_WINDOW
from kidx.operations.analyse import compare as compare_operation
from kidx.query.label_selector import Requirement
from kidx.store.catalog import RECENT, CatalogQuery, ReferenceCondition
from kidx.store.store import Store

pytestmark = pytest.mark.both_backends

PROTOCOL = "sha256:" + "1" * 64
WORKLOAD = "sha256:" + "2" * 64
ENVIRONMENT = "sha256:" + "3" * 64
OLD = 50  # the oldest runs of each series, beyond the window
NIGHTS = HISTORY_WINDOW + OLD
LEVELS = {"a": 1000.0, "b": 1100.0}  # µs: b is 10% slower, recently


def _run(implementation: str, night: int) -> str:
    """A latency run of ``implementation``'s series on ``night``: within the window steady
    (±0.2%); before it at another level and noisy (±30%)."""
    if night < OLD:
        median = LEVELS[implementation] * 0.8 * (1.3 if night % 2 else 0.7)
    else:
        median = LEVELS[implementation] * (1 + 0.001 * (night % 5 - 2))
    return f"""apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {implementation}-{night:04d}}}
spec:
  status: passed
  observedAt: "{(datetime(2026, 1, 1) + timedelta(days=night)).isoformat()}Z"
  timing: {{latencyNs: {{median: {round(median * 1000)}}}, primaryStatistic: median}}
  protocolDigest: {PROTOCOL}
  workloadDigest: {WORKLOAD}
  environmentDigest: {ENVIRONMENT}
  implementationDigest: sha256:{implementation * 64}
"""


def _apply(kidx, nights, store_path=None) -> None:
    """One apply per night, both series (a team's nightly runs)."""
    for night in nights:
        documents = "---\n".join(_run(implementation, night) for implementation in LEVELS)
        code, _, err = kidx("apply", "-f", "-", stdin=documents, **({"store_path": store_path} if store_path else {}))
        assert code == 0, err


LATEST = [f"{implementation}-{night:04d}" for implementation in LEVELS for night in (NIGHTS - 2, NIGHTS - 1)]


def _compared(kidx, **options) -> dict:
    code, out, err = kidx("compare", *LATEST, "-o", "json", **options)
    assert (code, err) == (0, ""), err
    return json.loads(out)


def _verdicts(document: dict) -> list[tuple]:
    return [(row["runs"], row["verdict"]) for group in document["groups"] for row in group["rows"]]


def test_a_verdict_reads_the_window_of_each_series_and_nothing_older(kidx, tmp_path, monkeypatch):
    _apply(kidx, range(NIGHTS))
    document = _compared(kidx)
    window = {f"{implementation}-{night:04d}" for implementation in LEVELS for night in range(OLD, NIGHTS)}
    assert {entry["run"] for entry in document["history"]} == window - set(LATEST)
    assert len(document["history"]) == 2 * (HISTORY_WINDOW - 2)
    # steady within the window: b's 10% is a confirmed slowdown
    assert _verdicts(document) == [(LATEST[:2], "baseline"), (LATEST[2:], "slower")]

    # exactly what a store holding only the window says
    only_window = tmp_path / "only-window"
    _apply(kidx, range(OLD, NIGHTS), store_path=only_window)
    assert _compared(kidx, store_path=only_window) == document

    # the older, noisier runs would have made it inconclusive: the window is what decided
    monkeypatch.setattr(compare_operation, "HISTORY_WINDOW", NIGHTS)
    whole = _compared(kidx)
    assert len(whole["history"]) == 2 * (NIGHTS - 2)
    assert _verdicts(whole) == [(LATEST[:2], "baseline"), (LATEST[2:], "inconclusive")]


def test_most_recent_is_the_order_names_were_first_applied(kidx, store):
    _apply(kidx, range(3))
    # a name applied again (a new digest) keeps its place; one deleted and applied again takes a new one
    code, _, err = kidx("apply", "-f", "-", stdin=_run("a", 0).replace("2026-", "2027-"))
    assert code == 0, err
    assert kidx("delete", "run", "b-0001").code == 0
    assert kidx("apply", "-f", "-", stdin=_run("b", 1)).code == 0
    found = Store(str(store)).select(CatalogQuery(kind="BenchmarkRun", order=RECENT))
    assert [entry.name for entry in found] == ["b-0001", "b-0002", "a-0002", "a-0001", "b-0000", "a-0000"]
    condition = ReferenceCondition(digests=("sha256:" + "a" * 64,), field="implementationDigest")
    found = Store(str(store)).select(CatalogQuery(kind="BenchmarkRun", references=(condition,), order=RECENT, limit=2))
    assert [entry.name for entry in found] == ["a-0002", "a-0001"]


@pytest.fixture
def counted(monkeypatch):
    """Objects read from the store, and catalog look-ups of runs, since the last reset."""
    counts = {"reads": 0, "lookups": 0}
    identity, identities, select = Store.identity, Store.identities, Store.select

    def one(self, digest):
        counts["reads"] += 1
        return identity(self, digest)

    def many(self, digests):
        digests = list(digests)
        counts["reads"] += len(digests)
        return identities(self, digests)

    def looked_up(self, query, catalog=None):
        counts["lookups"] += query.order == RECENT
        return select(self, query, catalog)

    monkeypatch.setattr(Store, "identity", one)
    monkeypatch.setattr(Store, "identities", many)
    monkeypatch.setattr(Store, "select", looked_up)
    return counts


def test_reads_stay_within_the_window_however_long_the_series_grow(kidx, counted):
    def measured() -> list[tuple[int, int, str]]:
        found = []
        for command in (("compare", *LATEST, "-o", "json"), ("describe", "run", LATEST[-1])):
            counted.update(reads=0, lookups=0)
            code, out, err = kidx(*command)
            assert (code, err) == (0, ""), err
            found.append((counted["reads"], counted["lookups"], out))
        return found

    _apply(kidx, range(NIGHTS))
    found = [measured()]
    for longer in (3, 5):  # the series three, then five times as long
        _apply(kidx, range(NIGHTS * (longer - 2), NIGHTS * longer))
        found.append(measured())
    # the selected runs, once the window has moved past them, are read beside it: then the
    # same objects are read however long the series are
    assert [(reads, lookups) for reads, lookups, _ in found[2]] == [(reads, lookups) for reads, lookups, _ in found[1]]
    # compare: the 4 selected runs, the window of each of the 2 series (their twins and
    # sweeps are the same runs here: one protocol, one workload) and the 5 objects the runs
    # refer to (looked up, not in the store) for each of the two reads; one look-up per
    # series for the history and one per twin and per sweep group. describe: the run, the
    # window of its twins and sweep (the same runs) and its protocol and workload, looked up
    referenced = 5
    for (compare_reads, compare_lookups, _), (describe_reads, describe_lookups, _) in found:
        assert compare_reads <= len(LATEST) + 2 * HISTORY_WINDOW + 2 * referenced and compare_lookups == 3 * 2
        assert describe_reads <= 1 + HISTORY_WINDOW + 2 * referenced and describe_lookups == 2
    assert found[1][0][0] == len(LATEST) + 2 * HISTORY_WINDOW + 2 * referenced


def test_newest_first_with_a_limit_is_the_whole_selection_cut_at_the_limit(kidx, store):
    """The backward walk (kidx.store.sqlite_references) against the plain selection: every
    combination of references, with and without a label or a missing target, any limit."""
    _apply(kidx, range(6))
    for implementation, night in (("a", 1), ("b", 4)):  # labelled again: their places stay
        labelled = _run(implementation, night).replace("-"f"{night:04d}}}", "-"f"{night:04d}, labels: {{flag: x}}}}")
        assert kidx("apply", "-f", "-", stdin=labelled).code == 0
    catalog = Store(str(store))
    series = {"workloadDigest": WORKLOAD, "protocolDigest": PROTOCOL, "environmentDigest": ENVIRONMENT,
              "implementationDigest": "sha256:" + "b" * 64}
    conditions = [ReferenceCondition(digests=(digest,), field=field) for field, digest in series.items()]
    nowhere = ReferenceCondition(digests=("sha256:" + "9" * 64,), field="workloadDigest")
    either = ReferenceCondition(digests=("sha256:" + "a" * 64, "sha256:" + "b" * 64), field="implementationDigest")
    cases = [conditions[:1], conditions[:2], conditions, conditions[::-1], [either, *conditions[:3]], [nowhere],
             [*conditions[:3], nowhere]]
    for references in cases:
        for labels in ((), (Requirement("flag", "=", ("x",)),)):
            every = catalog.select(CatalogQuery(kind="BenchmarkRun", references=tuple(references), labels=labels))
            newest = [entry.name for entry in sorted(every, key=lambda entry: -entry.id)]
            for limit in (1, 3, 100):
                found = catalog.select(CatalogQuery(kind="BenchmarkRun", references=tuple(references), labels=labels,
                                                    order=RECENT, limit=limit))
                assert [entry.name for entry in found] == newest[:limit], (references, labels, limit)
    assert [e.name for e in catalog.select(CatalogQuery(kind="Workload", references=tuple(conditions[:1]),
                                                        order=RECENT, limit=5))] == []

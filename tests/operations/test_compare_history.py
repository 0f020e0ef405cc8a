"""compare's history: exactly the store's runs of the selected runs' series (every run of
each, where a series holds at most HISTORY_WINDOW runs), found in one look-up per series
(not one per run, nor every run of a workload)."""

from __future__ import annotations

from kidx.analysis.window import HISTORY_WINDOW
from kidx.kinds.registry import registry
from kidx.operations.analyse import compare as compare_operation
from kidx.operations.analyse.compare import CompareRequest
from kidx.operations.analyse.series_history import series_of
from kidx.operations.select.analysed_runs import select_runs
from kidx.query.label_selector import LabelSelector
from kidx.store.catalog import RECENT
from kidx.store.store import Store


def _digests(run) -> tuple:
    return (run.environment.digest, run.implementation.digest, run.workload.digest, run.protocol.digest)


def test_history_is_every_run_of_the_selections_series_and_no_other_pair(history_store, monkeypatch):
    store, kinds = Store(history_store), registry()
    everything = select_runs(store, kinds, CompareRequest(names=[])).runs
    request = CompareRequest(names=[], selector=LabelSelector.parse("kernel=jsd,liger_version=0.3.0,provider=liger"))
    selected = select_runs(store, kinds, request).runs
    measured = [run for run in selected if run.measure]
    # runs of the same workload and environment by other implementations exist (the old history read them)
    pairs = {(run.workload.digest, run.environment.digest) for run in measured}
    on_pairs = {run.name for run in everything if (run.workload.digest, run.environment.digest) in pairs}

    lookups = []
    original = Store.select
    monkeypatch.setattr(Store, "select", lambda self, query, catalog=None: lookups.append(query)
                        or original(self, query, catalog))
    history = compare_operation._history(store, kinds, request, measured)

    allowed: dict[tuple, tuple[set, set]] = {}
    for run in measured:
        workloads, protocols = allowed.setdefault(_digests(run)[:2], (set(), set()))
        workloads.add(run.workload.digest)
        protocols.add(run.protocol.digest)
    expected = {run.name for run in everything if _digests(run)[:2] in allowed
                and _digests(run)[2] in allowed[_digests(run)[:2]][0]
                and _digests(run)[3] in allowed[_digests(run)[:2]][1]}
    assert {run.name for run in history} == expected | {run.name for run in measured}
    series = {_digests(run) for run in measured}
    assert {run.name for run in everything if _digests(run) in series} <= {run.name for run in history}
    assert expected - {run.name for run in selected}  # the series hold runs the selection does not
    assert on_pairs - expected  # and the selection's pairs hold runs of other implementations, not read
    assert len(lookups) == len(series) <= len(measured)
    assert all((query.order, query.limit) == (RECENT, HISTORY_WINDOW) for query in lookups)


def test_json_lists_the_history_runs_that_decided_the_verdicts(kidx, history_store):
    import json

    code, out, err = kidx("compare", "-l", "liger_version=0.3.0", "-o", "json", store_path=history_store)
    assert code == 0, err
    document = json.loads(out)
    inputs = {entry["run"] for entry in document["inputs"]}
    history = {entry["run"] for entry in document["history"]}
    assert len(history) == 36 and not history & inputs
    # each is a run of a judged series: the same protocol, workload, environment and
    # implementation as a row with a verdict (or its baseline)
    store, kinds = Store(history_store), registry()
    runs = {run.name: run for run in select_runs(store, kinds, CompareRequest(names=[])).runs}
    judged = {row["run"] for group in document["groups"] for row in group["rows"] if row["verdict"] is not None}
    series = {series_of(runs[name]) for name in judged}
    assert {series_of(runs[name]) for name in history} <= series
    assert all(set(entry) == {"run", "digest"} for entry in document["history"])


def test_nothing_to_compare_reads_no_history(kidx, history_store, monkeypatch):
    """Groups of one arm judge nothing: their series' history is not looked up."""
    import json

    lookups = []
    original = Store.select
    monkeypatch.setattr(Store, "select", lambda self, query, catalog=None: lookups.append(query)
                        or original(self, query, catalog))
    code, out, err = kidx("compare", "-l", "kernel=jsd,provider=liger", "-o", "json", store_path=history_store)
    assert code == 0, err
    document = json.loads(out)
    assert document["groups"] and all(group["note"] for group in document["groups"])
    assert document["history"] == []
    assert [query.order for query in lookups] == ["name"]  # the selection's own, no history look-up


def test_json_history_is_empty_where_the_selection_is_the_whole_store(kidx, head_store):
    import json

    code, out, _ = kidx("compare", "-o", "json", store_path=head_store)
    assert code == 0 and json.loads(out)["history"] == []


def test_reading_only_the_judged_series_changes_no_verdict(kidx, history_store, monkeypatch):
    """The rows, verdicts, host evidence and history record are those of a comparison
    that reads the history of every selected run's series, as compare did before, with
    fewer look-ups."""
    import json

    lookups: list = []
    original = Store.select
    monkeypatch.setattr(Store, "select", lambda self, query, catalog=None: lookups.append(query)
                        or original(self, query, catalog))

    def documents(*arguments):
        lookups.clear()
        code, out, err = kidx("compare", *arguments, "-o", "json", store_path=history_store)
        assert code == 0, err
        return json.loads(out), sum(query.order == RECENT for query in lookups)

    cases = [("-l", "liger_version=0.3.0"), ("-l", "liger_version=0.3.0,gpu=nvidia-h100-80gb-hbm3"),
             ("-l", "kernel=jsd,provider=liger", "--by", "label=liger_version")]
    narrow = [documents(*case) for case in cases]
    monkeypatch.setattr(compare_operation, "_history_wanted", lambda groups, asked, measured: measured)
    whole = [documents(*case) for case in cases]
    assert [document for document, _ in narrow] == [document for document, _ in whole]
    assert any(row["verdict"] not in (None, "baseline") for document, _ in narrow
               for group in document["groups"] for row in group["rows"])
    assert any(row["evidence"] or row["hostBoundReasons"] for document, _ in narrow
               for group in document["groups"] for row in group["rows"])
    assert any(document["history"] for document, _ in narrow)
    assert all(n <= w for (_, n), (_, w) in zip(narrow, whole, strict=True))
    assert sum(n for _, n in narrow) < sum(w for _, w in whole)

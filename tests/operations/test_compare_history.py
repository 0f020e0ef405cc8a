"""compare's history: exactly the store's runs on each (workload, environment) pair of the
selection, found in one look-up per environment or workload (not one per pair)."""

from __future__ import annotations

from kidx.kinds.registry import registry
from kidx.operations import compare as compare_operation
from kidx.operations.analysed_runs import select_runs
from kidx.operations.compare import CompareRequest
from kidx.query.label_selector import LabelSelector
from kidx.store.store import Store


def _pairs_of(runs) -> set:
    return {(run.workload.digest, run.environment.digest) for run in runs}


def test_history_is_every_run_on_the_selections_pairs_and_no_other(history_store, monkeypatch):
    store, kinds = Store(history_store), registry()
    everything = select_runs(store, kinds, CompareRequest(names=[])).runs
    request = CompareRequest(names=[], selector=LabelSelector.parse("kernel=cross_entropy,provider=liger"))
    selected = select_runs(store, kinds, request).runs
    # runs of the same workload on another GPU, and of other kernels on the same GPU, exist
    assert {run.environment.digest for run in everything} > {run.environment.digest for run in selected}
    assert {run.workload.digest for run in everything} > {run.workload.digest for run in selected}

    lookups = []
    original = compare_operation.select_runs
    monkeypatch.setattr(compare_operation, "select_runs",
                        lambda *arguments: lookups.append(arguments) or original(*arguments))
    history = compare_operation._history(store, kinds, request, [run for run in selected if run.measure])

    wanted = _pairs_of(run for run in selected if run.measure)
    expected = {run.name for run in everything if (run.workload.digest, run.environment.digest) in wanted}
    assert {run.name for run in history} == expected | {run.name for run in selected if run.measure}
    assert expected - {run.name for run in selected}  # the series hold runs the selection does not
    assert len(lookups) == min(len({e for _, e in wanted}), len({w for w, _ in wanted})) < len(wanted)


def test_json_lists_the_history_runs_that_decided_the_verdicts(kidx, history_store):
    import json

    code, out, err = kidx("compare", "-l", "kernel=jsd,provider=liger", "-o", "json", store_path=history_store)
    assert code == 0, err
    document = json.loads(out)
    inputs = {entry["run"] for entry in document["inputs"]}
    history = {entry["run"] for entry in document["history"]}
    assert len(history) == 16 and not history & inputs
    # each is a run of a compared series: the same protocol, workload, environment and implementation
    store, kinds = Store(history_store), registry()
    runs = {run.name: run for run in select_runs(store, kinds, CompareRequest(names=[])).runs}
    series = {compare_operation._series_of(runs[name]) for name in inputs if runs[name].measure}
    assert {compare_operation._series_of(runs[name]) for name in history} <= series
    assert all(set(entry) == {"run", "digest"} for entry in document["history"])


def test_json_history_is_empty_where_the_selection_is_the_whole_store(kidx, head_store):
    import json

    code, out, _ = kidx("compare", "-o", "json", store_path=head_store)
    assert code == 0 and json.loads(out)["history"] == []

"""The Python API against the command line: the same store, the same selections, the same
results and documents, the same errors; apply all or nothing; recording runs."""

from __future__ import annotations

import datetime
import json
import statistics
import sys
from typing import NamedTuple

import pytest

import kidx
from kidx.errors import InvalidInputError, KidxError, MissingDependencyError, NotFoundError, UsageError

ROPE_BACKWARD = "kernel=llama4_rope,operation=backward,metric=speed"
SEQ16384 = "workload.spec.parameters.seq=16384"
SEED_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
HF_RUN = "liger-llama4-rope-backward-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads-7a1c5fe285"
WORKLOAD = "liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16"


@pytest.fixture
def cli(kidx):
    """The command line in this process (the conftest's ``kidx`` fixture; here ``kidx`` is the API)."""
    return kidx


def cli_json(cli, *args, store_path):
    code, out, err = cli(*args, "-o", "json", store_path=store_path)
    assert code in (0, 1), err
    return json.loads(out)


# --- opening a store ---------------------------------------------------------------------

def test_open_store_resolves_as_the_command_line(tmp_path, monkeypatch):
    from kidx.cli.common import open_store as cli_open_store

    assert kidx.open_store(tmp_path / "a").location == str(tmp_path / "a")
    monkeypatch.setenv("KIDX_STORE", str(tmp_path / "from-env"))
    with kidx.open_store() as store:
        assert store.location == str(tmp_path / "from-env") == str(cli_open_store(None).location)
    monkeypatch.delenv("KIDX_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert kidx.open_store().location == str(cli_open_store(None).location) == str(tmp_path / "data" / "kidx")


def test_reading_a_store_named_that_does_not_exist_is_the_commands_error(cli, tmp_path, monkeypatch):
    missing = tmp_path / "typo"
    with kidx.open_store(missing) as store, pytest.raises(KidxError) as raised:
        store.get("runs")
    assert str(raised.value) == (f"no store at {missing} (kidx.open_store): nothing has been written there (check "
                                 "the path, or write to it first, e.g. kidx apply -f)")
    code, _, err = cli("get", "runs", store_path=missing)
    assert code == 1 and err == f"error: {raised.value}\n".replace("(kidx.open_store)", "(--store)")
    monkeypatch.setenv("KIDX_STORE", str(missing))
    with kidx.open_store() as store, pytest.raises(KidxError, match=r"\(\$KIDX_STORE\)"):
        store.records()
    monkeypatch.delenv("KIDX_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with kidx.open_store() as store:  # the default store reads as empty until its first write
        assert store.get("runs") == [] and store.records() == []
    assert not missing.exists() and not (tmp_path / "data").exists()


# --- get -----------------------------------------------------------------------------------

def test_get_takes_every_spelling_of_a_kind(head_store):
    with kidx.open_store(head_store) as store:
        spellings = [store.get(kind, SEED_RUN) for kind in ("runs", "run", "br", "BenchmarkRun",
                                                            "benchmarkruns.kernelindex.dev")]
        assert all(found == spellings[0] for found in spellings) and len(spellings[0]) == 1
        [run] = spellings[0]
        assert store.get("run", run.digest[7:19]) == [run]  # a digest prefix, as the CLI takes it


def test_get_objects_are_the_stored_documents(cli, head_store):
    with kidx.open_store(head_store) as store:
        [run] = store.get("run", SEED_RUN)
    assert isinstance(run, kidx.Run) and run.kind == "BenchmarkRun" and run.name == SEED_RUN
    assert run.manifest == cli_json(cli, "get", "run", SEED_RUN, store_path=head_store)
    assert run.digest == run.manifest["metadata"]["digest"]
    assert dict(run.labels) == run.manifest["metadata"]["labels"]
    assert run.spec["timing"]["latencyNs"]["median"] == 417536


def test_objects_are_read_only_and_manifest_is_a_copy(head_store):
    with kidx.open_store(head_store) as store:
        [run] = store.get("run", SEED_RUN)
    with pytest.raises(TypeError):
        run.spec["status"] = "failed"  # type: ignore[index]
    with pytest.raises(TypeError):
        run.spec["timing"]["latencyNs"]["median"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        run.labels["kernel"] = "x"  # type: ignore[index]
    assert isinstance(run.spec["measurements"], tuple)
    copy = run.manifest
    copy["spec"]["status"] = "failed"
    assert run.spec["status"] == "passed" and run.manifest["spec"]["status"] == "passed"


def test_run_references_resolve_lazily_from_the_same_store(cli, head_store):
    with kidx.open_store(head_store) as store:
        [run] = store.get("run", SEED_RUN)
        workload, environment = run.workload, run.environment
        protocol, implementation = run.protocol, run.implementation
    assert isinstance(workload, kidx.Workload) and workload.name == WORKLOAD
    assert workload.spec["parameters"]["seq"] == 16384
    assert workload.manifest == cli_json(cli, "get", "workload", WORKLOAD, store_path=head_store)
    assert isinstance(environment, kidx.Environment) and environment.name == "liger-bench-nvidia-h100-80gb-hbm3"
    assert isinstance(protocol, kidx.Protocol) and protocol.name == "liger-bench-do-bench-backward"
    assert isinstance(implementation, kidx.Implementation) and implementation.spec["library"] == "liger-kernel"
    assert run.digest == run.manifest["metadata"]["digest"]


def test_a_reference_not_in_the_store_is_none(tmp_path, seed_bundle):
    with kidx.open_store(tmp_path / "store") as store:
        store.apply(seed_bundle)  # the seed's workload and implementation are digests only
        [run] = store.get("runs")
        assert run.workload is None and run.implementation is None
        assert run.protocol is not None and run.protocol.digest == run.spec["protocolDigest"]


def test_selection_matches_the_command_line_references_included(cli, head_store):
    with kidx.open_store(head_store) as store:
        found = store.get("runs", selector=ROPE_BACKWARD, field_selector=SEQ16384)
    code, out, _ = cli("get", "runs", "-l", ROPE_BACKWARD, "--field-selector", SEQ16384, "-o", "name",
                        store_path=head_store)
    assert code == 0 and len(found) == 2
    assert [f"benchmarkrun.kernelindex.dev/{run.name}" for run in found] == out.splitlines()


def test_get_of_several_kinds_and_all(head_store):
    with kidx.open_store(head_store) as store:
        mixed = store.get("environments,protocols")
        assert {type(o) for o in mixed} == {kidx.Environment, kidx.Protocol}
        assert len(store.get("all")) == sum(len(store.get(kind)) for kind in
                                            ("runs", "protocols", "envs", "workloads", "impls"))


@pytest.mark.parametrize(("call", "arguments"), [
    (lambda s: s.get("runs", "nope"), ["get", "runs", "nope"]),
    (lambda s: s.get("runz"), ["get", "runz"]),
    (lambda s: s.get("runs", selector="kernel in (a"), ["get", "runs", "-l", "kernel in (a"]),
    (lambda s: s.get("runs", field_selector="spec.nope=1"), ["get", "runs", "--field-selector", "spec.nope=1"]),
    (lambda s: s.get("runs", "a", selector="x=y"), ["get", "runs", "a", "-l", "x=y"]),
    (lambda s: s.compare(by="labels=x"), ["compare", "--by", "labels=x"]),
    (lambda s: s.compare(threshold=-1), ["compare", "--threshold", "-1"]),
    (lambda s: s.compare(only="worse"), ["compare", "--only", "worse"]),
    (lambda s: s.compare(alpha=1.5), ["compare", "--alpha", "1.5"]),
    (lambda s: s.series(alpha=0), ["series", "--alpha", "0"]),
    (lambda s: s.series(tail=0), ["series", "--tail", "0"]),
    (lambda s: s.compare("nope-1", "nope-2"), ["compare", "nope-1", "nope-2"]),
])
def test_errors_carry_the_command_lines_message(cli, head_store, call, arguments):
    with kidx.open_store(head_store) as store, pytest.raises(KidxError) as raised:
        call(store)
    code, out, err = cli(*arguments, store_path=head_store)
    assert code != 0 and out == ""
    assert err.splitlines()[0] in (f"error: {raised.value}", f"Error (NotFound): {raised.value}")


def test_not_found_names_every_missing_object(head_store):
    with kidx.open_store(head_store) as store, pytest.raises(NotFoundError) as raised:
        store.get("runs", SEED_RUN, "a", "b")
    assert str(raised.value) == ('benchmarkruns.kernelindex.dev "a" not found\n'
                                 'benchmarkruns.kernelindex.dev "b" not found')


def test_references_select_as_the_command_lines(cli, head_store):
    """``references=`` is ``--references``: objects by TYPE/NAME, one string or several."""
    workload, triton = f"workload/{WORKLOAD}", "implementation/liger-llama4-rope-liger-triton"
    code, out, _ = cli("get", "runs", "--references", workload, "--references", triton, "-o", "name",
                       store_path=head_store)
    expected = [line.split("/", 1)[1] for line in out.splitlines()]
    assert code == 0 and SEED_RUN in expected and HF_RUN not in expected
    with kidx.open_store(head_store) as store:
        assert [run.name for run in store.get("runs", references=[workload, triton])] == expected
        assert [row["name"] for row in store.records(references=(workload, triton))] == expected
        both = [run.name for run in store.get("runs", references=workload)]  # one string: one value
        assert SEED_RUN in both and HF_RUN in both and len(both) > len(expected)
        with pytest.raises(NotFoundError) as raised:
            store.records(references="workload/no-such-workload")
    assert 'workloads.kernelindex.dev "no-such-workload" not found' in str(raised.value)


# --- records and frames ----------------------------------------------------------------

def test_records_are_one_row_per_selected_run(cli, head_store):
    with kidx.open_store(head_store) as store:
        rows = store.records(selector=ROPE_BACKWARD, field_selector=SEQ16384)
    listed = cli_json(cli, "get", "runs", "-l", ROPE_BACKWARD, "--field-selector", SEQ16384, store_path=head_store)
    assert [row["name"] for row in rows] == [item["metadata"]["name"] for item in listed["items"]]
    seed = next(row for row in rows if row["name"] == SEED_RUN)
    assert [row["digest"] for row in rows] == [item["metadata"]["digest"] for item in listed["items"]]
    assert (seed["metric"], seed["statistic"], seed["value"], seed["low"], seed["high"], seed["unit"]) == (
        "latency", "median", 417536, 417056, 418138, "ns")
    assert seed["observedAt"] == datetime.datetime(2025, 8, 7, 21, 42, 15, tzinfo=datetime.UTC)
    assert seed["labels.liger_version"] == "0.6.1" and seed["labels.provider"] == "liger"
    assert seed["workload.name"] == WORKLOAD and seed["workload.spec.parameters.seq"] == 16384
    assert seed["environment.spec.hardware.product"] == "NVIDIA H100"
    assert seed["implementation.spec.library"] == "liger-kernel"
    assert seed["protocol.spec.measurement.timer"] == "cuda_events"
    assert all(list(row) == list(rows[0]) for row in rows)  # the same columns in every row
    assert list(rows[0])[:10] == ["name", "digest", "status", "observedAt", "metric", "statistic", "value", "low",
                                  "high", "unit"]


def test_records_columns_pick_and_order(head_store):
    with kidx.open_store(head_store) as store:
        rows = store.records(selector=ROPE_BACKWARD, field_selector=SEQ16384, columns=["labels.gpu", "value"])
        assert rows and all(list(row) == ["labels.gpu", "value"] for row in rows)
        with pytest.raises(UsageError, match='^unknown column "labels.nope": no selected run has it'):
            store.records(selector=ROPE_BACKWARD, columns=["labels.gpu", "labels.nope"])


def test_frame_has_the_records_rows(head_store):
    import pandas

    with kidx.open_store(head_store) as store:
        frame = store.frame(selector="kernel=llama4_rope")
        rows = store.records(selector="kernel=llama4_rope")
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(rows) == 112
    assert list(frame.columns) == list(rows[0])
    assert str(frame["observedAt"].dt.tz) == "UTC"
    assert frame["value"].tolist() == [row["value"] for row in rows]
    assert frame.loc[frame["name"] == SEED_RUN, "observedAt"].iloc[0] == pandas.Timestamp("2025-08-07T21:42:15Z")


def test_frame_without_pandas_says_which_extra(head_store, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    with kidx.open_store(head_store) as store, pytest.raises(MissingDependencyError) as raised:
        store.frame()
    assert "pip install '.[pandas]' from a checkout of kidx" in str(raised.value)


def test_empty_frame_keeps_the_leading_columns(tmp_path):
    with kidx.open_store(tmp_path / "no-runs") as store:
        store.apply({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                     "spec": {"operation": "x"}})
        frame = store.frame()
    assert len(frame) == 0 and list(frame.columns)[:4] == ["name", "digest", "status", "observedAt"]


# --- compare and series ----------------------------------------------------------------

@pytest.mark.parametrize("arguments", [
    {"selector": ROPE_BACKWARD, "field_selector": SEQ16384, "baseline": "transformers"},
    {"names": [SEED_RUN, HF_RUN]},
    {"selector": "kernel=llama4_rope", "only": "slower"},
    {"selector": "kernel=llama4_rope,provider=liger", "by": "label=gpu"},
])
@pytest.mark.filterwarnings("ignore::kidx.errors.NothingJudged")  # label=gpu: each group holds a single arm
def test_compare_to_dict_is_the_commands_json(cli, head_store, arguments):
    arguments = dict(arguments)
    names = arguments.pop("names", [])
    options = [*names]
    for key, value in arguments.items():
        options += [{"selector": "-l", "field_selector": "--field-selector"}.get(key, "--" + key), value]
    with kidx.open_store(head_store) as store:
        comparison = store.compare(*names, **arguments)
    assert isinstance(comparison, kidx.Comparison)
    assert comparison.to_dict() == cli_json(cli, "compare", *options, store_path=head_store)
    assert comparison.to_dict()["groups"]  # something was compared


def test_compare_result_is_the_operations(head_store):
    with kidx.open_store(head_store) as store:
        comparison = store.compare(selector=ROPE_BACKWARD, field_selector=SEQ16384, baseline="transformers")
    h100 = next(g for g in comparison.groups if g.environment.name == "liger-bench-nvidia-h100-80gb-hbm3")
    # one run a side: the bands say faster, which is within-run evidence only
    assert [(row.run.name, row.verdict) for row in h100.rows] == [(HF_RUN, "baseline"), (SEED_RUN, "unconfirmed")]
    assert h100.rows[1].judgement.within == "faster"
    assert comparison.regressions == []
    assert repr(comparison) == f"Comparison({len(comparison.groups)} groups, 0 regressions)"


def test_series_to_dict_is_the_commands_json(cli, history_store):
    selector = "liger_version in (0.3.0,0.3.1)"
    with kidx.open_store(history_store) as store:
        result = store.series(selector=selector, label="liger_version", baseline="torch")
    assert isinstance(result, kidx.SeriesResult) and result.counts() == {"unconfirmed": 36}
    assert result.to_dict() == cli_json(cli, "series", "-l", selector, "--label", "liger_version", "--baseline",
                                        "torch", store_path=history_store)



def test_series_tail_is_the_commands_tail(cli, history_store):
    selector = "liger_version in (0.5.3,0.5.4)"
    with kidx.open_store(history_store) as store:
        result = store.series(selector=selector, label="liger_version", baseline="huggingface", tail=1)
    assert all(len(series.points) == 1 and series.points[0].verdict for series in result.series)
    assert result.to_dict() == cli_json(cli, "series", "-l", selector, "--label", "liger_version", "--baseline",
                                        "huggingface", "--tail", "1", store_path=history_store)

# --- apply -----------------------------------------------------------------------------

def test_apply_reports_what_the_command_reports(cli, store, seed_bundle, tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed_bundle))
    with kidx.open_store(store) as api:
        first = api.apply(path, dry_run=True)
        assert not store.exists()  # a dry run writes nothing
        assert [(o.kind, o.action) for o in first.outcomes] == [
            ("BenchmarkRun", "created"), ("BenchmarkProtocol", "created"), ("ExecutionEnvironment", "created")]
        assert api.apply(path).count("created") == 3
        assert {o.action for o in api.apply(seed_bundle).outcomes} == {"unchanged"}
        changed = json.loads(json.dumps(seed_bundle))
        changed["run"]["metadata"]["labels"]["extra"] = "yes"
        result = api.apply(changed)
        assert [o.action for o in result.outcomes] == ["configured", "unchanged", "unchanged"]
        assert result.outcomes[0].digest == "sha256:6e70abf28bfccdbc8dde69ec6347a8f22a416952374d02a065d78a2cb9973cba"
    code, out, _ = cli("apply", "-f", str(path))
    assert code == 0 and out.splitlines()[0] == f"benchmarkrun.kernelindex.dev/{SEED_RUN} configured"


def _liger_csv(path, *lines: int):
    """A Liger CSV of the kept data's header and its physical ``lines`` (1-based)."""
    from conftest import LIGER_DATA

    kept = (LIGER_DATA / "all_benchmark_data.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join([kept[0], *(kept[line - 1] for line in lines)]), encoding="utf-8")
    return path


def test_import_files_is_the_commands_import(cli, store, tmp_path):
    small = _liger_csv(tmp_path / "small.csv", 1488, 1468)  # the seed's row and a peak-memory row
    with kidx.open_store(store) as api:
        planned = api.import_files("liger", small, dry_run=True)
        assert not store.exists()  # a dry run writes nothing
        result = api.import_files("liger", [str(small)])
        assert api.get("run", SEED_RUN)[0].name == SEED_RUN
    assert type(result) is kidx.ImportResult and isinstance(result, kidx.ApplyResult)
    assert repr(planned) == "ImportResult(created 8, dry run)" and repr(result) == "ImportResult(created 8)"
    assert [(o.kind, o.action) for o in result.outcomes] == [(o.kind, "created") for o in planned.outcomes]
    assert result.summary == ("import liger (1 file): 2 rows read; BenchmarkProtocol 2 created; ExecutionEnvironment "
                              "1 created; Implementation 1 created; Workload 2 created; BenchmarkRun 2 created; "
                              "0 rows skipped")
    assert result.skipped == [] and result.warnings == []
    code, out, err = cli("import", "liger", str(small), "-o", "name", store_path=tmp_path / "by-cli")
    assert code == 0 and err == result.summary + "\n"
    assert out.splitlines() == [f"{o.kind.lower()}.kernelindex.dev/{o.name}" for o in result.outcomes]
    with kidx.open_store(store) as api:
        again = api.import_files("liger", small)
    assert again.count("unchanged") == 8 and again.summary == result.summary.replace(" created", " unchanged")


def test_import_bundle_is_the_commands_import_bundle(cli, store, tmp_path):
    from conftest import SEED_BUNDLE

    assert cli("apply", "-f", str(SEED_BUNDLE)).code == 0
    bundle = tmp_path / "all.kidx.json"
    assert cli("export", "-o", str(bundle)).code == 0
    restored = tmp_path / "restored"
    with kidx.open_store(restored) as api:
        planned = api.import_bundle(bundle, dry_run=True)
        assert not restored.exists()  # a dry run writes nothing
        result = api.import_bundle(str(bundle))
        assert api.get("run", SEED_RUN)[0].name == SEED_RUN
        again = api.import_bundle(bundle)
    assert type(result) is kidx.ImportResult
    assert repr(planned) == "ImportResult(restored 3, dry run)" and repr(again) == "ImportResult(unchanged 3)"
    assert [(o.kind, o.action) for o in result.outcomes] == [
        ("BenchmarkRun", "restored"), ("BenchmarkProtocol", "restored"), ("ExecutionEnvironment", "restored")]
    assert result.outcomes[0].digest == "sha256:6e70abf28bfccdbc8dde69ec6347a8f22a416952374d02a065d78a2cb9973cba"
    assert result.summary == "import bundle: 3 names, 3 revisions, 3 objects; 3 restored"
    assert planned.summary == result.summary + " (dry run)"
    assert again.count("unchanged") == 3 and result.warnings == result.skipped == []
    code, out, err = cli("import", "bundle", str(bundle), "-o", "name", store_path=tmp_path / "by-cli")
    assert code == 0 and err == result.summary + "\n"
    assert out.splitlines() == [f"{o.kind.lower()}.kernelindex.dev/{o.name}" for o in result.outcomes]


def test_import_files_refuses_as_the_command_does(store, tmp_path):
    small = _liger_csv(tmp_path / "small.csv", 1488)
    broken = tmp_path / "broken.csv"
    broken.write_text("not,a,liger,header\n1,2,3,4\n", encoding="utf-8")
    with kidx.open_store(store) as api:
        with pytest.raises(UsageError) as raised:
            api.import_files("no-such-format", small)
        assert str(raised.value).startswith("unknown format 'no-such-format'; formats: liger, ")
        with pytest.raises(UsageError, match=r"^--op applies to tritonbench, not liger$"):
            api.import_files("liger", small, op="softmax")
        with pytest.raises(UsageError, match=r"^--library applies to pytest-benchmark \(the liger format names its implementations itself\)$"):
            api.import_files("liger", small, library="mine")
        with pytest.raises(InvalidInputError) as invalid:
            api.import_files("liger", [small, broken])
        assert str(broken) in str(invalid.value)
        with pytest.raises(UsageError, match=r'^--environment nowhere: no such file, and no ExecutionEnvironment '
                                             r'"nowhere" in the store \(kidx get environments lists them\)$'):
            api.import_files("liger", small, environment="nowhere")
    assert not store.exists()  # nothing was written


def test_apply_repairs_a_missing_object(store, seed_bundle):
    with kidx.open_store(store) as api:
        outcome = api.apply(seed_bundle).outcomes[0]
        objects = store / "objects" / "sha256" / outcome.digest[7:9] / outcome.digest[9:]
        objects.unlink()
        result = api.apply(seed_bundle)
    assert [o.action for o in result.outcomes] == ["repaired", "unchanged", "unchanged"]
    assert objects.exists() and [w for w in result.warnings if w.endswith(" was missing; written again")]


def test_apply_is_all_or_nothing_with_the_commands_messages(cli, store, seed_bundle, tmp_path):
    bad = json.loads(json.dumps(seed_bundle))
    bad["run"]["spec"]["status"] = "fine"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad, indent=2))
    with kidx.open_store(store) as api:
        with pytest.raises(InvalidInputError) as from_path:
            api.apply(path)
        with pytest.raises(InvalidInputError) as from_python:
            api.apply(list(bad.values()))
    code, out, err = cli("apply", "-f", str(path))
    assert (code, out) == (1, "")
    assert err == f"error: {from_path.value}\n"
    assert str(from_python.value) == (
        '<python> (items[0]), document 1, line 8: spec.status: Unsupported value: "fine" is not one of '
        '["passed", "failed", "error", "skipped"]')
    assert not store.exists()  # nothing written


def test_apply_refuses_what_is_not_a_manifest(store):
    with kidx.open_store(store) as api:
        with pytest.raises(UsageError, match="no objects passed to apply"):
            api.apply([])
        with pytest.raises(UsageError, match="manifests must be JSON data"):
            api.apply({"kind": object()})
        with pytest.raises(InvalidInputError, match="NaN"):
            api.apply({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                       "spec": {"operation": "x", "parameters": {"a": float("nan")}}})
    assert not store.exists()


@pytest.mark.both_backends
def test_apply_and_get_on_either_backend(store, seed_bundle):
    with kidx.open_store(str(store)) as api:
        api.apply(seed_bundle)
        [run] = api.get("runs")
        assert run.name == SEED_RUN and run.protocol is not None
        assert [row["name"] for row in api.records(selector="liger_version=0.6.1")] == [SEED_RUN]


# --- recording -------------------------------------------------------------------------

IMPLEMENTATION = {"library": "torch", "operation": "matmul", "backend": "eager"}
WORKLOAD_SPEC = {"operation": "matmul", "parameters": {"m": 64, "n": 64, "k": 64}, "dtype": "fp32"}
ENVIRONMENT = {"hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90", "count": 1}}
WHEN = datetime.datetime(2026, 12, 1, 9, 30, 0, 250000, tzinfo=datetime.UTC)


def test_timings_from_samples():
    timings = kidx.Timings.from_samples([3.0, 1.0, 2.0, 4.0, 5.0], unit="us")
    assert timings.statistics == {"median": 3000.0, "mean": 3000.0, "min": 1000.0, "max": 5000.0,
                                  "stddev": 1581.139}
    assert timings.quantiles == {"p20": 1800.0, "p80": 4200.0}
    assert timings.samples == (3000.0, 1000.0, 2000.0, 4000.0, 5000.0) and timings.protocol is None


def test_timings_from_do_bench():
    timings = kidx.Timings.from_do_bench([0.5677, 0.5673, 0.5686])
    assert timings.statistics == {"median": 567700.0}
    assert timings.quantiles == {"p20": 567300.0, "p80": 568600.0}
    assert timings.native == {"ms_50": 0.5677, "ms_20": 0.5673, "ms_80": 0.5686}
    assert timings.protocol is not None and timings.protocol["measurement"] == {
        "metric": "latency", "timer": "cuda_events", "primaryStatistic": "median", "quantiles": [0.5, 0.2, 0.8],
        "method": "triton.testing.do_bench: CUDA events around each call, the L2 cache flushed between calls"}
    single = kidx.Timings.from_do_bench(0.25, return_mode="min")
    assert single.statistics == {"min": 250000.0} and single.protocol["measurement"]["primaryStatistic"] == "min"
    with pytest.raises(UsageError, match="do_bench returned 2 values for 3 quantiles"):
        kidx.Timings.from_do_bench([0.5, 0.4])
    with pytest.raises(UsageError, match="not a finite, non-negative number"):
        kidx.Timings.from_do_bench([0.5, float("nan"), 0.6])


class TaskSpec(NamedTuple):
    """torch.utils.benchmark's TaskSpec, the fields kidx reads (torch/utils/benchmark/utils/common.py)."""

    stmt: str
    setup: str = "pass"
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1


class Measurement:
    """The documented shape of a ``torch.utils.benchmark.Measurement``: ``raw_times`` (seconds
    per block of ``number_per_run`` calls), ``times`` (seconds per call), ``median``, ``mean``
    and ``iqr`` of those (numpy's linear percentiles), and the ``task_spec`` it timed."""

    def __init__(self, number_per_run: int, raw_times: list[float], task_spec: TaskSpec):
        self.number_per_run, self.raw_times, self.task_spec = number_per_run, raw_times, task_spec

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def mean(self) -> float:
        return statistics.mean(self.times)

    @property
    def iqr(self) -> float:
        if len(self.times) < 2:
            return 0.0
        first, _, third = statistics.quantiles(self.times, n=4, method="inclusive")
        return third - first


def _public(version: str) -> str:
    """A version without its local part: ``2.13.0+cu130`` -> ``2.13.0`` (PEP 440)."""
    return version.split("+", 1)[0]


def test_timings_from_a_measurement():
    measurement = Measurement(100, [0.000125, 0.000100, 0.000150, 0.000110],
                              TaskSpec("x @ x", label="matmul", sub_label="32", num_threads=4))
    timings = kidx.Timings.from_measurement(measurement)
    assert timings.samples == (1250.0, 1000.0, 1500.0, 1100.0)
    assert timings.statistics["median"] == 1175.0 and timings.statistics["mean"] == 1212.5
    # numpy's linear percentiles of 1.0, 1.1, 1.25, 1.5 us: p25 1.075, p75 1.3125
    assert timings.native == pytest.approx({"median_s": 1.175e-06, "mean_s": 1.2125e-06, "iqr_s": 2.375e-07,
                                            "number_per_run": 100.0}, rel=1e-12, abs=0)
    assert timings.protocol["harness"]["name"] == "torch.utils.benchmark"
    assert timings.protocol["measurement"]["method"] == (
        "torch.utils.benchmark.Timer.blocked_autorange: each sample is the mean time of a block of calls, timed on "
        "the host clock with the device synchronised; 4 CPU threads")
    assert timings.details == {"stmt": "x @ x", "label": "matmul", "sub_label": "32"}
    one_thread = kidx.Timings.from_measurement(Measurement(1, [0.5], TaskSpec("f()")))
    assert one_thread.protocol["measurement"]["method"].endswith("; 1 CPU thread")
    assert one_thread.details == {"stmt": "f()"}
    recording = kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                                timings=measurement, observed_at=WHEN)
    assert recording.run["spec"]["samples"]["values"] == [1250.0, 1000.0, 1500.0, 1100.0]
    assert recording.run["spec"]["sourceNative"]["source"] == "torch.utils.benchmark"
    with pytest.raises(UsageError, match="not a torch.utils.benchmark Measurement"):
        kidx.Timings.from_measurement(Measurement(1, [], TaskSpec("f()")))


def test_the_torch_version_is_the_installed_distributions(monkeypatch):
    """The harness version is torch's installed distribution version, whatever torch.__version__
    adds to it (a CUDA wheel from the package index says ``2.13.0`` there and ``2.13.0+cu130``
    in torch.__version__); without torch installed the protocol names no version."""
    import importlib.metadata

    measurement = Measurement(1, [0.5], TaskSpec("f()"))
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: "2.13.0" if name == "torch" else pytest.fail(f"asked for {name}"))
    assert kidx.Timings.from_measurement(measurement).protocol["harness"]["version"] == "2.13.0"

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert "version" not in kidx.Timings.from_measurement(measurement).protocol["harness"]
    assert _public("2.13.0+cu130") == _public("2.13.0") == "2.13.0"


def test_timings_from_a_real_torch_measurement():
    """The same, against torch.utils.benchmark itself where torch is installed (not by the test extra)."""
    torch = pytest.importorskip("torch")
    import importlib.metadata

    from torch.utils.benchmark import Timer

    x = torch.ones(32, 32)
    measurement = Timer("x @ x", globals={"x": x}, label="matmul", sub_label="32").blocked_autorange(
        min_run_time=0.05)
    timings = kidx.Timings.from_measurement(measurement)
    assert timings.samples == tuple(round(t * 1e9, 3) for t in measurement.times)
    assert timings.statistics["median"] == pytest.approx(measurement.median * 1e9, abs=0.001)
    assert timings.statistics["mean"] == pytest.approx(measurement.mean * 1e9, abs=0.001)
    assert timings.native["iqr_s"] == measurement.iqr
    assert timings.protocol["harness"]["name"] == "torch.utils.benchmark"
    assert timings.protocol["harness"]["version"] == importlib.metadata.version("torch")
    assert _public(timings.protocol["harness"]["version"]) == _public(torch.__version__)
    assert timings.native["number_per_run"] == measurement.number_per_run
    assert timings.protocol["measurement"]["method"].endswith(f"; {measurement.task_spec.num_threads} CPU thread"
                                                              + ("s" if measurement.task_spec.num_threads != 1 else ""))
    assert timings.details["stmt"] == "x @ x" and timings.details["label"] == "matmul"
    recording = kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                                timings=measurement, observed_at=WHEN)
    assert recording.run["spec"]["samples"]["values"] == list(timings.samples)
    assert recording.run["spec"]["sourceNative"]["source"] == "torch.utils.benchmark"


def test_record_run_builds_valid_manifests_named_by_the_importers_rules(cli, store):
    from kidx.formats.framework import hashed_name, slug
    from kidx.identity import digest_of

    recording = kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                                timings=kidx.Timings.from_do_bench([0.5, 0.4, 0.6]), labels={"suite": "nightly"},
                                observed_at=WHEN)
    assert [m["kind"] for m in recording.manifests] == [
        "BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation", "BenchmarkRun"]
    for manifest in recording.manifests:
        assert manifest["metadata"]["digest"] == digest_of(manifest)
    workload = recording.workload
    assert workload["metadata"]["name"] == hashed_name("matmul-k64-m64-n64-fp32", workload["metadata"]["digest"], 253)
    assert recording.implementation["metadata"]["name"].startswith("torch-matmul-eager-")
    spec = recording.run["spec"]
    external_id = (f"{recording.implementation['metadata']['name']}/{workload['metadata']['name']}/"
                   f"{recording.environment['metadata']['name']}/{recording.protocol['metadata']['name']}/"
                   "2026-12-01T09:30:00.250Z")
    assert spec["sourceNative"]["externalId"] == external_id
    assert recording.name == hashed_name(slug("record/" + external_id), external_id, 100)
    assert spec["observedAt"] == "2026-12-01T09:30:00.250Z" and spec["status"] == "passed"
    assert spec["timing"] == {"latencyNs": {"median": 500000.0}, "primaryStatistic": "median"}
    assert spec["workloadDigest"] == workload["metadata"]["digest"]
    with kidx.open_store(store) as api:
        assert [o.action for o in api.apply(recording).outcomes] == ["created"] * 5
        assert [o.action for o in api.apply(recording).outcomes] == ["unchanged"] * 5
        [run] = api.get("runs", selector="suite=nightly")
        assert run.digest == recording.run["metadata"]["digest"]
        assert run.workload is not None and run.workload.name == workload["metadata"]["name"]
    code, out, err = cli("fsck")
    assert code == 0 and "no problems found" in out


def test_record_run_is_deterministic_and_keeps_given_names(head_store):
    first = kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                            timings=kidx.Timings.from_samples([1.0, 2.0]), observed_at=WHEN,
                            protocol={"harness": {"name": "mine"}, "measurement": {"metric": "latency"}})
    again = kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                            timings=kidx.Timings.from_samples([1.0, 2.0]), observed_at=WHEN,
                            protocol={"harness": {"name": "mine"}, "measurement": {"metric": "latency"}})
    assert first.manifests == again.manifests
    with kidx.open_store(head_store) as store:
        [environment] = store.get("env", "liger-bench-nvidia-h100-80gb-hbm3")
        [workload] = store.get("workload", WORKLOAD)
    recorded = kidx.record_run(implementation=IMPLEMENTATION, workload=workload, environment=environment,
                               timings=kidx.Timings.from_samples([1.0]), observed_at=WHEN,
                               protocol={"harness": {"name": "mine"}})
    assert recorded.environment["metadata"]["name"] == "liger-bench-nvidia-h100-80gb-hbm3"
    assert recorded.run["spec"]["environmentDigest"] == environment.digest
    assert recorded.run["spec"]["workloadDigest"] == workload.digest
    assert recorded.workload["metadata"]["name"] == WORKLOAD


def test_record_run_errors():
    with pytest.raises(UsageError, match="record_run needs a protocol"):
        kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                        timings=kidx.Timings.from_samples([1.0]))
    with pytest.raises(UsageError, match="not a torch.utils.benchmark Measurement"):
        kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                        timings=[1.0, 2.0])
    with pytest.raises(UsageError, match="expected a Workload manifest"):
        kidx.record_run(implementation=IMPLEMENTATION, environment=ENVIRONMENT,
                        workload={"kind": "Implementation", "spec": {"library": "x"}},
                        timings=kidx.Timings.from_do_bench([1.0, 1.0, 1.0]))
    with pytest.raises(UsageError, match="a datetime with a time zone"):
        kidx.record_run(implementation=IMPLEMENTATION, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                        timings=kidx.Timings.from_do_bench([1.0, 1.0, 1.0]),
                        observed_at=datetime.datetime(2026, 1, 1))


def test_an_invalid_recording_is_refused_by_apply(store):
    recording = kidx.record_run(implementation={"library": ""}, workload=WORKLOAD_SPEC, environment=ENVIRONMENT,
                                timings=kidx.Timings.from_do_bench([1.0, 1.0, 1.0]))
    with kidx.open_store(store) as api, pytest.raises(InvalidInputError) as raised:
        api.apply(recording)
    assert str(raised.value).startswith("<python> (items[3]), document 1, line ") and "spec.library" in str(raised.value)
    assert not store.exists()


def test_capture_environment_is_what_env_capture_builds(cli):
    code, out, _ = cli("env", "capture", "-o", "json")
    captured = kidx.capture_environment()
    printed = json.loads(out)
    assert code == 0 and captured["spec"] == printed["spec"]
    assert captured["metadata"]["name"] == printed["metadata"]["name"]
    assert captured["kind"] == "ExecutionEnvironment"


def test_the_gpu_recording_script_runs_on_the_cpu(tmp_path):
    """tests/data/h200-api/record_measurement.py, checked without a GPU (it is run on an H200 by hand)."""
    import subprocess

    from conftest import REPO

    pytest.importorskip("torch")
    store = tmp_path / "recorded"
    completed = subprocess.run(
        [sys.executable, "-P", "tests/data/h200-api/record_measurement.py", "--device", "cpu", "--rows", "64",
         "--columns", "64", "--min-run-time", "0.01", "--store", str(store)],
        cwd=REPO, capture_output=True, text=True,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert "apply: ApplyResult(created 5); again: ApplyResult(unchanged 5)" in lines
    table = lines.index(f"$ kidx get runs -l suite=h200-api --store {store}")
    assert lines[table + 1].split() == ["NAME", "BENCHMARK", "STATUS", "MEDIAN", "OBSERVED", "AGE"]
    assert lines[table + 2].startswith("record-torch-softmax-eager-") and " softmax " in lines[table + 2]
    with kidx.open_store(store) as recorded:
        [run] = recorded.get("runs")
        assert run.workload is not None and dict(run.workload.spec["parameters"]) == {"rows": 64, "columns": 64,
                                                                                       "dim": -1}
        assert run.protocol is not None and run.protocol.spec["harness"]["name"] == "torch.utils.benchmark"


def test_user_errors_raise_documented_classes_with_the_cli_s_message(cli, head_store):
    """Every mistake a user can make through the API is a kidx.errors class, the CLI's words."""
    import warnings

    from kidx.errors import EmptySelection

    path = head_store
    store = kidx.open_store(path)
    with pytest.raises(UsageError) as raised:
        store.get("rns")
    message, hint = cli("get", "rns", store_path=path)[2].removeprefix("error: ").splitlines()
    assert (str(raised.value), getattr(raised.value, "hint", None)) == (message, hint)
    with pytest.raises(UsageError, match=r"^invalid --threshold '5%': a percentage from 0 up to, not including, 100"):
        store.compare(threshold="5%")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^invalid --alpha"):
        store.series(alpha=None)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^invalid --tail 1.5: a whole number of points, 1 or more$"):
        store.series(tail=1.5)  # type: ignore[arg-type]
    with pytest.raises(UsageError) as raised:
        store.records(selector="kernel=llama4_rope", columns=["name", "workload.spec.parameter.seq"])
    assert str(raised.value) == ('unknown column "workload.spec.parameter.seq": no selected run has it '
                                 '(did you mean "workload.spec.parameters.seq"?)')
    assert store.records(selector="kernel=llama4_rope", columns=["labels.kernel"])[0] == {"labels.kernel": "llama4_rope"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.records(selector="kernal=llama4_rope") == []
        assert store.get("runs", selector="kernel=llama4_ropee") == []
    assert [(w.category, str(w.message)) for w in caught] == [
        (EmptySelection, "the selection matched no runs: no run has the label kernal (labels present: kernel, gpu, "
                         "liger_version, metric, operation, provider)"),
        (EmptySelection, "the selection matched no runs: no run has kernel=llama4_ropee (kernel values present: "
                         "llama4_rope, rope, cross_entropy, distill_cosine_loss, distill_jsd_loss, dyt, embedding, "
                         "fused_add_rms_norm, … (38 in all))"),
    ]


@pytest.mark.parametrize("shape", ["mapping", "list", "cycle"])
def test_apply_of_a_manifest_nested_too_deep_is_an_error_at_its_field(tmp_path, shape):
    """10,000 levels (or a mapping that holds itself) handed over from Python: the error
    apply -f gives for such a file, with nothing written; no RecursionError."""
    deep: dict | list = {} if shape != "list" else []
    inner = deep
    for _ in range(10_000 if shape != "cycle" else 0):
        if isinstance(inner, dict):
            inner["a"] = {}
            inner = inner["a"]
        else:
            inner.append([])
            inner = inner[0]
    if shape == "cycle":
        deep["a"] = deep
    store = kidx.open_store(tmp_path / "store")
    manifest = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "deep"},
                "spec": {"family": "x", "operation": "y", "parameters": {"p": deep}}}
    with pytest.raises(InvalidInputError) as raised:
        store.apply(manifest)
    [problem] = raised.value.problems
    step = "[0]" if shape == "list" else ".a"
    assert str(problem.location).startswith("<python>, document 1, line ")
    assert problem.location.path == "items[0].spec.parameters.p" + step * 61
    assert problem.message == "document is nested more than 64 levels deep"
    assert not (tmp_path / "store").exists()


def test_a_baseline_no_run_has_warns_as_the_command_says_it(cli, head_store):
    """compare(baseline="transformer") (a typo): the command's words, as a NothingJudged
    warning; the result is still returned, and the gate's refusal is an error on request."""
    import warnings

    from kidx.errors import NothingJudged

    with kidx.open_store(head_store) as store, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comparison = store.compare(selector=ROPE_BACKWARD, baseline="transformer")
        series = store.series(selector=ROPE_BACKWARD, baseline="transformer")
    code, out, err = cli("compare", "-l", ROPE_BACKWARD, "--baseline", "transformer", "--fail-on-regression",
                         store_path=head_store)
    problem = err.removeprefix("error: the gate cannot judge: ").removesuffix(
        " (--allow-empty passes when nothing could be judged)\n")
    assert (code, out) == (2, "") and problem.startswith("no selected run's implementation is transformer (--baseline")
    assert [(w.category, str(w.message)) for w in caught][0] == (NothingJudged, problem)
    assert caught[0].filename == __file__
    assert list(comparison.problems) == [problem] and series.problems
    with kidx.open_store(head_store) as store, warnings.catch_warnings():
        warnings.simplefilter("error", NothingJudged)
        with pytest.raises(NothingJudged, match="implementation is transformer"):
            store.compare(selector=ROPE_BACKWARD, baseline="transformer")

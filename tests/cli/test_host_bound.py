"""Host-bound timings: the launch overhead between a cuda_events run and its kernel-timer
twin (describe, compare -o wide and -o json), and what the data shows without a twin."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from kidx.analysis.hostbound import HOST_BOUND_OVERHEAD

REP = Path(__file__).resolve().parents[1] / "data" / "h200-aa" / "rep-01"
EVENTS_RUN = "liger-rms-norm-forward-liger-nvidia-h200-eps1e-06-hidden4096-seq1024-bf16-2026-12-01-10-3-cd4148fe0a"
LARGE_RUN = "liger-rms-norm-forward-liger-nvidia-h200-eps1e-06-hidden8192-seq32768-bf16-2026-12-01-10-ff859b96c6"
SEQ2048_RUN = "liger-rms-norm-forward-liger-nvidia-h200-eps1e-06-hidden4096-seq2048-bf16-2026-12-01-10-3-bc5d928f5a"
EVENTS_NS = 144448  # the events run's median (rep-01's CSV: 0.14444799721240997 ms)


def _imported(kidx) -> list[dict]:
    code, out, err = kidx("import", "liger", str(REP / "all_benchmark_data.csv"), "--environment",
                          str(REP / "environment.yaml"), "-o", "json")
    assert code == 0, err
    return json.loads(out)["items"]


def _twin(items: list[dict], run_name: str, timer: str, latency_ns: int) -> list[dict]:
    """A protocol like the run's with another timer, and a run of it on the same workload,
    implementation and environment (the figures are the test's, not a measurement)."""
    run = next(item for item in items if item["metadata"]["name"] == run_name)
    protocol = next(item for item in items if item["kind"] == "BenchmarkProtocol"
                    and item["metadata"]["name"] == "liger-bench-do-bench-forward")
    graph = copy.deepcopy(protocol)
    graph["metadata"] = {"name": f"liger-bench-{timer}-forward"}
    graph["spec"]["measurement"]["timer"] = timer
    twin = copy.deepcopy(run)
    twin["metadata"] = {"name": f"{timer}-twin-{run_name[:60]}"}
    twin["spec"]["protocolRef"] = {"name": graph["metadata"]["name"]}
    del twin["spec"]["protocolDigest"]
    twin["spec"]["timing"]["latencyNs"] = {"median": latency_ns}
    twin["spec"].pop("measurements", None)
    return [graph, twin]


@pytest.fixture
def twins(kidx, tmp_path):
    items = _imported(kidx)
    items += _twin(items, EVENTS_RUN, "cuda_graph", 5000)  # 144448 / 5000 = 28.9x: host-bound
    items += _twin(items, LARGE_RUN, "cupti", 300000)  # 327872 / 300000 = 1.09x: not host-bound
    path = tmp_path / "twins.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, _, err = kidx("apply", "-f", str(path))
    assert code == 0, err
    return items


def test_describe_shows_the_launch_overhead_and_host_bound(kidx, twins):
    code, out, err = kidx("describe", "run", EVENTS_RUN)
    assert (code, err) == (0, "")
    section = out[out.index("Host Share:"):out.index("Referenced By:")]
    assert section == (
        "Host Share:\n"
        f"  Launch Overhead:  host-bound: launch overhead {EVENTS_NS / 5000:.2f}x (events time / cuda_graph time "
        f"5µs, threshold {HOST_BOUND_OVERHEAD:g}x)\n"
        f"  Kernel Runs:      cuda_graph-twin-{EVENTS_RUN[:60]}\n"
    )


def test_describe_of_a_kernel_bound_twin_says_so_and_the_kernel_run_has_no_section(kidx, twins):
    code, out, _ = kidx("describe", "run", LARGE_RUN)
    assert code == 0
    assert "  Launch Overhead:  kernel-bound: launch overhead 1.09x (events time / cupti time 300µs" in out
    assert "host-bound" not in out
    code, out, _ = kidx("describe", "run", f"cuda_graph-twin-{EVENTS_RUN[:60]}")
    assert code == 0 and "Host Share" not in out


def test_compare_json_rows_carry_launch_overhead_and_host_bound(kidx, twins):
    code, out, err = kidx("compare", "-l", "kernel=rms_norm,operation=forward", "-o", "json")
    assert code == 0, err
    rows = {row["run"]: row for group in json.loads(out)["groups"] for row in group["rows"]}
    assert rows[EVENTS_RUN]["launchOverhead"] == pytest.approx(EVENTS_NS / 5000)
    assert (rows[EVENTS_RUN]["hostBound"], rows[EVENTS_RUN]["kernelTime"], rows[EVENTS_RUN]["kernelTimer"]) == (
        True, 5000, "cuda_graph")
    assert rows[LARGE_RUN]["launchOverhead"] == pytest.approx(327872 / 300000)
    assert rows[LARGE_RUN]["hostBound"] is False
    # the twins are runs of other protocols: never in the events runs' groups
    assert not any(name.startswith(("cuda_graph-twin", "cupti-twin")) for name in rows)


def test_twins_of_different_timers_are_not_comparable_without_force(kidx, twins):
    twin = f"cuda_graph-twin-{EVENTS_RUN[:60]}"
    code, _, err = kidx("compare", EVENTS_RUN, twin)
    assert code != 0 and "differ in protocol liger-bench-do-bench-forward vs liger-bench-cuda_graph-forward" in err


def test_compare_wide_shows_the_overhead_column(kidx, twins):
    code, out, err = kidx("compare", "-l", "kernel=rms_norm,operation=forward", "--field-selector",
                          "workload.spec.parameters.seq=1024", "-o", "wide")
    assert code == 0, err
    header, *lines = out.splitlines()[1:3]
    assert header.split()[-2:] == ["DETECTABLE", "LAUNCH-OVERHEAD"]
    liger = next(line for line in [header, *lines] if line.startswith("liger-rms-norm-liger-triton"))
    assert liger.endswith(f"{EVENTS_NS / 5000:.2f}x host-bound")


def test_without_a_twin_the_data_flags_a_flat_sweep_and_a_slow_small_run(kidx):
    items = _imported(kidx)
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    code, _, err = kidx("apply", "-f", "-", stdin=data)
    assert code == 0, err
    code, out, err = kidx("describe", "run", EVENTS_RUN)
    assert (code, err) == (0, "")
    assert out[out.index("Host Share:"):out.index("Referenced By:")] == (
        "Host Share:\n"
        "  Likely Host-Bound:  flat sweep: latency x0.64 while seq grows x4 from here (exponent -0.32, below 0.5)\n"
        "                      2.4% of the GPU's roofline (below 25%) at a working set of 16 MiB (at most 256 MiB)\n"
    )
    code, out, _ = kidx("describe", "run", LARGE_RUN)  # 68% of the roofline at 1 GiB: not suspect
    assert code == 0 and "Host Share" not in out
    code, out, _ = kidx("compare", "-l", "kernel=rms_norm,operation=forward", "-o", "json")
    rows = {row["run"]: row for group in json.loads(out)["groups"] for row in group["rows"]}
    assert rows[EVENTS_RUN]["likelyHostBound"] is True and rows[EVENTS_RUN]["hostBound"] is None
    assert rows[EVENTS_RUN]["hostBoundReasons"][0].startswith("flat sweep: latency x0.64 while seq grows x4")
    assert rows[LARGE_RUN]["likelyHostBound"] is False and rows[LARGE_RUN]["hostBoundReasons"] == []


def test_published_run_page_shows_the_launch_overhead(kidx, twins, tmp_path):
    pytest.importorskip("jinja2")
    code, _, err = kidx("publish", str(tmp_path / "site"))
    assert code == 0, err
    from kidx.publish.run_shards import read_data

    # each run page's sections are drawn by the site's script from the page's data
    runs = [run for page in (tmp_path / "site" / "runs").glob("*.html")
            for run in read_data(re.search(r'data-deflate="([^"]*)"', page.read_text(encoding="utf-8"))[1])["runs"]]
    events = next(run for run in runs if run["name"] == EVENTS_RUN)
    assert events["host"] == (f"host-bound: launch overhead {EVENTS_NS / 5000:.2f}x (events time / "
                              f"cuda_graph time 5µs, threshold 1.5x)")


# Runs applied from manifests (no spec.sourceNative): Liger's layout, the timed pass in the
# protocol (its notes), one workload, implementation and environment for both passes.
PASS_NOTES = {"forward": "Timed: the forward pass of the module.",
              "backward": "Timed: the backward pass of the module output given an upstream gradient."}
MANIFEST_TIMES = {  # (pass, timer) -> the run's median, ns
    ("forward", "cuda_events"): 144000, ("forward", "cuda_graph"): 5000,
    ("backward", "cuda_events"): 150000, ("backward", "cuda_graph"): 120000,
}


def _manifest_runs() -> str:
    documents = [
        {"kind": "Workload", "metadata": {"name": "norm-4096"},
         "spec": {"operation": "rms_norm", "dtype": "bf16", "parameters": {"hidden": 4096, "seq": 1024}}},
        {"kind": "Implementation", "metadata": {"name": "norm-triton"}, "spec": {"library": "liger-kernel"}},
        {"kind": "Implementation", "metadata": {"name": "norm-torch"}, "spec": {"library": "torch"}},
        {"kind": "ExecutionEnvironment", "metadata": {"name": "h200"},
         "spec": {"hardware": {"vendor": "nvidia", "product": "H200 SXM 141GB"}}},
    ]
    for (timed, timer), median in MANIFEST_TIMES.items():
        protocol = f"{timed}-{timer.replace('_', '-')}"
        measurement = {"metric": "latency", "timer": timer, "primaryStatistic": "median",
                       "cache": "cold" if timer == "cuda_graph" else "warm",
                       "repetitionMs": 10.0 if timer == "cuda_graph" else 100.0}
        documents += [
            {"kind": "BenchmarkProtocol", "metadata": {"name": protocol},
             "spec": {"harness": {"name": "bench.py"}, "measurement": measurement,
                      "comparability": {"notes": PASS_NOTES[timed]}}},
            {"kind": "BenchmarkRun", "metadata": {"name": f"run-{protocol}"},
             "spec": {"status": "passed", "protocolRef": {"name": protocol}, "workloadRef": {"name": "norm-4096"},
                      "implementationRef": {"name": "norm-triton"}, "environmentRef": {"name": "h200"},
                      "observedAt": "2026-12-01T10:00:00Z",
                      "timing": {"primaryStatistic": "median", "latencyNs": {"median": median}}}},
        ]
        if timer == "cuda_events":  # another implementation's, without a twin: compare has two rows a pass
            documents.append(json.loads(json.dumps(documents[-1]).replace("norm-triton", "norm-torch")
                                        .replace(f"run-{protocol}", f"torch-{protocol}")))
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kernelindex.dev/v1alpha1", **document} for document in documents]})


def test_an_applied_events_run_twins_with_its_own_pass(kidx):
    code, _, err = kidx("apply", "-f", "-", stdin=_manifest_runs())
    assert code == 0, err
    for timed in ("forward", "backward"):
        overhead = MANIFEST_TIMES[(timed, "cuda_events")] / MANIFEST_TIMES[(timed, "cuda_graph")]
        code, out, err = kidx("describe", "run", f"run-{timed}-cuda-events")
        assert (code, err) == (0, "")
        word = "host-bound" if overhead >= HOST_BOUND_OVERHEAD else "kernel-bound"
        assert out[out.index("Host Share:"):out.index("Referenced By:")] == (
            "Host Share:\n"
            f"  Launch Overhead:  {word}: launch overhead {overhead:.2f}x (events time / cuda_graph time "
            f"{MANIFEST_TIMES[(timed, 'cuda_graph')] // 1000}µs, threshold {HOST_BOUND_OVERHEAD:g}x)\n"
            f"  Kernel Runs:      run-{timed}-cuda-graph\n")
        code, out, err = kidx("compare", f"run-{timed}-cuda-events", f"torch-{timed}-cuda-events", "-o", "json")
        assert code == 0, err
        row = next(row for group in json.loads(out)["groups"] for row in group["rows"]
                   if row["run"] == f"run-{timed}-cuda-events")
        assert (row["launchOverhead"], row["hostBound"], row["kernelTime"]) == (
            pytest.approx(overhead), overhead >= HOST_BOUND_OVERHEAD, MANIFEST_TIMES[(timed, "cuda_graph")])


TIMERS = Path(__file__).resolve().parents[1] / "data" / "h200-timers"


def test_recorded_events_runs_twin_with_the_same_configs_kernel_timer_runs(kidx, tmp_path):
    """tests/data/h200-timers: `kidx record liger` on one H200 with cuda_events, and with
    cuda_graph (cupti where a graph could not capture the call) in another store. Each
    events row's launch overhead is its figure over the median of its own configuration's
    kernel-timer runs: same workload, implementation and environment, same pass."""
    code, _, err = kidx("import", "bundle", str(TIMERS / "cuda-events" / "store.kidx.json"))
    assert code == 0, err
    graph = tmp_path / "graph"
    code, _, err = kidx("import", "bundle", str(TIMERS / "cuda-graph" / "store.kidx.json"), store_path=graph)
    assert code == 0, err
    kernel: dict[tuple, list[float]] = {}  # (workload, implementation, pass) -> the kernel-timer runs' medians
    for kind in ("environments", "protocols", "implementations", "workloads", "runs"):
        code, out, err = kidx("get", kind, "-o", "json", store_path=graph)
        assert code == 0, err
        if kind == "runs":
            for run in json.loads(out)["items"]:
                spec = run["spec"]
                if (run["metadata"].get("labels") or {}).get("timer") == "cuda_graph":  # not kidx.measure's
                    kernel.setdefault((spec["workloadDigest"], spec["implementationDigest"],
                                       spec["sourceNative"]["benchmark"]), []).append(
                        spec["timing"]["latencyNs"]["median"])
        code, _, err = kidx("apply", "-f", "-", stdin=out)
        assert code == 0, err
    code, out, err = kidx("compare", "-l", "timer=cuda_events", "-o", "json")
    assert code == 0, err
    code, runs, _ = kidx("get", "runs", "-l", "timer=cuda_events", "-o", "json")
    by_name = {run["metadata"]["name"]: run["spec"] for run in json.loads(runs)["items"]}
    rows = [row for group in json.loads(out)["groups"] for row in group["rows"]]
    assert len(rows) == 32  # 16 configurations, two implementations each
    for row in rows:
        spec = by_name[row["run"]]
        twins = sorted(kernel[(spec["workloadDigest"], spec["implementationDigest"], spec["sourceNative"]["benchmark"])])
        median = (twins[len(twins) // 2] + twins[(len(twins) - 1) // 2]) / 2
        assert (row["kernelTime"], row["launchOverhead"]) == (median, pytest.approx(row["value"] / median)), row["run"]
        assert row["hostBound"] is (row["value"] / median >= HOST_BOUND_OVERHEAD)


def test_describe_reads_as_evidence_only_passed_twins_and_its_own_protocols_sweep(kidx, tmp_path):
    """Kernel-timer runs of the events run's workload that did not pass are no twins; a
    passed one whose protocol differs from the events run's only in its measurement (timer,
    cache, repetition) is; and events runs of another protocol on the sweep's workloads
    leave the run's own sweep as it was (their points are another sweep)."""
    items = _imported(kidx)
    made = _twin(items, EVENTS_RUN, "cuda_graph", 5000)
    made[1]["spec"]["status"] = "failed"  # 28.9x, were it evidence
    cupti = _twin(items, EVENTS_RUN, "cupti", 100000)
    cupti[0]["spec"]["measurement"].update(cache="cold", repetitionMs=7.0)
    steep = copy.deepcopy(cupti[0])
    steep["metadata"] = {"name": "liger-bench-repeated-forward"}
    steep["spec"]["measurement"].update(timer="cuda_events", repetitionMs=33.0)
    points = [item for item in items if item["kind"] == "BenchmarkRun" and item["spec"].get("status") == "passed"
              and "rms-norm-forward-liger-" in item["metadata"]["name"] and "timing" in item["spec"]]
    repeated = []
    for number, point in enumerate(points):  # latency proportional to seq: steep, were it the run's sweep
        again = copy.deepcopy(point)
        again["metadata"] = {"name": f"repeated-{number}"}
        again["spec"]["protocolRef"] = {"name": steep["metadata"]["name"]}
        del again["spec"]["protocolDigest"]
        again["spec"]["timing"]["latencyNs"] = {"median": 100 * (number + 1) ** 4}
        again["spec"].pop("measurements", None)
        repeated.append(again)
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items + made + cupti + [steep]
                                + repeated}))
    code, _, err = kidx("apply", "-f", str(path))
    assert code == 0, err
    code, out, err = kidx("describe", "run", EVENTS_RUN)
    assert (code, err) == (0, "")
    assert out[out.index("Host Share:"):out.index("Referenced By:")] == (
        "Host Share:\n"
        f"  Launch Overhead:  kernel-bound: launch overhead {EVENTS_NS / 100000:.2f}x (events time / cupti time "
        f"100µs, threshold {HOST_BOUND_OVERHEAD:g}x)\n"
        f"  Kernel Runs:      cupti-twin-{EVENTS_RUN[:60]}\n"
    )
    code, out, err = kidx("describe", "run", SEQ2048_RUN)  # no twin: its own sweep's points alone
    assert (code, err) == (0, "")
    assert out[out.index("Host Share:"):out.index("Referenced By:")] == (
        "Host Share:\n"
        "  Likely Host-Bound:  flat sweep: latency x0.73 while seq grows x2 from here (exponent -0.45, below 0.5)\n"
        "                      5.6% of the GPU's roofline (below 25%) at a working set of 32 MiB (at most 256 MiB)\n"
    )

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

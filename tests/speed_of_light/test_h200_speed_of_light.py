"""The speed-of-light cross-check on an NVIDIA H200 (tests/data/h200-sol/README.md): kidx's
achieved bandwidth from Liger's own harness (the large-shape rows of the eleven A/A
repetitions in tests/data/h200-aa/) against the bandwidth NVBench reports for the same
kernels with their global memory reads and writes declared. No GPU is needed."""

from __future__ import annotations

import json
import statistics

import pytest
from conftest import REPO
from ruamel.yaml import YAML

from kidx.formats.liger import convert_files
from kidx.identity import digest_of
from kidx.speed_of_light.achieved import achieved
from kidx.speed_of_light.costs import cost_of

AA = REPO / "tests" / "data" / "h200-aa"
SOL = REPO / "tests" / "data" / "h200-sol"
KERNELS = {  # (operation, the large shape's seq) -> NVBench benchmark and state
    "rms_norm": (32768, "rms_norm_forward", "T=32768"),
    "llama4_rope": (16384, "llama4_rope_forward", "T=16384"),
}
PROVIDERS = ("liger", "huggingface")


def measured_environment() -> dict:
    return YAML(typ="safe").load((SOL / "environment-measured.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def harness() -> dict:
    """(operation, provider) -> the achieved figures of each repetition's large-shape forward run."""
    environment = measured_environment()
    found: dict = {}
    for rep in sorted(AA.glob("rep-*")):
        documents = [d.body for d in convert_files([str(rep / "all_benchmark_data.csv")]).documents]
        workloads = {digest_of(d): d["spec"] for d in documents if d["kind"] == "Workload"}
        implementations = {digest_of(d): d["spec"] for d in documents if d["kind"] == "Implementation"}
        for run in (d["spec"] for d in documents if d["kind"] == "BenchmarkRun"):
            workload = workloads[run["workloadDigest"]]
            operation = workload["operation"]
            if (operation not in KERNELS or workload["parameters"].get("seq") != KERNELS[operation][0]
                    or run["sourceNative"]["benchmark"] != f"{operation}/forward"):
                continue
            library = implementations[run["implementationDigest"]]["library"]
            provider = "liger" if library == "liger-kernel" else "huggingface"
            found.setdefault((operation, provider), []).append(achieved(run, workload, environment))
    return found


def nvbench(file: str) -> dict:
    """(operation, provider) -> the state's summaries, tag -> value."""
    data = json.loads((SOL / file).read_text(encoding="utf-8"))
    states = {}
    for benchmark in data["benchmarks"]:
        for state in benchmark["states"]:
            summaries = {s["tag"]: next((d["value"] for d in s.get("data", []) if d["name"] == "value"), None)
                         for s in state["summaries"]}
            operation = benchmark["name"].removesuffix("_forward")
            provider = state["name"].rsplit("Provider=", 1)[1]
            states[operation, provider] = summaries
    return states


def median_bandwidth(figures) -> float:
    return statistics.median(f.bytes_per_second for f in figures)


def test_every_repetition_has_the_large_shape_runs(harness):
    assert sorted(harness) == sorted((op, p) for op in KERNELS for p in PROVIDERS)
    assert {len(figures) for figures in harness.values()} == {11}


def test_kidxs_bytes_are_what_nvbench_was_told():
    # NVBench was declared reads and writes; kidx's formula adds RMSNorm's saved rstd (M × 4 B)
    declared = nvbench("nvbench-blocking.json")
    for (operation, provider), summaries in declared.items():
        moved = sum(int(v) for tag, v in summaries.items() if tag.startswith(("nv/gmem/reads/", "nv/gmem/writes/")))
        seq = KERNELS[operation][0]
        workload = {"family": "liger_kernel_bench", "operation": operation, "dtype": "bf16",
                    "parameters": {"seq": seq, "hidden": 8192, **(
                        {"eps": 1e-6} if operation == "rms_norm" else {"q_heads": 32, "kv_heads": 8})}}
        formula = cost_of(workload, "forward")
        assert formula is not None
        assert formula.bytes - moved == (seq * 4 if operation == "rms_norm" else 0), (operation, provider)


@pytest.mark.parametrize("operation", KERNELS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_kidx_and_nvbench_agree_within_ten_percent(harness, operation, provider):
    """NVBench with its blocking kernel (launches enqueued while the stream is held, L2
    flushed before each sample: cold) against kidx's figure from Liger's do_bench median."""
    kidx = median_bandwidth(harness[operation, provider])
    reported = float(nvbench("nvbench-blocking.json")[operation, provider]["nv/cold/bw/global/bytes_per_second"])
    assert abs(kidx / reported - 1) < 0.10
    assert abs(kidx / reported - 1) < 0.015  # what was seen: 0.6 % to 1.4 %


def test_the_figures_of_the_worked_example(harness):
    """docs/speed-of-light.md quotes these."""
    shown = {key: (round(median_bandwidth(f) / 1e9, 1),
                   round(statistics.median(x.peak.sol for x in f) * 100, 1),
                   round(statistics.median(x.measured.sol for x in f) * 100, 1)) for key, f in harness.items()}
    assert shown == {
        ("rms_norm", "liger"): (3275.4, 68.2, 76.6),
        ("rms_norm", "huggingface"): (288.6, 6.0, 6.8),
        ("llama4_rope", "liger"): (1864.7, 38.8, 43.6),
        ("llama4_rope", "huggingface"): (556.2, 11.6, 13.0),
    }
    blocking, synced = nvbench("nvbench-blocking.json"), nvbench("nvbench-sol.json")
    assert {key: round(float(s["nv/cold/bw/global/bytes_per_second"]) / 1e9, 1) for key, s in blocking.items()} == {
        ("rms_norm", "liger"): 3250.5, ("rms_norm", "huggingface"): 285.6,
        ("llama4_rope", "liger"): 1852.7, ("llama4_rope", "huggingface"): 548.7}
    assert {key: round(float(s["nv/cold/bw/global/bytes_per_second"]) / 1e9, 1) for key, s in synced.items()} == {
        ("rms_norm", "liger"): 2261.1, ("rms_norm", "huggingface"): 284.2,
        ("llama4_rope", "liger"): 1540.1, ("llama4_rope", "huggingface"): 538.7}


def test_warm_and_cold_barely_differ_at_these_shapes():
    """The working sets (1 GiB, 656 MiB) dwarf the H200's 60 MiB L2: NVBench's batched (warm)
    GPU time is within 1 % of its cold one (0.7 % at most)."""
    for summaries in nvbench("nvbench-blocking.json").values():
        cold, warm = float(summaries["nv/cold/time/gpu/mean"]), float(summaries["nv/batch/time/gpu/mean"])
        assert abs(warm / cold - 1) < 0.01


def test_timing_from_an_idle_gpu_counts_the_hosts_launch_time():
    """With sync=True NVBench cannot hold the stream, so each sample's interval starts on an
    idle GPU and includes the host's launch path: 144 µs more for Liger's RMSNorm, 75 µs for
    its RoPE, and under 4 % for Hugging Face's longer kernels. The launch probe shows the same
    mechanism with plain CUDA events."""
    blocking, synced = nvbench("nvbench-blocking.json"), nvbench("nvbench-sol.json")
    extra = {key: round((float(synced[key]["nv/cold/time/gpu/mean"]) - float(blocking[key]["nv/cold/time/gpu/mean"]))
                        * 1e6, 1) for key in blocking}
    assert extra == {("rms_norm", "liger"): 144.5, ("rms_norm", "huggingface"): 18.9,
                     ("llama4_rope", "liger"): 75.4, ("llama4_rope", "huggingface"): 23.3}
    probe = json.loads((SOL / "launch-probe.json").read_text(encoding="utf-8"))
    for times in probe.values():
        assert times["idle"] > times["queued"]  # the idle GPU waited for the host
    liger = probe["rms_norm/liger"]
    assert round((liger["idle"] - liger["queued"]) * 1e6, 1) == 63.5
    # queued like do_bench, the probe reproduces the harness's median within 0.2 %
    assert abs(liger["queued"] / 327.872e-6 - 1) < 0.002


def test_the_measured_peaks_are_outside_the_identity():
    captured = YAML(typ="safe").load((REPO / "tests" / "data" / "h200" / "environment.yaml").read_text(encoding="utf-8"))
    measured = measured_environment()
    assert measured["metadata"]["name"] == captured["metadata"]["name"] == "nvidia-h200-1x-2959180400"
    assert digest_of(measured) == digest_of(captured)
    annotations = measured["metadata"]["annotations"]
    assert annotations["kernelindex.dev/measured-memory-bandwidth"] == "4275334951753"  # 89.1 % of 4.8 TB/s
    assert annotations["kernelindex.dev/measured-flops-bf16"] == "798543721825946"  # 80.7 % of 989.5 TFLOP/s
    # torch-peaks.json, measured by another script on the machine an hour earlier, agrees within 1 %
    other = json.loads((SOL / "torch-peaks.json").read_text(encoding="utf-8"))
    assert abs(other["copy"]["bytes_per_second"] / 4275334951753 - 1) < 0.01
    assert abs(other["matmul_bf16"]["flop_per_second"] / 798543721825946 - 1) < 0.015


def test_get_runs_wide_shows_the_measured_share(kidx):
    rep = AA / "rep-01"
    assert kidx("import", "liger", str(rep / "all_benchmark_data.csv"),
                "--environment", str(SOL / "environment-measured.yaml"))[0] == 0
    code, out, err = kidx("get", "runs", "-l", "gpu=nvidia-h200", "--field-selector",
                          "spec.sourceNative.benchmark=rms_norm/forward", "-o", "wide")
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header.split()[-4:] == ["WORKLOAD", "BANDWIDTH", "SOL", "SOL-MEASURED"]
    large = [row.split() for row in rows if "seq32768" in row.split()[-4]]
    assert sorted(row[-3:] for row in large) == sorted([
        ["288.6GB/s", "6.0%", "6.8%"],  # huggingface, rep-01: 1,073,905,664 B in 3.720624 ms
        ["3.275TB/s", "68.2%", "76.6%"],  # liger, rep-01: in 327.872 µs; 4.8 TB/s and 4.275 TB/s
    ]), large


def test_nvbench_declared_bytes_become_the_workloads_cost(kidx):
    """Imported, NVBench's declared reads and writes are the workload's spec.cost: kidx's
    bandwidth is then the declared bytes over the median GPU time (NVBench's own column
    divides by the mean)."""
    assert kidx("import", "nvbench", str(SOL / "nvbench-blocking.json"),
                "--environment", str(SOL / "environment-measured.yaml"))[0] == 0
    code, out, err = kidx("get", "workloads", "-o", "jsonpath={range .items[*]}{.metadata.name} "
                          "{.spec.cost.bytes}{\"\\n\"}{end}")
    assert code == 0, err
    assert sorted(out.splitlines()) == [
        "nvbench-llama4-rope-forward-t-16384-provider-huggingface 687865856",
        "nvbench-llama4-rope-forward-t-16384-provider-liger 687865856",
        "nvbench-rms-norm-forward-t-32768-provider-huggingface 1073774592",
        "nvbench-rms-norm-forward-t-32768-provider-liger 1073774592",
    ]
    code, out, err = kidx("get", "runs", "-o", "wide")
    rows = {row.split()[0]: row.split()[-3:] for row in out.splitlines()[1:]}
    liger = next(cells for name, cells in rows.items() if name.startswith("nvbench-rms-norm-forward-t-32768-provider-liger"))
    # 1,073,774,592 B over the median 330.336 µs = 3.2506e12 B/s; 67.7 % of 4.8 TB/s, 76.0 % of 4.275 TB/s
    assert liger == ["3.251TB/s", "67.7%", "76.0%"]
    # a file that declared nothing: no cost, no columns
    assert kidx("import", "nvbench", str(REPO / "tests" / "data" / "h200" / "nvbench.json"))[0] == 0
    code, out, _ = kidx("get", "runs", "-l", "benchmark=llama4_rope_forward", "-o", "wide")
    cells = {row.split()[0]: row.split()[-3:] for row in out.splitlines()[1:]}
    undeclared = [c for name, c in cells.items() if "-seq-" in name]  # its axis is Seq, the other file's T
    assert len(undeclared) == 4 and all(c == ["<none>"] * 3 for c in undeclared)

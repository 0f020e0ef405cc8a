"""Speed of light: each cost formula against a hand computation for one shape, the
published peaks, and the achieved figures of a run (docs/speed-of-light.md)."""

from __future__ import annotations

import pytest

from kidx.speed_of_light.achieved import achieved
from kidx.speed_of_light.costs import Cost, cost_of, timed_pass
from kidx.speed_of_light.peaks import PUBLISHED, measured_peak, published_peak

MiB = 1 << 20


def liger(operation, dtype="bf16", **parameters):
    spec = {"family": "liger_kernel_bench", "operation": operation, "parameters": parameters, "key": "k"}
    if dtype is not None:
        spec["dtype"] = dtype
    return spec


def cost(workload, timed):
    found = cost_of(workload, timed)
    assert found is not None and found.source == "formula"
    assert found.formula == f"liger_kernel_bench/{workload['operation']}/{timed}"
    return found.bytes, found.flops


# --- one shape per kernel, worked out by hand ---------------------------------------------

def test_rms_norm():
    # x 2048 × 4096 bf16 = 16 MiB; w 4096 fp32 = 16 KiB; rstd 2048 fp32 = 8 KiB
    workload = liger("rms_norm", M=2048, hidden=4096, eps=1e-6)
    x, w, rstd = 16 * MiB, 16384, 8192
    assert cost(workload, "forward") == (x + w + x + rstd, None)  # read x, w; write y, rstd
    assert cost(workload, "backward") == (3 * x + 2 * w + rstd, None)  # read dy, x, w, rstd; write dx, dw
    assert cost(workload, "full") == (5 * x + 3 * w + 2 * rstd, None)
    assert cost(workload, "forward")[0] == 33_579_008
    # the token-length sweep: x is (seq, hidden); its bsz/seq_len ceiling is not the shape
    swept = liger("rms_norm", seq=2048, hidden=4096, eps=1e-6, batch=8, seq_len=8192)
    assert cost(swept, "forward") == cost(workload, "forward")


def test_layer_norm():
    # x 4096 × 1024 fp32 = 16 MiB; w, b 1024 fp32 = 4 KiB each; mean, rstd 4096 fp32 = 16 KiB each
    workload = liger("layer_norm", "fp32", M=4096, N=1024, eps=1e-6)
    x, p, stat = 16 * MiB, 4096, 16384
    assert cost(workload, "forward") == (2 * x + 2 * p + 2 * stat, None)
    assert cost(workload, "backward") == (3 * x + 3 * p + 2 * stat, None)  # dy, x, w, mean, rstd; dx, dw, db
    assert cost(workload, "full")[0] == 5 * x + 5 * p + 4 * stat == 83_972_096
    # x T: 1024 tokens of 4096 bf16 (the stale seq_len 8192 is the sweep's ceiling)
    swept = liger("layer_norm", seq=1024, hidden=4096, eps=1e-6, batch=1, seq_len=8192)
    assert cost(swept, "forward") == (2 * 8 * MiB + 2 * 8192 + 2 * 4096, None)


def test_softmax():
    workload = liger("softmax", M=2048, N=4096)  # 16 MiB in bf16
    assert cost(workload, "forward") == (32 * MiB, None)
    assert cost(workload, "backward") == (48 * MiB, None)  # read y, dy; write dx
    assert cost(workload, "full") == (80 * MiB, None)
    # x BT: tokens × hidden; batch and seq are the sweep's ceiling
    assert cost(liger("softmax", tokens=2048, hidden=4096, batch=1, seq=8192), "forward") == (32 * MiB, None)


def test_cross_entropy_logits_are_fp32_in_the_harness():
    # B 8 × T 2048 = 16384 rows of V 4096 fp32 logits = 256 MiB; targets int64 128 KiB; lse 64 KiB
    workload = liger("cross_entropy", None, batch=8, seq=2048, vocab=4096)
    logits, targets, lse = 256 * MiB, 131072, 65536
    assert cost(workload, "forward") == (logits + targets + 4 + lse, None)
    assert cost(workload, "no-grad-forward") == (logits + targets + 4, None)  # nothing saved
    assert cost(workload, "backward") == (2 * logits + targets + lse, None)
    assert cost(workload, "full")[0] == 3 * logits + 2 * targets + 4 + 2 * lse == 805_699_588
    by_tokens = liger("cross_entropy", None, tokens=16384, vocab=4096, batch=1, seq=8192)
    assert cost(by_tokens, "forward") == cost(workload, "forward")
    # a model-config sweep: the shape lives in the harness's registry, not in the CSV
    assert cost_of(liger("cross_entropy", None, model="llama_2_7b", batch=1, seq=2048), "forward") is None


def test_embedding():
    # ids 8 × 2048 int64 = 128 KiB; out 16384 × 4096 fp32 = 256 MiB; V 1024 rows of 16 KiB
    workload = liger("embedding", "fp32", vocab=1024, batch=8, seq=2048, D=4096)
    ids, out, table = 131072, 256 * MiB, 16 * MiB
    # 16384 uniform ids over 1024 rows: every row is hit (1024 · (1 − (1023/1024)^16384) = 1024.0)
    assert cost(workload, "forward") == (ids + table + out, None)
    assert cost(workload, "backward") == (out + ids + table, None)  # read d out, ids; write dW
    # V 65536 rows: E[distinct] = 65536 · (1 − (65535/65536)^16384) = 14496.6 → 14497 rows read
    big = liger("embedding", "fp32", vocab=65536, batch=8, seq=2048, D=4096)
    assert cost(big, "forward") == (ids + 14497 * 16384 + out, None)


def test_rope():
    # hidden 4096 / 32 heads: D 128; S 1024: q 1024·32·128 bf16 = 8 MiB, k (8 heads) 2 MiB,
    # cos and sin 1024 × 128 bf16 = 256 KiB each
    workload = liger("rope", seq=1024, hidden=4096, q_heads=32, kv_heads=8)
    q, k, table = 8 * MiB, 2 * MiB, 512 * 1024
    assert cost(workload, "forward") == (2 * (q + k) + table, None)
    assert cost(workload, "backward") == (2 * q + table, None)  # only the rotated q is backpropagated
    assert cost(workload, "full") == (4 * q + 2 * k + 2 * table, None)


def test_llama4_rope_the_seed():
    # the seed: hidden 8192 / 32 heads: D 256; S 16384: q 256 MiB, k 64 MiB bf16;
    # freqs_cis 16384 × 128 complex64 = 16 MiB
    workload = liger("llama4_rope", seq=16384, hidden=8192, q_heads=32, kv_heads=8)
    assert cost(workload, "forward") == (2 * (256 + 64) * MiB + 16 * MiB, None) == (687_865_856, None)
    assert cost(workload, "backward") == ((2 * 256 + 16) * MiB, None)
    assert cost(workload, "full") == ((656 + 528) * MiB, None)


@pytest.mark.parametrize("operation", ["swiglu", "geglu"])
def test_gated_mlp(operation):
    # 4 × 1024 tokens, H 4096, I 11008, bf16: x 32 MiB; W 3 · 4096 · 11008 · 2 B; gate, up 2 · 4096 · 11008 · 2 B
    workload = liger(operation, batch=4, seq=1024, hidden=4096, inter=11008, hidden_act="silu")
    x, w, act = 32 * MiB, 270_532_608, 180_355_072
    flops = 6 * 4096 * 4096 * 11008  # three products of 2 · T · H · I
    assert flops == 1_108_101_562_368
    assert cost(workload, "forward") == (2 * x + w + act, flops)
    assert cost(workload, "backward") == (3 * x + 2 * w + act, 2 * flops)
    assert cost(workload, "full") == (5 * x + 3 * w + 2 * act, 3 * flops)
    # x BT (tokens): the harness's x is (bsz, x, hidden)
    by_tokens = liger(operation, batch=4, tokens=1024, seq=8192, hidden=4096, inter=11008, hidden_act="silu")
    assert cost(by_tokens, "forward") == cost(workload, "forward")


# --- what gives no cost --------------------------------------------------------------------

@pytest.mark.parametrize("workload, timed", [
    (liger("rms_norm", M=2048, hidden=4096, eps=1e-6, tokens=3), "forward"),  # a name it does not know
    (liger("rms_norm", M=2048, eps=1e-6), "forward"),  # a size missing
    (liger("rms_norm", M=2048.0, hidden=4096, eps=1e-6), "forward"),  # not an integer
    (liger("rms_norm", None, M=2048, hidden=4096, eps=1e-6), "forward"),  # no dtype
    (liger("rms_norm", "int4", M=2048, hidden=4096, eps=1e-6), "forward"),  # a dtype without a size
    (liger("rms_norm", M=2048, hidden=4096, eps=1e-6), "sideways"),  # a pass it does not know
    (liger("rms_norm", M=2048, hidden=4096, eps=1e-6), None),
    (liger("rope", seq=1024, hidden=4095, q_heads=32, kv_heads=8), "forward"),  # hidden not a multiple of heads
    (liger("fused_linear_cross_entropy", hidden=4096, vocab=128256, tokens=4096), "forward"),
    ({**liger("rms_norm", M=2048, hidden=4096, eps=1e-6), "family": "other"}, "forward"),
])
def test_unknown_shapes_give_no_cost(workload, timed):
    assert cost_of(workload, timed) is None


def test_a_declared_cost_wins_and_says_so():
    workload = {**liger("rms_norm", M=2048, hidden=4096, eps=1e-6), "cost": {"bytes": 1000, "flops": 7}}
    assert cost_of(workload, "forward") == Cost(1000, 7, "declared")
    assert cost_of({"operation": "copy", "cost": {"bytes": 64}}, None) == Cost(64, None, "declared")


def test_the_pass_comes_from_the_benchmark():
    workload = liger("llama4_rope", seq=16384, hidden=8192, q_heads=32, kv_heads=8)
    assert timed_pass({"sourceNative": {"benchmark": "llama4_rope/backward"}}, workload) == "backward"
    assert timed_pass({"sourceNative": {"benchmark": "llama4_rope/full/memory"}}, workload) is None
    assert timed_pass({"sourceNative": {"benchmark": "rope/backward"}}, workload) is None
    assert timed_pass({}, workload) is None


# --- peaks ----------------------------------------------------------------------------------

def test_published_peaks_cover_every_gpu_in_the_liger_data():
    from kidx.formats.gpus import KNOWN_GPUS
    from kidx.formats.liger import GPUS

    for name in [*GPUS, "NVIDIA H200"]:
        product, form_factor, _ = KNOWN_GPUS[name]
        peak = published_peak({"vendor": "nvidia", "product": product, **({"formFactor": form_factor} if form_factor else {})})
        assert peak is not None, name
        assert peak.source and peak.bandwidth > 0 and peak.flops["bf16"] > peak.flops["fp32"]
    h200 = published_peak({"vendor": "nvidia", "product": "NVIDIA H200"})
    assert h200 is not None and h200.bandwidth == 4.8e12 and h200.flops["bf16"] == 989.5e12
    assert published_peak({"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "PCIe"}).bandwidth == 2e12
    assert "fp8" not in PUBLISHED["NVIDIA A100", "SXM4 80GB"].flops  # Ampere has no FP8
    assert published_peak({"vendor": "nvidia", "product": "NVIDIA A10G"}) is None
    assert published_peak(None) is None


def test_measured_peaks_read_from_annotations():
    assert measured_peak({"kernelindex.dev/measured-memory-bandwidth": "4100000000000",
                          "kernelindex.dev/measured-flops-bf16": "780000000000000",
                          "kernelindex.dev/measured-flops-fp8": "1"}) == measured_peak(
        {"kernelindex.dev/measured-memory-bandwidth": "4100000000000",
         "kernelindex.dev/measured-flops-bf16": "780000000000000"})
    found = measured_peak({"kernelindex.dev/measured-memory-bandwidth": "4100000000000"})
    assert found is not None and found.bandwidth == 4.1e12 and found.flops == {}
    assert measured_peak({"kernelindex.dev/measured-memory-bandwidth": "fast"}) is None
    assert measured_peak({}) is None and measured_peak(None) is None


# --- achieved figures -----------------------------------------------------------------------

SEED_WORKLOAD = liger("llama4_rope", seq=16384, hidden=8192, q_heads=32, kv_heads=8)
H100 = {"spec": {"hardware": {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3"}}}


def run(benchmark="llama4_rope/backward", median=417536, **extra):
    return {"status": "passed", "timing": {"latencyNs": {"median": median}, "primaryStatistic": "median"},
            "sourceNative": {"benchmark": benchmark}, **extra}


def test_the_seed_runs_achieved_bandwidth():
    # backward: 528 MiB in 417.536 µs = 553,648,128 / 417.536e-6 = 1.3260e12 B/s, 39.6 % of 3.35 TB/s
    figures = achieved(run(), SEED_WORKLOAD, H100)
    assert figures is not None and figures.cost.bytes == 553_648_128
    assert figures.bytes_per_second == pytest.approx(1.32599e12, rel=1e-5)
    assert figures.peak is not None and figures.peak.bandwidth == pytest.approx(0.395818, rel=1e-5)
    assert figures.peak.flops is None and figures.peak.sol == figures.peak.bandwidth
    assert figures.measured is None and figures.gpu == "H100 SXM 80GB HBM3"
    assert figures.as_dict() == {
        "costSource": "formula", "formula": "liger_kernel_bench/llama4_rope/backward", "bytes": 553_648_128,
        "bytesPerSecond": figures.bytes_per_second, "ofPeak": {"bandwidth": figures.peak.bandwidth,
                                                               "sol": figures.peak.bandwidth},
        "peakOf": "H100 SXM 80GB HBM3",
    }


def test_measured_peak_fraction_and_flops():
    mlp = liger("swiglu", batch=4, seq=1024, hidden=4096, inter=11008, hidden_act="silu")
    environment = {**H100, "metadata": {"annotations": {"kernelindex.dev/measured-flops-bf16": "700000000000000",
                                                        "kernelindex.dev/measured-memory-bandwidth": "3000000000000"}}}
    figures = achieved(run("swiglu/forward", median=2_000_000), mlp, environment)
    assert figures is not None
    assert figures.flops_per_second == pytest.approx(1_108_101_562_368 / 2e-3)
    assert figures.peak.flops == pytest.approx(554.050781184e12 / 989.5e12)
    assert figures.measured.flops == pytest.approx(554.050781184e12 / 700e12)
    assert figures.peak.sol == figures.peak.flops  # compute-bound: FLOPs bound the time


@pytest.mark.parametrize("spec, workload, environment", [
    (run(), None, H100),  # workload not in the store
    (run(), liger("fused_moe", experts=8), H100),  # no formula
    (run(status="failed"), SEED_WORKLOAD, H100),
    ({"status": "passed", "memory": {"peakAllocatedBytes": {"median": 5}}}, SEED_WORKLOAD, H100),
])
def test_unknown_cost_or_time_gives_nothing(spec, workload, environment):
    assert achieved(spec, workload, environment) is None


def test_unknown_peak_gives_rates_without_fractions():
    figures = achieved(run(), SEED_WORKLOAD, {"spec": {"hardware": {"vendor": "nvidia", "product": "NVIDIA A10G"}}})
    assert figures is not None and figures.bytes_per_second and figures.peak is None and figures.measured is None
    assert achieved(run(), SEED_WORKLOAD, None).peak is None


# --- end to end: get runs -o wide -------------------------------------------------------------

from conftest import REPO  # noqa: E402

H200_DATA = REPO / "tests" / "data" / "h200"
LIGER_FORWARD_16K = "liger-llama4-rope-forward-liger-nvidia-h200-hidden8192-kv-heads8-q-heads32-seq16384-bf16-f7c12242c8"
MEMORY_RUN = "liger-llama4-rope-full-memory-liger-nvidia-h200-hidden8192-kv-heads8-q-heads32-seq16384-b-3a0f9b65a0"


def wide_row(kidx, name):
    code, out, err = kidx("get", "run", name, "-o", "wide")
    assert (code, err) == (0, "")
    header, row = out.splitlines()
    return dict(zip(header.split(), row.split(), strict=True))


def test_wide_runs_show_achieved_bandwidth_and_share_of_the_h200s_peak(kidx):
    assert kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"),
                "--environment", str(H200_DATA / "environment.yaml"))[0] == 0
    # forward at seq 16384: 687,865,856 B in 369.584 µs = 1.8612e12 B/s, 38.8 % of 4.8 TB/s
    row = wide_row(kidx, LIGER_FORWARD_16K)
    assert list(row)[-3:] == ["WORKLOAD", "BANDWIDTH", "SOL"]
    assert (row["MEDIAN"], row["BANDWIDTH"], row["SOL"]) == ("369.6µs", "1.861TB/s", "38.8%")
    # a memory run has no latency: the columns are not shown for it alone
    code, out, _ = kidx("get", "runs", "--field-selector", "spec.sourceNative.benchmark=llama4_rope/full/memory",
                        "-o", "wide")
    assert code == 0 and "BANDWIDTH" not in out and "SOL" not in out.split("\n")[0].split()
    # listed together, the memory run shows <none>
    code, out, _ = kidx("get", "runs", LIGER_FORWARD_16K, MEMORY_RUN, "-o", "wide")
    lines = out.splitlines()
    assert lines[0].split()[-2:] == ["BANDWIDTH", "SOL"]
    assert lines[1].split()[-2:] == ["1.861TB/s", "38.8%"] and lines[2].split()[-2:] == ["<none>", "<none>"]
    # the plain table is unchanged
    assert "BANDWIDTH" not in kidx("get", "runs").out


def test_measured_peaks_add_a_column_and_leave_the_digest_alone(kidx, tmp_path):

    captured = (H200_DATA / "environment.yaml").read_text()
    measured = captured.replace(
        "  annotations:\n",
        "  annotations:\n"
        "    kernelindex.dev/measured-memory-bandwidth: '4000000000000'\n"
        "    kernelindex.dev/measured-flops-bf16: '750000000000000'\n", 1)
    path = tmp_path / "environment.yaml"
    path.write_text(measured)
    assert kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"), "--environment", str(path))[0] == 0
    digest = kidx("get", "env", "nvidia-h200-1x-2959180400", "-o", "jsonpath={.metadata.digest}").out
    assert digest == kidx("digest", "-f", str(H200_DATA / "environment.yaml")).out.split()[0]
    row = wide_row(kidx, LIGER_FORWARD_16K)
    assert list(row)[-3:] == ["BANDWIDTH", "SOL", "SOL-MEASURED"]
    assert row["SOL-MEASURED"] == "46.5%"  # 1.8612e12 / 4e12


# --- kidx plot --y ------------------------------------------------------------------------------

def test_plot_draws_bandwidth_and_share_of_peak(kidx, tmp_path):
    pytest.importorskip("matplotlib", reason="the test extra installs matplotlib (kidx[plot])")
    import csv
    import io
    import xml.etree.ElementTree as ElementTree

    assert kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"),
                "--environment", str(H200_DATA / "environment.yaml"))[0] == 0
    select = ["--x", "workload.spec.parameters.seq", "--field-selector", "spec.sourceNative.benchmark=llama4_rope/forward"]

    def points(y):
        path = tmp_path / f"{y}.csv"
        code, out, err = kidx("plot", *select, "--y", y, "-o", str(path))
        assert (code, out) == (0, ""), err
        assert err == f"wrote {path}: 1 panel, 2 lines, 10 points\n"
        return {(r["line"].split("-")[-1], r["x"]): r for r in csv.DictReader(io.StringIO(path.read_text()))}

    sol = points("sol")["triton", "16384"]
    # 687,865,856 B in 369.584 µs (p20 368.979, p80 370.586) over 4.8 TB/s, in percent
    assert (sol["value"], sol["unit"]) == (repr(687865856 / (369584 * 1e-9) / 4.8e12 * 100), "%")
    assert float(sol["low"]) < float(sol["value"]) < float(sol["high"])
    assert float(sol["low"]) == pytest.approx(687865856 / 370.586e-6 / 4.8e12 * 100, rel=1e-9)
    bandwidth = points("bandwidth")["eager", "16384"]
    assert (bandwidth["value"], bandwidth["unit"]) == (repr(687865856 / (1236160 * 1e-9)), "B/s")  # 1.236160 ms
    # RoPE's FLOPs are not counted: nothing to draw
    code, out, err = kidx("plot", *select, "--y", "flops", "-o", str(tmp_path / "flops.csv"))
    assert (code, out) == (1, "")
    assert err == ("error: nothing to plot: no selected run has a known --y flops and a value at "
                   "workload.spec.parameters.seq\n")
    svg = tmp_path / "sol.svg"
    assert kidx("plot", *select, "--y", "sol", "-o", str(svg))[0] == 0
    texts = "".join(e.text or "" for e in ElementTree.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}text"))
    assert "median speed of light (% of peak)" in texts
    code, _, err = kidx("plot", *select, "--y", "speed", "-o", str(svg))
    assert code == 1 and err == "error: --y must be one of statistic, bandwidth, flops, sol, not 'speed'\n"


def test_plot_leaves_out_runs_without_a_cost_and_says_so(kidx, tmp_path):
    pytest.importorskip("matplotlib", reason="the test extra installs matplotlib (kidx[plot])")
    assert kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"),
                "--environment", str(H200_DATA / "environment.yaml"))[0] == 0
    path = tmp_path / "all.csv"
    code, out, err = kidx("plot", "--x", "workload.spec.parameters.seq", "--y", "bandwidth",
                          "--references", "implementation/liger-llama4-rope-liger-triton", "-o", str(path))
    assert code == 0, err
    # the five memory runs have no latency, so no bandwidth
    assert err.splitlines()[-1] == ("5 runs left out: no figure (no cost, or no peak for --y sol), "
                                    "or no value at workload.spec.parameters.seq")


# --- spec.cost in the Workload CRD ------------------------------------------------------------

def test_a_declared_cost_is_validated_and_an_absent_one_changes_no_digest(kidx, tmp_path):
    import json

    from kidx.identity import digest_of

    base = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "copy-1gib"},
            "spec": {"operation": "copy", "parameters": {"bytes": 1 << 30}}}
    declared = json.loads(json.dumps(base))
    declared["spec"]["cost"] = {"bytes": 2 << 30}
    assert digest_of(base) != digest_of(declared)
    # the seed's digests are pinned by tests/identity/test_identity.py; an absent cost is simply not hashed
    assert digest_of(base) == digest_of({**base, "spec": dict(base["spec"])})
    path = tmp_path / "w.json"
    path.write_text(json.dumps(declared))
    code, out, err = kidx("apply", "-f", str(path))
    assert (code, err) == (0, "") and out == "workload.kernelindex.dev/copy-1gib created\n"
    for cost, problem in (({"bytes": -1}, "spec.cost.bytes"), ({"bytes": 1.5}, "spec.cost.bytes"),
                          ({"moved": 5}, "spec.cost")):
        bad = json.loads(json.dumps(base))
        bad["spec"]["cost"] = cost
        path.write_text(json.dumps(bad))
        code, out, err = kidx("apply", "-f", str(path))
        assert code == 1 and problem in err, err
    code, out, _ = kidx("explain", "workload.spec.cost")
    assert code == 0 and "bytes" in out and "flops" in out

"""Real runs recorded on an NVIDIA H200 (tests/data/h200/README.md says how): Liger's
llama4_rope harness at the seed's workload, imported with the environment kidx captured
on that machine. No GPU is needed to run these tests."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, SEED_ENVIRONMENT_DIGEST, SEED_RUN_NAME

H200 = REPO / "tests" / "data" / "h200"
CSV = H200 / "all_benchmark_data.csv"
CAPTURED = H200 / "environment.yaml"
ENVIRONMENT = "nvidia-h200-1x-2959180400"
SEED_ROW_CSV = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,"
    "y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version\n"
    'llama4_rope,liger,backward,speed,ms,T,sequence length,16384,0.4175359904766083,0.41705599427223206,'
    '0.4181375920772552,"{""dtype"": ""torch.bfloat16"", ""hidden_size"": 8192, ""num_q_heads"": 32, '
    '""num_kv_heads"": 8}",NVIDIA H100 80GB HBM3,2025-08-07 21:42:15,0.6.1\n'
)
LIGER_BACKWARD_16K = "liger-llama4-rope-backward-liger-nvidia-h200-hidden8192-kv-heads8-q-heads32-seq16384-bf16-db5d2f8990"
HF_BACKWARD_16K = "liger-llama4-rope-backward-huggingface-nvidia-h200-hidden8192-kv-heads8-q-heads32-seq1638-e6647bead4"


@pytest.fixture
def imported(kidx):
    code, out, err = kidx("import", "liger", str(CSV), "--environment", str(CAPTURED))
    assert code == 0, err
    return out, err


def test_the_import_says_which_environment_the_runs_refer_to(imported):
    out, err = imported
    assert err == (
        "import liger (1 file): 40 rows read; ExecutionEnvironment 1 created; BenchmarkProtocol 4 created; "
        "Implementation 2 created; Workload 5 created; BenchmarkRun 40 created; "
        f"runs refer to ExecutionEnvironment {ENVIRONMENT}; 0 rows skipped\n"
    )
    assert f"executionenvironment.kernelindex.dev/{ENVIRONMENT} created\n" in out
    assert "liger-bench-nvidia-h200" not in out  # the GPU-name-only environment is not made


def test_h200_runs_land_in_their_own_environment_with_versions(kidx, imported):
    env = json.loads(kidx("get", "env", ENVIRONMENT, "-o", "json").out)
    assert env["spec"]["hardware"] == {
        "vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90", "count": 1,
        "memoryBytes": 150754820096}
    assert env["spec"]["software"] == {
        "cuda": "13.0", "cuda-driver": "13.0", "driver": "580.159.04", "liger-kernel": "0.8.2",
        "os": "Ubuntu 24.04.3 LTS", "python": "3.12.3", "torch": "2.11.0", "transformers": "5.17.0",
        "triton": "3.6.0"}
    assert env["metadata"]["annotations"]["kernelindex.dev/gpu-source"] == "nvml"
    refs = set(kidx("get", "runs", "-o", "jsonpath={.items[*].spec.environmentDigest}").out.split())
    assert refs == {env["metadata"]["digest"]}
    code, out, err = kidx("get", "runs", "-l", "gpu=nvidia-h200,liger_version=0.8.2", "-o", "name")
    assert len(out.splitlines()) == 40


def test_h200_and_the_seed_h100_run_are_in_different_groups(kidx, imported, tmp_path):
    """Same protocol, workload and implementation as the seed's row; only the environment
    differs, so the two never land in one comparison group."""
    seed_csv = tmp_path / "seed.csv"
    seed_csv.write_text(SEED_ROW_CSV)
    assert kidx("import", "liger", str(seed_csv))[0] == 0

    def spec(name):
        return json.loads(kidx("get", "run", name, "-o", "jsonpath={.spec}").out)

    seed, h200 = spec(SEED_RUN_NAME), spec(LIGER_BACKWARD_16K)
    for key in ("protocolDigest", "workloadDigest", "implementationDigest"):
        assert seed[key] == h200[key], key
    assert seed["environmentDigest"] == SEED_ENVIRONMENT_DIGEST != h200["environmentDigest"]
    code, out, err = kidx("get", "runs", "--references", f"env/{ENVIRONMENT}", "-o", "name")
    assert f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}\n" not in out and len(out.splitlines()) == 40


def test_liger_vs_huggingface_speedup_on_the_h200(kidx, imported):
    """Within the H200 group: backward pass at sequence length 16384."""
    def median(name):
        code, out, err = kidx("get", "run", name, "-o", "jsonpath={.spec.timing.latencyNs.median}")
        assert code == 0, err
        return int(out)

    liger, huggingface = median(LIGER_BACKWARD_16K), median(HF_BACKWARD_16K)
    assert (liger, huggingface) == (567744, 986304)
    assert round(huggingface / liger, 3) == 1.737
    for name in (LIGER_BACKWARD_16K, HF_BACKWARD_16K):
        code, out, err = kidx("get", "run", name, "-o", "jsonpath={.spec.environmentDigest} {.spec.workloadDigest}")
        assert out == kidx("get", "run", LIGER_BACKWARD_16K, "-o",
                           "jsonpath={.spec.environmentDigest} {.spec.workloadDigest}").out


def test_the_stored_environment_can_be_named_instead_of_the_file(kidx, imported):
    code, out, err = kidx("import", "liger", str(CSV), "--environment", ENVIRONMENT)
    assert code == 0, err
    assert all(line.endswith(" unchanged") for line in out.splitlines())
    assert f"runs refer to ExecutionEnvironment {ENVIRONMENT}" in err


def test_without_an_environment_the_runs_get_the_gpu_name_only_one(kidx):
    code, out, err = kidx("import", "liger", str(CSV))
    assert code == 0
    assert "executionenvironment.kernelindex.dev/liger-bench-nvidia-h200 created\n" in out
    assert json.loads(kidx("get", "env", "liger-bench-nvidia-h200", "-o", "jsonpath={.spec}").out) == {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"}, "software": {}}


def test_compare_groups_the_h200_apart_from_the_seed_and_computes_its_own_speedup(kidx, imported, tmp_path):
    """`kidx compare` puts the H200 runs and the seed's H100 run in different groups; the
    liger-vs-huggingface speedup on the H200 is computed within the H200 group alone."""
    seed_csv = tmp_path / "seed.csv"
    seed_csv.write_text(SEED_ROW_CSV)
    assert kidx("import", "liger", str(seed_csv))[0] == 0
    code, out, err = kidx("compare", "--field-selector", "workload.spec.parameters.seq=16384",
                          "-l", "operation=backward,metric=speed", "-o", "json")
    assert code == 0, err
    groups = {g["environment"]: g for g in json.loads(out)["groups"]}
    assert set(groups) == {ENVIRONMENT, "liger-bench-nvidia-h100-80gb-hbm3"}
    h100 = groups["liger-bench-nvidia-h100-80gb-hbm3"]
    assert [r["run"] for r in h100["rows"]] == [SEED_RUN_NAME]
    assert h100["note"] == "a single run: nothing to compare with"
    rows = {r["run"]: r for r in groups[ENVIRONMENT]["rows"]}
    assert set(rows) == {LIGER_BACKWARD_16K, HF_BACKWARD_16K}
    assert rows[HF_BACKWARD_16K]["verdict"] == "baseline" and rows[HF_BACKWARD_16K]["value"] == 986304
    liger = rows[LIGER_BACKWARD_16K]
    # one run a side: the bands say faster, within-run evidence only
    assert (liger["value"], liger["verdict"], liger["withinRun"], round(liger["speedup"], 3)) == (
        567744, "unconfirmed", "faster", 1.737)


def test_comparing_the_h200_run_with_the_seed_h100_run_is_refused(kidx, imported, tmp_path):
    seed_csv = tmp_path / "seed.csv"
    seed_csv.write_text(SEED_ROW_CSV)
    assert kidx("import", "liger", str(seed_csv))[0] == 0
    code, out, err = kidx("compare", LIGER_BACKWARD_16K, SEED_RUN_NAME)
    assert (code, out) == (2, "")
    assert err == (
        f"error: runs {LIGER_BACKWARD_16K} and {SEED_RUN_NAME} are not comparable: they differ in environment "
        f"{ENVIRONMENT} vs liger-bench-nvidia-h100-80gb-hbm3 (runs compare only under one protocol, workload "
        "and environment; --force compares them anyway)\n"
    )

"""The Liger CSV converter: the seed row, the three published files, and bad input."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import time
from pathlib import Path

import pytest
from conftest import REPO

from kidx.errors import InvalidInputError
from kidx.formats import liger
from kidx.formats.liger import LigerImport, SkippedRow, convert_files, convert_text
from kidx.identity import digest_of

DATA = REPO / "tests" / "data" / "liger"
MAIN = str(DATA / "all_benchmark_data.csv")
CUTEDSL = str(DATA / "all_benchmark_data_cutedsl.csv")
CUTILE = str(DATA / "all_benchmark_data_cutile.csv")
ALL_FILES = [MAIN, CUTEDSL, CUTILE]

HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,"
    "x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,"
    "liger_version"
)
# all_benchmark_data.csv, physical line 1488: the seed's row.
SEED_ROW = (
    'llama4_rope,liger,backward,speed,ms,T,sequence length,16384,0.4175359904766083,'
    '0.41705599427223206,0.4181375920772552,"{""dtype"": ""torch.bfloat16"", ""hidden_size"": '
    '8192, ""num_q_heads"": 32, ""num_kv_heads"": 8}",NVIDIA H100 80GB HBM3,2025-08-07 21:42:15,0.6.1'
)
# all_benchmark_data.csv, physical line 1468: a memory row.
MEMORY_ROW = (
    'llama4_rope,liger,full,memory,MB,H,hidden size,512,37.23486328125,37.23486328125,'
    '37.23486328125,"{""dtype"": ""torch.bfloat16"", ""seq_len"": 2048, ""num_q_heads"": 32, '
    '""num_kv_heads"": 8}",NVIDIA H100 80GB HBM3,2025-08-07 21:42:08,0.6.1'
)
COLUMNS = HEADER.split(",")
SEED_LABELS = {
    "liger_version": "0.6.1", "kernel": "llama4_rope", "operation": "backward", "provider": "liger",
    "metric": "speed", "gpu": "nvidia-h100-80gb-hbm3",
}
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
KIND_ORDER = ["BenchmarkProtocol", "ExecutionEnvironment", "Implementation", "Workload", "BenchmarkRun"]


def row(base: str = SEED_ROW, **changes: str) -> str:
    """A real row with some columns replaced, written the way Liger's DictWriter writes it."""
    fields = next(csv.reader([base]))
    for column, value in changes.items():
        fields[COLUMNS.index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(fields)
    return out.getvalue()


def csv_text(*rows: str, end: str = "\r\n") -> str:
    return end.join([HEADER, *rows]) + end


def runs_of(result: LigerImport) -> list:
    return [d for d in result.documents if d.body["kind"] == "BenchmarkRun"]


def kind_of(result: LigerImport, kind: str) -> list:
    return [d for d in result.documents if d.body["kind"] == kind]


def problems_of(text: str, source: str = "t.csv") -> list[str]:
    with pytest.raises(InvalidInputError) as caught:
        convert_text(text, source)
    return [str(p) for p in caught.value.problems]


@pytest.fixture(scope="module")
def seed() -> dict:
    return json.loads((REPO / "docs" / "examples" / "seed-bundle.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def imported() -> LigerImport:
    return convert_files(ALL_FILES)


# --- the seed row ----------------------------------------------------------------------

def test_seed_row_is_line_1488_of_the_main_file():
    lines = Path(MAIN).read_bytes().decode("utf-8").split("\r\n")
    assert lines[0] == HEADER
    assert lines[1487] == SEED_ROW


def test_seed_run_matches_the_seed_field_by_field(imported, seed):
    [run] = [d for d in runs_of(imported) if d.source == MAIN and d.line == 1488]
    expected, body = seed["run"], run.body
    assert body["apiVersion"] == expected["apiVersion"]
    assert body["kind"] == expected["kind"]
    spec, want = body["spec"], expected["spec"]
    for key in ("status", "timing", "observedAt", "measurements", "sourceNative",
                "protocolDigest", "environmentDigest"):
        assert spec[key] == want[key], key
    assert set(spec) == set(want)
    assert spec["sourceNative"]["externalId"] == want["sourceNative"]["externalId"]
    assert DIGEST.match(spec["workloadDigest"]) and DIGEST.match(spec["implementationDigest"])
    meta = body["metadata"]
    assert meta["name"] == expected["metadata"]["name"]
    assert len(meta["name"]) == 100 and meta["name"].endswith("-")
    assert meta["title"] == expected["metadata"]["title"]
    # the seed keeps its published label set; the importer adds what people select by
    assert expected["metadata"]["labels"] == {"liger_version": "0.6.1"}
    assert meta["labels"] == SEED_LABELS
    assert meta["annotations"] == {
        "kernelindex.dev/source-file": "all_benchmark_data.csv",
        "kernelindex.dev/source-line": "1488",
        "liger.kernelindex.dev/row": SEED_ROW,
    }
    assert (run.source, run.number, run.line, run.member) == (MAIN, 1487, 1488, None)


def test_seed_protocol_and_environment_are_the_seed_objects(imported, seed):
    by_digest = {digest_of(d.body): d.body for d in imported.documents}
    run = seed["run"]["spec"]
    for key, part in (("protocolDigest", "protocol"), ("environmentDigest", "environment")):
        assert digest_of(seed[part]) == run[key]
        body = by_digest[run[key]]
        assert body["spec"] == seed[part]["spec"]
        assert body["metadata"] == seed[part]["metadata"]
        assert body["kind"] == seed[part]["kind"]
    assert run["protocolDigest"].startswith("sha256:080e6e66")
    assert run["environmentDigest"].startswith("sha256:2750ae38")


def test_seed_row_alone_gives_the_same_run(imported):
    [alone] = runs_of(convert_text(csv_text(SEED_ROW), MAIN))
    [full] = [d for d in runs_of(imported) if d.source == MAIN and d.line == 1488]
    assert alone.body["spec"] == full.body["spec"]
    assert alone.body["metadata"]["name"] == full.body["metadata"]["name"]
    assert alone.body["metadata"]["annotations"]["kernelindex.dev/source-line"] == "2"


# --- the three files -------------------------------------------------------------------

def test_counts_per_kind(imported):
    counts = {kind: len(kind_of(imported, kind)) for kind in KIND_ORDER}
    assert counts == {
        "BenchmarkProtocol": 7,
        "ExecutionEnvironment": 6,
        "Implementation": 114,
        "Workload": 329,
        "BenchmarkRun": 3897,
    }
    assert imported.rows_read == 3897
    assert imported.skipped == []
    per_file = {path: sum(1 for d in runs_of(imported) if d.source == path) for path in ALL_FILES}
    assert per_file == {MAIN: 2448, CUTEDSL: 165, CUTILE: 1284}


def test_run_names_and_external_ids_are_distinct(imported):
    runs = runs_of(imported)
    assert len({d.body["metadata"]["name"] for d in runs}) == 3897
    assert len({d.body["spec"]["sourceNative"]["externalId"] for d in runs}) == 3897
    for d in runs:
        name = d.body["metadata"]["name"]
        assert name == liger.run_name(d.body["spec"]["sourceNative"]["externalId"])
        assert len(name) <= 100


def test_every_document_is_well_formed(imported):
    for d in imported.documents:
        body = d.body
        assert list(body) == ["apiVersion", "kind", "metadata", "spec"]
        assert body["apiVersion"] == "kernelindex.dev/v1alpha1"
        meta = body["metadata"]
        assert set(meta) <= {"name", "title", "labels", "annotations"}
        assert NAME.match(meta["name"]) and len(meta["name"]) <= 253, meta["name"]
        assert isinstance(meta["title"], str) and meta["title"]
        for key, value in {**meta.get("labels", {}), **meta.get("annotations", {})}.items():
            assert re.match(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$", key)
            assert isinstance(value, str)
        _check_spec(body["kind"], body["spec"])
        digest_of(body)  # canonical form exists (no NaN, no odd types)


def test_every_document_passes_the_crd_schemas(imported):
    validation = pytest.importorskip("kidx.kinds.validation")
    from kidx.kinds.registry import registry

    validator = validation.DocumentValidator(registry())
    odd = convert_text(csv_text(row(kernel_operation_mode="", extra_benchmark_config_str="", y_value_50="nan",
                                    x_value="abc", gpu_name="Weird GPU 9000")), "t.csv")
    problems = []
    for document in [*imported.documents, *odd.documents]:
        info, found = validator.kind_of(document)
        problems += found or validator.problems(document, info)
    assert [str(p) for p in problems] == []


def test_names_are_unique_per_kind(imported):
    for kind in KIND_ORDER:
        names = [d.body["metadata"]["name"] for d in kind_of(imported, kind)]
        assert len(names) == len(set(names)), kind


def test_documents_are_ordered_and_each_shared_object_appears_once(imported):
    kinds = [d.body["kind"] for d in imported.documents]
    assert kinds == sorted(kinds, key=KIND_ORDER.index)
    shared = [digest_of(d.body) for d in imported.documents if d.body["kind"] != "BenchmarkRun"]
    assert len(shared) == len(set(shared))
    present = set(shared)
    for d in runs_of(imported):
        spec = d.body["spec"]
        for key in ("protocolDigest", "environmentDigest", "implementationDigest", "workloadDigest"):
            assert spec[key] in present
    positions = [(ALL_FILES.index(d.source), d.line) for d in runs_of(imported)]
    assert positions == sorted(positions)


def test_run_documents_point_at_their_rows(imported):
    lines = {path: Path(path).read_bytes().decode("utf-8").split("\r\n") for path in ALL_FILES}
    for d in runs_of(imported):
        annotations = d.body["metadata"]["annotations"]
        assert d.number == d.line - 1
        assert annotations["kernelindex.dev/source-file"] == Path(d.source).name
        assert annotations["kernelindex.dev/source-line"] == str(d.line)
        assert annotations["liger.kernelindex.dev/row"] == lines[d.source][d.line - 1]


def test_shared_objects_come_from_the_first_file_that_needs_them(imported):
    by_name = {d.body["metadata"]["name"]: d for d in imported.documents if d.body["kind"] != "BenchmarkRun"}
    assert by_name["liger-bench-nvidia-h100-80gb-hbm3"].source == MAIN
    assert by_name["liger-cross-entropy-liger-cutedsl"].source == CUTEDSL
    assert by_name["liger-dyt-liger-cutile"].source == CUTILE


def test_protocols(imported, seed):
    protocols = {d.body["metadata"]["name"]: d.body for d in kind_of(imported, "BenchmarkProtocol")}
    assert sorted(protocols) == [
        "liger-bench-do-bench-backward",
        "liger-bench-do-bench-forward",
        "liger-bench-do-bench-full",
        "liger-bench-do-bench-no-grad-forward",
        "liger-bench-peak-memory-backward",
        "liger-bench-peak-memory-forward",
        "liger-bench-peak-memory-full",
    ]
    assert protocols["liger-bench-do-bench-backward"] == seed["protocol"]
    for name, body in protocols.items():
        spec = body["spec"]
        assert spec["harness"] == seed["protocol"]["spec"]["harness"]
        assert spec["comparability"]["family"] == "liger_kernel_bench"
        notes = spec["comparability"]["notes"]
        assert notes.endswith("GPU.")
        if "do-bench" in name:
            assert spec["measurement"] == {"timer": "cuda_events", "primaryStatistic": "median"}
            assert "triton.testing.do_bench" in notes
        else:
            assert spec["measurement"] == {
                "metric": "peak_memory", "primaryStatistic": "median", "repetitions": 10,
            }
            for phrase in ("reset_peak_memory_stats", "max_memory_allocated", "torch.quantile",
                           "10 samples", "MiB", "bytes"):
                assert phrase in notes
    assert "torch.no_grad()" in protocols["liger-bench-do-bench-no-grad-forward"]["spec"]["comparability"]["notes"]
    assert protocols["liger-bench-peak-memory-full"]["metadata"]["title"] == (
        "Liger benchmark harness · peak memory · forward and backward pass (full)"
    )


def test_environments(imported, seed):
    envs = {d.body["metadata"]["name"]: d.body for d in kind_of(imported, "ExecutionEnvironment")}
    assert envs["liger-bench-nvidia-h100-80gb-hbm3"] == seed["environment"]
    hardware = {name: body["spec"]["hardware"] for name, body in envs.items()}
    assert hardware == {
        "liger-bench-nvidia-a100-sxm4-80gb": {
            "vendor": "nvidia", "product": "NVIDIA A100", "formFactor": "SXM4 80GB", "architecture": "sm_80"},
        "liger-bench-nvidia-h100-pcie": {
            "vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "PCIe", "architecture": "sm_90"},
        "liger-bench-nvidia-h100-80gb-hbm3": {
            "vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3", "architecture": "sm_90"},
        "liger-bench-nvidia-geforce-rtx-3090": {
            "vendor": "nvidia", "product": "NVIDIA GeForce RTX 3090", "architecture": "sm_86"},
        "liger-bench-nvidia-geforce-rtx-4090": {
            "vendor": "nvidia", "product": "NVIDIA GeForce RTX 4090", "architecture": "sm_89"},
        "liger-bench-nvidia-b200": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"},
    }
    assert all(body["spec"]["software"] == {} for body in envs.values())
    assert envs["liger-bench-nvidia-b200"]["metadata"]["title"] == "Liger benchmark host · B200"


@pytest.mark.parametrize(
    ("gpu", "name", "hardware"),
    [
        ("NVIDIA A100-SXM4-40GB", "liger-bench-nvidia-a100-sxm4-40gb",
         {"vendor": "nvidia", "product": "NVIDIA A100", "formFactor": "SXM4 40GB", "architecture": "sm_80"}),
        ("NVIDIA H100 NVL", "liger-bench-nvidia-h100-nvl",
         {"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "NVL", "architecture": "sm_90"}),
        ("NVIDIA H200", "liger-bench-nvidia-h200",
         {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"}),
        # unknown GPUs: the name carries a hash of the reported text (see _environment_manifest)
        ("AMD Instinct MI300X", "liger-bench-amd-instinct-mi300x-7afa9e384e",
         {"vendor": "amd", "product": "AMD Instinct MI300X"}),
        ("NVIDIA L40S", "liger-bench-nvidia-l40s",
         {"vendor": "nvidia", "product": "NVIDIA L40S", "architecture": "sm_89"}),
        ("Acme Tensor X1", "liger-bench-acme-tensor-x1-" + hashlib.sha256(b"Acme Tensor X1").hexdigest()[:10],
         {"vendor": "acme", "product": "Acme Tensor X1"}),
    ],
)
def test_history_and_unknown_gpus(gpu, name, hardware):
    [env] = kind_of(convert_text(csv_text(row(gpu_name=gpu)), "t.csv"), "ExecutionEnvironment")
    assert env.body["metadata"]["name"] == name
    assert env.body["spec"] == {"hardware": hardware, "software": {}}


def test_speed_rounding_is_half_up(imported):
    [run] = [d for d in runs_of(imported) if d.source == MAIN and d.line == 1801]
    spec = run.body["spec"]
    assert spec["sourceNative"]["metrics"]["ms_20"] == 46.8328125
    assert spec["measurements"][0] == {"metric": "latency", "statistic": "p20", "unit": "ns", "value": 46832813}
    assert spec["timing"]["latencyNs"]["median"] == 46838448


def test_memory_row():
    result = convert_text(csv_text(MEMORY_ROW), "t.csv")
    [run] = runs_of(result)
    spec = run.body["spec"]
    assert spec["status"] == "passed"
    assert "timing" not in spec
    assert spec["memory"] == {"peakAllocatedBytes": {"median": 39043584}, "primaryStatistic": "median"}
    assert 37.23486328125 * 1048576 == 39043584
    assert spec["measurements"] == [
        {"metric": "peak_memory", "statistic": "p20", "unit": "bytes", "value": 39043584},
        {"metric": "peak_memory", "statistic": "p80", "unit": "bytes", "value": 39043584},
    ]
    assert spec["sourceNative"] == {
        "source": "liger-kernel-bench",
        "metrics": {"MB_20": 37.23486328125, "MB_50": 37.23486328125, "MB_80": 37.23486328125},
        "benchmark": "llama4_rope/full/memory",
        "externalId": "llama4_rope/full/memory/liger/nvidia-h100-80gb-hbm3/"
                      "hidden512-kv_heads8-q_heads32-seq2048-bf16/2025-08-07-21-42-08",
    }
    assert run.body["metadata"]["title"] == "Llama 4 rotary position embedding · liger · full · peak memory"
    [protocol] = kind_of(result, "BenchmarkProtocol")
    assert protocol.body["metadata"]["name"] == "liger-bench-peak-memory-full"
    assert digest_of(protocol.body) == spec["protocolDigest"]


def test_all_memory_rows_are_whole_bytes(imported):
    memory = [d for d in runs_of(imported) if "memory" in d.body["spec"]]
    assert len(memory) == 1228
    for d in memory:
        assert isinstance(d.body["spec"]["memory"]["peakAllocatedBytes"]["median"], int)


# --- workloads and implementations -----------------------------------------------------

def test_seed_workload_and_implementation(imported, seed):
    by_digest = {digest_of(d.body): d.body for d in imported.documents}
    [run] = [d for d in runs_of(imported) if d.source == MAIN and d.line == 1488]
    workload = by_digest[run.body["spec"]["workloadDigest"]]
    assert workload["metadata"] == {
        "name": "liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16",
        "title": "Llama 4 rotary position embedding · hidden 8192 · kv_heads 8 · q_heads 32 · seq 16384 · bf16",
    }
    assert workload["spec"] == {
        "family": "liger_kernel_bench",
        "operation": "llama4_rope",
        "parameters": {"hidden": 8192, "kv_heads": 8, "q_heads": 32, "seq": 16384},
        "dtype": "bf16",
        "key": "hidden8192-kv_heads8-q_heads32-seq16384-bf16",
    }
    implementation = by_digest[run.body["spec"]["implementationDigest"]]
    assert implementation["metadata"] == {
        "name": "liger-llama4-rope-liger-triton",
        "title": "Llama 4 rotary position embedding · Liger (Triton)",
    }
    assert implementation["spec"] == {
        "library": "liger-kernel", "operation": "llama4_rope", "backend": "triton",
        "repository": "https://github.com/linkedin/Liger-Kernel",
    }


def test_workload_parameters_are_typed(imported):
    workloads = [d.body["spec"] for d in kind_of(imported, "Workload")]
    values = [v for w in workloads for v in w["parameters"].values()]
    assert {type(v) for v in values} == {int, float, str, bool}
    models = {w["parameters"]["model"] for w in workloads if "model" in w["parameters"]}
    assert models == {"llama_2_7b", "llama_3_8b", "qwen2.5_7b", "qwen2.5_14b", "qwen2.5_72b",
                      "deepseek_v2_lite", "deepseek_v3"}
    assert {w.get("dtype") for w in workloads} == {"bf16", "fp32", None}
    no_dtype = {w["operation"] for w in workloads if "dtype" not in w}
    assert no_dtype == {"cross_entropy", "jsd", "megatron_swiglu", "kl_div", "megatron_cross_entropy",
                        "megatron_rms_norm", "tvd"}
    eps = {w["parameters"]["eps"] for w in workloads if "eps" in w["parameters"]}
    assert eps == {1e-06}
    for w in workloads:
        assert re.match(r"^[a-z0-9_]+$", w.get("dtype", "x"))
        assert None not in w["parameters"].values()


def test_key_order_variants_share_one_workload():
    a = row(extra_benchmark_config_str='{"B": 2, "C_in": 4, "dtype": "torch.bfloat16"}')
    b = row(extra_benchmark_config_str='{"C_in": 4, "dtype": "torch.bfloat16", "B": 2}',
            timestamp="2025-08-07 21:42:16")
    result = convert_text(csv_text(a, b), "t.csv")
    assert len(kind_of(result, "Workload")) == 1
    assert len(runs_of(result)) == 2


def test_stale_ceiling_keeps_its_raw_key():
    text = csv_text(row(extra_benchmark_config_str='{"seq_len": 8192, "bsz": 1, "dtype": "torch.float32"}'))
    [workload] = kind_of(convert_text(text, "t.csv"), "Workload")
    assert workload.body["spec"]["parameters"] == {"seq": 16384, "seq_len": 8192, "batch": 1}
    assert workload.body["spec"]["key"] == "batch1-seq16384-seq_len8192-fp32"


def test_null_placeholders_are_dropped_and_x_claims_its_name():
    text = csv_text(row(x_name="T", x_label="num_tokens", x_value="128",
                        extra_benchmark_config_str='{"sweep_dim": "T", "T": null, "E": 64}'))
    [workload] = kind_of(convert_text(text, "t.csv"), "Workload")
    assert workload.body["spec"]["parameters"] == {"tokens": 128, "sweep_dim": "T", "E": 64}
    assert "dtype" not in workload.body["spec"]


@pytest.mark.parametrize(
    ("provider", "normalised"),
    [
        ("liger", ("liger-kernel", "triton", None)),
        ("liger_triton", ("liger-kernel", "triton", None)),
        ("liger_cutile", ("liger-kernel", "cutile", None)),
        ("liger_cutedsl", ("liger-kernel", "cutedsl", None)),
        ("liger_tiled", ("liger-kernel", "triton", "tiled")),
        ("liger_in_place", ("liger-kernel", "triton", "in_place")),
        ("liger_rms_norm", ("liger-kernel", "triton", "rms_norm")),
        ("liger_triton_rms_norm", ("liger-kernel", "triton", "rms_norm")),
        ("liger_cutile_rms_norm", ("liger-kernel", "cutile", "rms_norm")),
        ("liger_fused_add_rms_norm", ("liger-kernel", "triton", "fused_add_rms_norm")),
        ("liger_triton_fused_add_rms_norm", ("liger-kernel", "triton", "fused_add_rms_norm")),
        ("liger_cutile_fused_add_rms_norm", ("liger-kernel", "cutile", "fused_add_rms_norm")),
        ("torch", ("torch", "eager", None)),
        ("torch_compile", ("torch", "inductor", None)),
        ("huggingface", ("transformers", "eager", None)),
        ("deepspeed_tiled", ("deepspeed", "eager", "tiled")),
        ("megatron", ("megatron-core", None, None)),
        ("megatron-fused", ("megatron-core", None, "fused")),
        ("megatron-unfused", ("megatron-core", None, "unfused")),
        ("liger_cutile-fp32-accum", ("liger-kernel", "cutile", "fp32-accum")),
        ("apex", ("apex", None, None)),
    ],
)
def test_provider_normalisation(provider, normalised):
    assert liger.normalise_provider(provider) == normalised


def test_implementations_are_one_per_kernel_and_normalised_provider(imported):
    keys = set()
    for d in runs_of(imported):
        raw = next(csv.reader([d.body["metadata"]["annotations"]["liger.kernelindex.dev/row"]]))
        keys.add((raw[0], liger.normalise_provider(raw[1])))
    assert len(keys) == 114 == len(kind_of(imported, "Implementation"))


# --- naming ----------------------------------------------------------------------------

def test_run_name_rule():
    external_id = "rope/full/memory/huggingface/nvidia-b200/batch1-hidden4096-seq8192-bf16/2026-06-16-10-00-00"
    name = liger.run_name(external_id)
    assert name == liger.run_name(external_id)
    assert re.match(r"^liger-rope-full-memory-huggingface-nvidia-b200-[a-z0-9-]*-[0-9a-f]{10}$", name)
    assert len(name) <= 100 and NAME.match(name)
    assert liger.run_name(external_id.replace("10-00-00", "10-00-01")) != name
    for legacy in liger.LEGACY_RUN_NAMES.values():
        assert legacy.endswith("-")  # generated names end in a hex digit


# --- bad and odd input -----------------------------------------------------------------

def test_wrong_header():
    text = csv_text(SEED_ROW).replace("kernel_operation_mode", "mode", 1)
    assert problems_of(text) == [
        "t.csv, line 1: not a Liger benchmark CSV header (column 3 is 'mode', expected "
        f"'kernel_operation_mode'); expected {HEADER}"
    ]
    assert problems_of("kernel_name,kernel_provider\r\n" + SEED_ROW + "\r\n") == [
        f"t.csv, line 1: not a Liger benchmark CSV header (found 2 columns); expected {HEADER}"
    ]
    assert problems_of("") == ["t.csv, line 1: the file is empty; expected the Liger benchmark CSV header"]


def test_wrong_number_of_fields():
    short = SEED_ROW.rsplit(",", 1)[0]
    assert problems_of(csv_text(SEED_ROW, short)) == ["t.csv, line 3: expected 15 fields, found 14"]
    assert problems_of(csv_text(SEED_ROW + ",extra")) == ["t.csv, line 2: expected 15 fields, found 16"]


@pytest.mark.parametrize(("text", "shown"), [("nan", "'nan'"), ("NaN", "'NaN'"), ("", "empty")])
def test_missing_median_gives_a_failed_run(text, shown):
    [run] = runs_of(convert_text(csv_text(row(y_value_50=text)), "t.csv"))
    spec = run.body["spec"]
    assert spec["status"] == "failed"
    assert "timing" not in spec
    assert spec["failure"] == {"reason": "MissingMeasurement", "message": f"y_value_50 is {shown}"}
    assert spec["measurements"] == [
        {"metric": "latency", "statistic": "p20", "unit": "ns", "value": 417056},
        {"metric": "latency", "statistic": "p80", "unit": "ns", "value": 418138},
    ]
    assert spec["sourceNative"]["metrics"] == {
        "ms_20": 0.41705599427223206, "ms_50": None, "ms_80": 0.4181375920772552,
    }
    digest_of(run.body)


def test_missing_quantiles_keep_the_median():
    [run] = runs_of(convert_text(csv_text(row(y_value_20="", y_value_80="nan")), "t.csv"))
    spec = run.body["spec"]
    assert spec["status"] == "failed"
    assert spec["timing"] == {"latencyNs": {"median": 417536}, "primaryStatistic": "median"}
    assert [m["value"] for m in spec["measurements"]] == [None, None]
    assert spec["failure"]["message"] == "y_value_20 is empty; y_value_80 is 'nan'"


def test_missing_memory_value():
    [run] = runs_of(convert_text(csv_text(row(MEMORY_ROW, y_value_50="nan")), "t.csv"))
    spec = run.body["spec"]
    assert spec["status"] == "failed" and "memory" not in spec
    assert spec["sourceNative"]["metrics"]["MB_50"] is None


def test_non_numeric_y_value():
    assert problems_of(csv_text(row(y_value_50="abc"))) == ["t.csv, line 2: y_value_50: 'abc' is not a number"]
    assert problems_of(csv_text(row(y_value_80="inf"))) == ["t.csv, line 2: y_value_80: 'inf' is not a number"]
    assert problems_of(csv_text(row(y_value_20="-1.5"))) == ["t.csv, line 2: y_value_20: '-1.5' is negative"]


def test_memory_value_must_be_whole_bytes():
    assert problems_of(csv_text(row(MEMORY_ROW, y_value_50="1.1"))) == [
        "t.csv, line 2: y_value_50: 1.1 MB is not a whole number of bytes (1.1 x 1048576 is not an integer)"
    ]


def test_unknown_metric_or_unit():
    assert problems_of(csv_text(row(metric_name="throughput"))) == [
        "t.csv, line 2: metric_name: unknown metric 'throughput' (expected speed or memory)"
    ]
    assert problems_of(csv_text(row(metric_unit="s"))) == [
        "t.csv, line 2: metric_unit: speed rows are in ms, found 's'"
    ]


def test_empty_mode_and_extra():
    result = convert_text(csv_text(row(kernel_operation_mode="", extra_benchmark_config_str="")), "t.csv")
    [run] = runs_of(result)
    assert run.body["spec"]["sourceNative"]["benchmark"] == "llama4_rope/unspecified"
    assert run.body["metadata"]["title"] == "Llama 4 rotary position embedding · liger · unspecified"
    [workload] = kind_of(result, "Workload")
    # the extra config contributes nothing: only the swept x value remains
    assert workload.body["spec"] == {
        "family": "liger_kernel_bench", "operation": "llama4_rope", "parameters": {"seq": 16384}, "key": "seq16384",
    }
    [protocol] = kind_of(result, "BenchmarkProtocol")
    assert protocol.body["metadata"]["name"] == "liger-bench-do-bench-unspecified"
    # "null" is what json.dumps(None) writes for a missing extra config
    again = convert_text(csv_text(row(kernel_operation_mode="", extra_benchmark_config_str="null")), "t.csv")
    assert kind_of(again, "Workload")[0].body == workload.body


def test_unparseable_extra_config():
    assert problems_of(csv_text(row(extra_benchmark_config_str="{bad"))) == [
        "t.csv, line 2: extra_benchmark_config_str: not valid JSON: Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1)"
    ]
    assert problems_of(csv_text(row(extra_benchmark_config_str="[1, 2]"))) == [
        "t.csv, line 2: extra_benchmark_config_str: expected a JSON object, found list"
    ]
    assert problems_of(csv_text(row(extra_benchmark_config_str='{"a": 1, "a": 2}'))) == [
        "t.csv, line 2: extra_benchmark_config_str: key 'a' appears twice"
    ]
    assert problems_of(csv_text(row(extra_benchmark_config_str='{"a": NaN}'))) == [
        "t.csv, line 2: extra_benchmark_config_str: NaN is not a number kidx can store"
    ]
    assert problems_of(csv_text(row(extra_benchmark_config_str='{"a": [1]}'))) == [
        "t.csv, line 2: extra_benchmark_config_str: key 'a' holds a list; only scalar values are supported"
    ]


def test_non_integer_x_value():
    result = convert_text(csv_text(row(x_value="abc"), row(x_value="0.5", timestamp="2025-08-07 21:42:16")), "t.csv")
    params = [w.body["spec"]["parameters"]["seq"] for w in kind_of(result, "Workload")]
    assert params == ["abc", 0.5]
    assert runs_of(result)[0].body["spec"]["sourceNative"]["externalId"] == (
        "llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seqabc-bf16/"
        "2025-08-07-21-42-15"
    )


def test_bad_timestamp_and_version():
    assert problems_of(csv_text(row(timestamp="2025-13-07 21:42:15", liger_version="0.6.1+cu121"))) == [
        "t.csv, line 2: timestamp: '2025-13-07 21:42:15' is not a time in %Y-%m-%d %H:%M:%S form",
        "t.csv, line 2: liger_version: '0.6.1+cu121' is not a valid label value",
    ]


def test_line_endings_and_final_newline():
    rows = (SEED_ROW, MEMORY_ROW)
    variants = [csv_text(*rows), csv_text(*rows, end="\n"), csv_text(*rows).rstrip("\r\n"),
                csv_text(*rows, end="\n").rstrip("\n")]
    bodies = [[d.body for d in convert_text(text, "t.csv").documents] for text in variants]
    assert all(b == bodies[0] for b in bodies)
    assert bodies[0][-1]["metadata"]["annotations"]["liger.kernelindex.dev/row"] == MEMORY_ROW


def test_blank_trailing_record_is_counted_and_skipped():
    result = convert_text(csv_text(SEED_ROW) + "\r\n", "t.csv")
    assert result.rows_read == 2
    assert result.skipped == [SkippedRow("t.csv", 3, "blank record")]
    assert len(runs_of(result)) == 1


def test_git_conflict_markers():
    text = csv_text(
        "<<<<<<< Updated upstream", SEED_ROW, "=======", MEMORY_ROW, ">>>>>>> Stashed changes",
    )
    assert problems_of(text) == [
        "t.csv, line 2: git conflict marker '<<<<<<< Updated upstream': the file holds an unresolved merge",
        "t.csv, line 4: git conflict marker '=======': the file holds an unresolved merge",
        "t.csv, line 6: git conflict marker '>>>>>>> Stashed changes': the file holds an unresolved merge",
    ]


def test_utf8_bom_is_tolerated(tmp_path):
    plain = convert_text(csv_text(SEED_ROW), "t.csv")
    assert [d.body for d in convert_text("\ufeff" + csv_text(SEED_ROW), "t.csv").documents] == [
        d.body for d in plain.documents
    ]
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + csv_text(SEED_ROW).encode("utf-8"))
    assert [d.body["spec"] for d in convert_files([str(path)]).documents] == [
        d.body["spec"] for d in plain.documents
    ]


def test_non_utf8_bytes(tmp_path):
    path = tmp_path / "bad.csv"
    data = csv_text(SEED_ROW).encode("utf-8").replace(b"liger,backward", b"lig\xffr,backward")
    path.write_bytes(data)
    with pytest.raises(InvalidInputError) as caught:
        convert_files([str(path)])
    offset = data.index(b"\xff")
    assert [str(p) for p in caught.value.problems] == [
        f"{path}, line 2: not UTF-8 text: byte 0xff at offset {offset}"
    ]


def test_unreadable_file(tmp_path):
    missing = str(tmp_path / "missing.csv")
    with pytest.raises(InvalidInputError) as caught:
        convert_files([missing])
    assert [str(p) for p in caught.value.problems] == [f"{missing}: cannot read file: No such file or directory"]


def test_identical_rows_become_one_run(tmp_path):
    result = convert_text(csv_text(SEED_ROW, MEMORY_ROW, SEED_ROW), "t.csv")
    assert len(runs_of(result)) == 2
    assert result.rows_read == 3
    assert result.skipped == [SkippedRow("t.csv", 4, "duplicate of line 2")]
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(csv_text(SEED_ROW), encoding="utf-8")
    second.write_text(csv_text(SEED_ROW), encoding="utf-8")
    across = convert_files([str(first), str(second)])
    assert len(runs_of(across)) == 1
    assert across.skipped == [SkippedRow(str(second), 2, f"duplicate of {first} line 2")]


def test_different_rows_under_one_external_id_are_an_error():
    assert problems_of(csv_text(SEED_ROW, row(y_value_50="0.5"))) == [
        "t.csv, line 3: externalId llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/"
        "hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15 was already read from line 2 "
        "with different values (y_value_50)"
    ]


def test_every_bad_row_is_reported_and_nothing_is_returned():
    text = csv_text(SEED_ROW, row(y_value_50="abc"), "oops", row(extra_benchmark_config_str="{", y_value_20="x"))
    assert problems_of(text) == [
        "t.csv, line 3: y_value_50: 'abc' is not a number",
        "t.csv, line 4: expected 15 fields, found 1",
        "t.csv, line 5: y_value_20: 'x' is not a number",
        "t.csv, line 5: extra_benchmark_config_str: not valid JSON: Expecting property name enclosed "
        "in double quotes: line 1 column 2 (char 1)",
    ]


def test_malformed_quoting():
    assert problems_of(csv_text(SEED_ROW, 'a,"b"c' + ",x" * 13)) == [
        "t.csv, line 3: malformed CSV record: ',' expected after '\"'"
    ]


# --- speed -----------------------------------------------------------------------------

def test_converting_the_three_files_is_fast():
    best = min(_timed(lambda: convert_files(ALL_FILES)) for _ in range(3))
    print(f"convert_files on 3 files: {best * 1000:.0f} ms")
    assert best < 1.0


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# --- spec shapes, as the CRDs define them ----------------------------------------------

_SPEC_SHAPES = {
    "BenchmarkRun": {
        "status": None, "observedAt": None, "timing": {"latencyNs": None, "primaryStatistic": None},
        "memory": {"peakAllocatedBytes": None, "primaryStatistic": None}, "measurements": None,
        "failure": {"reason": None, "message": None}, "sourceNative": None, "protocolDigest": None,
        "workloadDigest": None, "environmentDigest": None, "implementationDigest": None,
    },
    "BenchmarkProtocol": {
        "harness": {"name": None, "repository": None, "version": None, "script": None},
        "measurement": {"metric": None, "timer": None, "primaryStatistic": None, "quantiles": None,
                        "warmupIterations": None, "repetitions": None, "method": None},
        "comparability": {"family": None, "notes": None},
    },
    "ExecutionEnvironment": {
        "hardware": {"vendor": None, "product": None, "formFactor": None, "architecture": None,
                     "count": None, "memoryBytes": None},
        "software": None,
    },
    "Workload": {"operation": None, "family": None, "parameters": None, "dtype": None, "key": None},
    "Implementation": {"library": None, "operation": None, "backend": None, "variant": None,
                       "repository": None, "version": None, "entryPoint": None},
}


def _check_spec(kind: str, spec: dict) -> None:
    _check_shape(_SPEC_SHAPES[kind], spec, kind)
    if kind == "BenchmarkRun":
        assert spec["status"] in {"passed", "failed", "error", "skipped"}
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$", spec["observedAt"])
        for key in ("protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest"):
            assert DIGEST.match(spec[key])
        for m in spec["measurements"]:
            assert set(m) == {"metric", "statistic", "unit", "value"} and m["unit"] in {"ns", "bytes"}
            assert m["value"] is None or isinstance(m["value"], int)
        native = spec["sourceNative"]
        assert {"source", "benchmark", "externalId", "metrics"} <= set(native)
        assert all(v is None or isinstance(v, float) for v in native["metrics"].values())
    elif kind == "Workload":
        assert all(type(v) in (int, float, str, bool) for v in spec["parameters"].values())
    elif kind == "ExecutionEnvironment":
        assert all(isinstance(v, str) for v in spec["software"].values())


def _check_shape(shape: dict, value: dict, where: str) -> None:
    assert set(value) <= set(shape), f"{where}: unknown fields {set(value) - set(shape)}"
    for key, inner in shape.items():
        if inner is not None and key in value:
            _check_shape(inner, value[key], f"{where}.{key}")

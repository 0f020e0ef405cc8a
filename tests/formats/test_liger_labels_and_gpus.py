"""Liger runs: the labels people select by (metadata, so digests stay), and GPU names that
differ only in case or punctuation, which must give the same store however the files are
grouped into imports."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest
from conftest import SEED_ENVIRONMENT_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.formats.liger import convert_text
from kidx.identity import digest_of

HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,"
    "x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,"
    "liger_version"
)
SEED_ROW = (
    'llama4_rope,liger,backward,speed,ms,T,sequence length,16384,0.4175359904766083,'
    '0.41705599427223206,0.4181375920772552,"{""dtype"": ""torch.bfloat16"", ""hidden_size"": '
    '8192, ""num_q_heads"": 32, ""num_kv_heads"": 8}",NVIDIA H100 80GB HBM3,2025-08-07 21:42:15,0.6.1'
)
COLUMNS = HEADER.split(",")


def row(**changes: str) -> str:
    fields = next(csv.reader([SEED_ROW]))
    for column, value in changes.items():
        fields[COLUMNS.index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(fields)
    return out.getvalue()


def csv_text(*rows: str) -> str:
    return "\r\n".join([HEADER, *rows]) + "\r\n"


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str) -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


# --- labels ------------------------------------------------------------------------------

def test_every_run_is_labelled_with_what_people_select_by():
    text = csv_text(
        SEED_ROW,
        row(kernel_provider="huggingface", kernel_operation_mode="full", metric_name="memory", metric_unit="MB",
            y_value_50="37.25", y_value_20="37.25", y_value_80="37.25", gpu_name="NVIDIA A100-SXM4-80GB"),
        row(kernel_operation_mode="", gpu_name="NVIDIA A100 SXM4 80GB", timestamp="2025-08-07 21:42:16"),
    )
    runs = [d.body for d in convert_text(text, "t.csv").documents if d.body["kind"] == "BenchmarkRun"]
    assert [r["metadata"]["labels"] for r in runs] == [
        {"liger_version": "0.6.1", "kernel": "llama4_rope", "operation": "backward", "provider": "liger",
         "metric": "speed", "gpu": "nvidia-h100-80gb-hbm3"},
        {"liger_version": "0.6.1", "kernel": "llama4_rope", "operation": "full", "provider": "huggingface",
         "metric": "memory", "gpu": "nvidia-a100-sxm4-80gb"},
        # an empty mode is "unspecified"; any spelling of a known GPU gets its one slug
        {"liger_version": "0.6.1", "kernel": "llama4_rope", "operation": "unspecified", "provider": "liger",
         "metric": "speed", "gpu": "nvidia-a100-sxm4-80gb"},
    ]


def test_a_value_that_is_no_valid_label_is_left_out_of_the_labels_only():
    text = csv_text(row(kernel_provider="liger (fused)"))
    [run] = [d.body for d in convert_text(text, "t.csv").documents if d.body["kind"] == "BenchmarkRun"]
    assert "provider" not in run["metadata"]["labels"]
    assert run["spec"]["sourceNative"]["externalId"].split("/")[2] == "liger (fused)"


def test_labels_are_metadata_so_the_seed_digest_stays(seed_bundle):
    [run] = [d.body for d in convert_text(csv_text(SEED_ROW), "t.csv").documents if d.body["kind"] == "BenchmarkRun"]
    seed = copy.deepcopy(seed_bundle["run"])
    assert digest_of(seed) == SEED_RUN_DIGEST
    seed["metadata"]["labels"] = run["metadata"]["labels"]
    assert digest_of(seed) == SEED_RUN_DIGEST
    unlabelled = copy.deepcopy(run)
    del unlabelled["metadata"]["labels"]
    assert digest_of(unlabelled) == digest_of(run)


def test_selecting_by_the_new_labels(kidx, write):
    path = write(csv_text(SEED_ROW, row(kernel_provider="huggingface")), "data.csv")
    assert kidx("import", "liger", path)[0] == 0
    code, out, err = kidx("get", "runs", "-l", "provider=huggingface,metric=speed,gpu=nvidia-h100-80gb-hbm3",
                          "-o", "jsonpath={.items[*].metadata.labels.provider}")
    assert (code, out, err) == (0, "huggingface", "")


def test_import_over_the_applied_seed_updates_its_metadata(kidx, write, seed_bundle, tmp_path):
    """The seed keeps its published labels (liger_version only). Importing its CSV row over
    it stores the importer's run under the seed's name: a new revision (configured), since
    the import adds labels and source annotations and pins its own workload and
    implementation digests (the seed's were never published)."""
    bundle = tmp_path / "seed.json"
    bundle.write_text(json.dumps(seed_bundle))
    assert kidx("apply", "-f", str(bundle))[0] == 0
    code, out, err = kidx("import", "liger", write(csv_text(SEED_ROW), "seed.csv"))
    assert code == 0
    assert f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} configured\n" in out
    assert "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 unchanged\n" in out
    labels = json.loads(kidx("get", "run", SEED_RUN_NAME, "-o", "jsonpath={.metadata.labels}").out)
    assert labels["liger_version"] == "0.6.1" and labels["gpu"] == "nvidia-h100-80gb-hbm3"
    assert kidx("get", "run", SEED_RUN_NAME, "-o", "jsonpath={.spec.environmentDigest}").out == SEED_ENVIRONMENT_DIGEST


# --- GPU names that differ only in case or punctuation ----------------------------------

A100_DASHES = csv_text(row(gpu_name="NVIDIA A100-SXM4-80GB", timestamp="2025-01-01 00:00:01"))
A100_SPACES = csv_text(row(gpu_name="NVIDIA A100 SXM4 80GB", timestamp="2025-01-01 00:00:02"))
A100_LOWER = csv_text(row(gpu_name="nvidia a100-sxm4-80gb", timestamp="2025-01-01 00:00:03"))


def _state(kidx, store) -> dict:
    """Environments and runs by name: digest, and for runs the environment they refer to."""
    state = {}
    for kind in ("environments", "runs"):
        listing = json.loads(kidx("get", kind, "-o", "json", store_path=store).out)["items"]
        for item in listing:
            state[(kind, item["metadata"]["name"])] = (
                item["metadata"]["digest"], item["spec"].get("environmentDigest"), item["metadata"].get("generation"))
    return state


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 0, 2)])
def test_spellings_of_one_gpu_give_one_environment_however_grouped(kidx, write, tmp_path, order):
    files = [write(text, f"{i}.csv") for i, text in enumerate((A100_DASHES, A100_SPACES, A100_LOWER))]
    together = tmp_path / "together"
    assert kidx("import", "liger", *files, store_path=together)[0] == 0
    one_by_one = tmp_path / "one-by-one"
    for index in order:
        code, out, err = kidx("import", "liger", files[index], store_path=one_by_one)
        assert code == 0, err
        assert "ExecutionEnvironment 1 created" in err or "ExecutionEnvironment 1 unchanged" in err
        assert "configured" not in err
    assert _state(kidx, together) == _state(kidx, one_by_one)
    envs = json.loads(kidx("get", "environments", "-o", "json", store_path=one_by_one).out)["items"]
    assert [e["metadata"]["name"] for e in envs] == ["liger-bench-nvidia-a100-sxm4-80gb"]
    assert envs[0]["spec"]["hardware"]["architecture"] == "sm_80"
    assert envs[0]["metadata"]["generation"] == 1
    digest = envs[0]["metadata"]["digest"]
    runs = json.loads(kidx("get", "runs", "-o", "json", store_path=one_by_one).out)["items"]
    assert len(runs) == 3 and {r["spec"]["environmentDigest"] for r in runs} == {digest}


def test_spellings_of_an_unknown_gpu_keep_their_own_environments_however_grouped(kidx, write, tmp_path):
    texts = (csv_text(row(gpu_name="Acme Tensor-X1", timestamp="2025-01-01 00:00:01")),
             csv_text(row(gpu_name="ACME tensor x1", timestamp="2025-01-01 00:00:02")))
    files = [write(text, f"{i}.csv") for i, text in enumerate(texts)]
    assert kidx("import", "liger", *files, store_path=tmp_path / "together")[0] == 0
    for path in files:
        assert kidx("import", "liger", path, store_path=tmp_path / "apart")[0] == 0
    for path in reversed(files):
        assert kidx("import", "liger", path, store_path=tmp_path / "reversed")[0] == 0
    together = _state(kidx, tmp_path / "together")
    assert together == _state(kidx, tmp_path / "apart") == _state(kidx, tmp_path / "reversed")
    environments = {name: value for (kind, name), value in together.items() if kind == "environments"}
    assert len(environments) == 2
    assert all(name.startswith("liger-bench-acme-tensor-x1-") for name in environments)
    # every run refers to a stored environment, none was reconfigured
    env_digests = {digest for digest, _, _ in environments.values()}
    assert all(ref in env_digests for (kind, _), (_, ref, _) in together.items() if kind == "runs")
    assert all(generation == 1 for _, _, generation in together.values())

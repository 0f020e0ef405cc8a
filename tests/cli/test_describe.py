"""kidx describe end to end: kubectl's layout plus References and Referenced By."""

from __future__ import annotations

import json

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_PROTOCOL_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.identity import digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

API = "kernelindex.dev/v1alpha1"
CREATED = "2025-08-08T00:00:00Z"
PROTOCOL_NAME = "liger-bench-do-bench-backward"

SEED_RUN_DESCRIPTION = f"""\
Name:         {SEED_RUN_NAME}
Labels:       liger_version=0.6.1
Annotations:  <none>
Title:        Llama 4 rotary position embedding · liger · backward
Digest:       {SEED_RUN_DIGEST}
Created:      {CREATED}
Generation:   1
API Version:  kernelindex.dev/v1alpha1
Kind:         BenchmarkRun
Spec:
  Environment Digest:     sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393
  Implementation Digest:  sha256:7b16e7caa07229eb63274c52969e9742bd849258f08f13b57ebaa55928740b6d
  Measurements:
    Metric:         latency
    Statistic:      p20
    Unit:           ns
    Value:          417056
    Metric:         latency
    Statistic:      p80
    Unit:           ns
    Value:          418138
  Observed At:      2025-08-07T21:42:15.000Z
  Protocol Digest:  sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8
  Source Native:
    Benchmark:    llama4_rope/backward
    External ID:  llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15
    Metrics:
      ms_20:  0.41705599427223206
      ms_50:  0.4175359904766083
      ms_80:  0.4181375920772552
    Source:   liger-kernel-bench
  Status:     passed
  Timing:
    Latency Ns:
      Median:           417536
    Primary Statistic:  median
  Workload Digest:      sha256:acfd1d7e6ca5aee0df8b2dfece34e3144b249d3671745b21c015a45f41816344
References:
  Protocol Digest:        BenchmarkProtocol liger-bench-do-bench-backward (Liger benchmark harness · backward pass)  sha256:080e6e66e4ec
  Workload Digest:        Workload <not in store>  sha256:acfd1d7e6ca5
  Environment Digest:     ExecutionEnvironment liger-bench-nvidia-h100-80gb-hbm3 (Liger benchmark host · H100 80GB HBM3)  sha256:2750ae381d6d
  Implementation Digest:  Implementation <not in store>  sha256:7b16e7caa072
Referenced By:            <none>
"""

SEED_PROTOCOL_DESCRIPTION = f"""\
Name:         {PROTOCOL_NAME}
Labels:       <none>
Annotations:  <none>
Title:        Liger benchmark harness · backward pass
Digest:       {SEED_PROTOCOL_DIGEST}
Created:      {CREATED}
Generation:   1
API Version:  kernelindex.dev/v1alpha1
Kind:         BenchmarkProtocol
Spec:
  Comparability:
    Family:  liger_kernel_bench
    Notes:   Timed: the backward pass of the module output given a random upstream gradient, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each run's labels. Comparable only within one kernel, workload, timed pass, and GPU.
  Harness:
    Name:        Liger-Kernel benchmark scripts
    Repository:  https://github.com/linkedin/Liger-Kernel
  Measurement:
    Primary Statistic:  median
    Timer:              cuda_events
Referenced By:
  BenchmarkRun:  1  {SEED_RUN_NAME}
"""
TYPES = ("the resource types are benchmarkprotocols, benchmarkruns, executionenvironments, implementations and "
         "workloads ('kidx api-resources' lists their short names)\n")


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    import kidx.operations.maintain.apply
    import kidx.store.store

    monkeypatch.setattr(kidx.store.store, "utc_now", lambda: CREATED)
    monkeypatch.setattr(kidx.operations.maintain.apply, "utc_now", lambda: CREATED)


def workload(name, operation, labels=None, title=None, annotations=None):
    metadata = {"name": name}
    if title:
        metadata["title"] = title
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata, "spec": {"operation": operation}}


def workload_description(name, operation, labels=None, title="<none>"):
    manifest = workload(name, operation, labels)
    label_lines = [f"{k}={labels[k]}" for k in sorted(labels or {})] or ["<none>"]
    labels_text = "Labels:       " + "\n              ".join(label_lines)
    return (
        f"Name:         {name}\n{labels_text}\nAnnotations:  <none>\nTitle:        {title}\n"
        f"Digest:       {digest_of(manifest)}\nCreated:      {CREATED}\nGeneration:   1\n"
        f"API Version:  kernelindex.dev/v1alpha1\nKind:         Workload\n"
        f"Spec:\n  Operation:    {operation}\nReferenced By:  <none>\n"
    )


WORKLOADS = [
    workload("wl-a", "rope", {"app": "web", "tier": "fe"}),
    workload("wl-b", "swiglu", {"app": "api"}),
    workload("other", "geglu", {"app": "web"}),
]
WL_A = workload_description("wl-a", "rope", {"app": "web", "tier": "fe"})
WL_B = workload_description("wl-b", "swiglu", {"app": "api"})
OTHER = workload_description("other", "geglu", {"app": "web"})


@pytest.fixture
def seeded(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE))[0] == 0
    return kidx


@pytest.fixture
def populated(kidx):
    assert kidx("apply", "-f", "-", stdin="".join(json.dumps(w) for w in WORKLOADS))[0] == 0
    return kidx


# ---------------------------------------------------------------- layout


def test_describe_seed_run(seeded):
    assert seeded("describe", "run", SEED_RUN_NAME) == (0, SEED_RUN_DESCRIPTION, "")


def test_describe_seed_protocol_lists_the_run_that_refers_to_it(seeded):
    assert seeded("describe", "bp", PROTOCOL_NAME) == (0, SEED_PROTOCOL_DESCRIPTION, "")
    assert seeded("describe", f"benchmarkprotocol/{PROTOCOL_NAME}") == (0, SEED_PROTOCOL_DESCRIPTION, "")


def test_describe_environment_with_empty_map(seeded):
    code, out, err = seeded("describe", "env", "liger-bench-nvidia-h100-80gb-hbm3")
    assert (code, err) == (0, "")
    assert out.endswith(
        "Spec:\n"
        "  Hardware:\n"
        "    Architecture:  sm_90\n"
        "    Form Factor:   80GB HBM3\n"
        "    Product:       NVIDIA H100\n"
        "    Vendor:        nvidia\n"
        "  Software:        <none>\n"
        "Referenced By:\n"
        f"  BenchmarkRun:  1  {SEED_RUN_NAME}\n"
    )


def test_describe_labels_annotations_and_title(kidx):
    manifest = workload(
        "w", "rope", labels={"b": "2", "a": "1"}, title="A title · ü",
        annotations={"note": "hello", "example.com/src": "x.csv"},
    )
    kidx("apply", "-f", "-", stdin=json.dumps(manifest))
    assert kidx("describe", "wl", "w") == (
        0,
        "Name:         w\n"
        "Labels:       a=1\n"
        "              b=2\n"
        "Annotations:  example.com/src: x.csv\n"
        "              note: hello\n"
        "Title:        A title · ü\n"
        f"Digest:       {digest_of(manifest)}\n"
        f"Created:      {CREATED}\n"
        "Generation:   1\n"
        "API Version:  kernelindex.dev/v1alpha1\n"
        "Kind:         Workload\n"
        "Spec:\n"
        "  Operation:    rope\n"
        "Referenced By:  <none>\n",
        "",
    )


def test_describe_shows_generation_after_a_change(kidx):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("w", "rope")))
    kidx("apply", "-f", "-", stdin=json.dumps(workload("w", "rope", labels={"x": "y"})))
    code, out, _ = kidx("describe", "wl", "w")
    assert code == 0
    assert "\nGeneration:   2\n" in out
    assert "\nLabels:       x=y\n" in out


def test_references_resolved_to_names_and_titles(kidx):
    target = workload("wl-x", "rope", title="Rope workload")
    protocol = {
        "apiVersion": API, "kind": "BenchmarkProtocol", "metadata": {"name": "p1"},
        "spec": {"harness": {"name": "h"}, "measurement": {"timer": "cuda_events"}},
    }
    run = {
        "apiVersion": API, "kind": "BenchmarkRun", "metadata": {"name": "r1"},
        "spec": {"status": "passed", "workloadRef": {"name": "wl-x"}, "protocolRef": {"name": "p1"}},
    }
    assert kidx("apply", "-f", "-", stdin=json.dumps(target) + json.dumps(protocol) + json.dumps(run))[0] == 0
    code, out, _ = kidx("describe", "run", "r1")
    assert code == 0
    assert out.endswith(
        "References:\n"
        f"  Protocol Digest:  BenchmarkProtocol p1  {digest_of(protocol)[:19]}\n"
        f"  Workload Digest:  Workload wl-x (Rope workload)  {digest_of(target)[:19]}\n"
        "Referenced By:      <none>\n"
    )
    code, out, _ = kidx("describe", "wl", "wl-x")
    assert out.endswith("Referenced By:\n  BenchmarkRun:  1  r1\n")


def test_referenced_by_counts_and_shortens(kidx):
    protocol = {
        "apiVersion": API, "kind": "BenchmarkProtocol", "metadata": {"name": "p1"},
        "spec": {"harness": {"name": "h"}, "measurement": {"timer": "cuda_events"}},
    }
    runs = [
        {"apiVersion": API, "kind": "BenchmarkRun", "metadata": {"name": f"r{i}"},
         "spec": {"status": "passed", "protocolRef": {"name": "p1"}, "observedAt": f"2025-08-0{i}T00:00:00Z"}}
        for i in (4, 2, 1, 3)
    ]
    assert kidx("apply", "-f", "-", stdin="".join(json.dumps(m) for m in [protocol, *runs]))[0] == 0
    code, out, _ = kidx("describe", "bp", "p1")
    assert code == 0
    assert out.endswith("Referenced By:\n  BenchmarkRun:  4  r1, r2, r3, … (1 more)\n")


def test_deleted_referrer_is_no_longer_listed(seeded):
    assert seeded("delete", "run", SEED_RUN_NAME)[0] == 0
    code, out, _ = seeded("describe", "bp", PROTOCOL_NAME)
    assert code == 0
    assert out.endswith("  Timer:              cuda_events\nReferenced By:          <none>\n")


# ---------------------------------------------------------------- selection


def test_describe_a_whole_type_separates_with_two_blank_lines(populated):
    assert populated("describe", "wl") == (0, OTHER + "\n\n" + WL_A + "\n\n" + WL_B, "")


def test_describe_several_names(populated):
    assert populated("describe", "wl", "wl-b", "wl-a") == (0, WL_B + "\n\n" + WL_A, "")
    assert populated("describe", "wl/wl-b", "workload/other") == (0, WL_B + "\n\n" + OTHER, "")


def test_describe_with_selector(populated):
    assert populated("describe", "wl", "-l", "app=web") == (0, OTHER + "\n\n" + WL_A, "")
    assert populated("describe", "wl", "-l", "app notin (web)") == (0, WL_B, "")
    assert populated("describe", "wl", "-l", "app=none") == (0, "", "No resources found\n")


def test_describe_invalid_selector(populated):
    assert populated("describe", "wl", "-l", "app=web x") == (
        1, "", "error: the provided selector \"app=web x\" is not valid: found 'x', expected: ',' or 'end of string'\n",
    )


def test_describe_name_prefix_matches_with_one_blank_line(populated):
    assert populated("describe", "wl", "wl-") == (0, WL_A + "\n" + WL_B, "")
    assert populated("describe", "wl", "oth") == (0, OTHER, "")


def test_describe_seed_run_by_name_prefix(seeded):
    assert seeded("describe", "runs", "liger-llama4") == (0, SEED_RUN_DESCRIPTION, "")


def test_prefix_matching_only_for_type_and_one_name(populated):
    # TYPE/NAME form: no prefix matching
    assert populated("describe", "wl/wl-") == (
        1, "", 'Error (NotFound): workloads.kernelindex.dev "wl-" not found\n',
    )
    # several names: a miss stays a NotFound
    assert populated("describe", "wl", "wl-", "nope") == (
        1, "",
        'Error (NotFound): workloads.kernelindex.dev "wl-" not found\n'
        'Error (NotFound): workloads.kernelindex.dev "nope" not found\n',
    )


def test_describe_by_digest_prefix(seeded):
    assert seeded("describe", "bp", SEED_PROTOCOL_DIGEST[7:19]) == (0, SEED_PROTOCOL_DESCRIPTION, "")
    assert seeded("describe", "bp", SEED_PROTOCOL_DIGEST) == (0, SEED_PROTOCOL_DESCRIPTION, "")


def test_describe_not_found(populated):
    assert populated("describe", "wl", "nope") == (
        1, "", 'Error (NotFound): workloads.kernelindex.dev "nope" not found\n',
    )


def test_describe_not_found_with_others_still_described(populated):
    assert populated("describe", "wl", "wl-a", "nope") == (
        1, WL_A, 'Error (NotFound): workloads.kernelindex.dev "nope" not found\n',
    )


def test_describe_empty_type(populated):
    assert populated("describe", "impl") == (0, "", "No resources found\n")


def test_describe_unknown_type(populated):
    assert populated("describe", "foos", "x") == (1, "", 'error: kidx doesn\'t have a resource type "foos"\n' + TYPES)


def test_describe_missing_store_creates_nothing(kidx, store):
    missing = (f"error: no store at {store} (--store): nothing has been written there (check the path, or write to "
               "it first, e.g. kidx apply -f)\n")
    assert kidx("describe", "runs") == (1, "", missing)
    assert kidx("describe", "run", "x") == (1, "", missing)
    assert not store.exists()


# --- speed of light ------------------------------------------------------------------------

H200_DATA = REPO / "tests" / "data" / "h200"
H200_FORWARD = "liger-llama4-rope-forward-liger-nvidia-h200-hidden8192-kv-heads8-q-heads32-seq16384-bf16-f7c12242c8"


def _section(text: str) -> list[str]:
    lines = text.splitlines()
    if "Speed of Light:" not in lines:
        return []
    start = lines.index("Speed of Light:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    return lines[start:end]


def test_a_timed_run_shows_its_speed_of_light_and_others_do_not(kidx):
    imported = kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"), "--environment",
                    str(H200_DATA / "environment.yaml"))
    assert imported.code == 0, imported.err
    described = kidx("describe", "run", H200_FORWARD)
    assert described.code == 0, described.err
    assert _section(described.out) == [
        "Speed of Light:",
        "  Cost:         687,865,856 B (formula liger_kernel_bench/llama4_rope/forward)",
        "  Bandwidth:    1.861TB/s (38.8% of the published peak)",
        "  SOL:          38.8% of the published peak of the H200 SXM 141GB",
    ]
    lines = described.out.splitlines()
    assert lines.index("Speed of Light:") == lines.index("References:") + 5  # after the four references
    # a memory run has no latency, and a workload or environment is not described so
    for other in ("liger-llama4-rope-full-memory", "workload", "environment"):
        if other.startswith("liger"):
            names = kidx("get", "runs", "-o", "name").out.split()
            other = next(name for name in names if other in name)
        assert _section(kidx("describe", other).out) == [], other


def test_the_measured_peak_of_the_environment_is_shown_beside_the_published_one(kidx):
    assert kidx("import", "liger", str(H200_DATA / "all_benchmark_data.csv"), "--environment",
                str(H200_DATA / "environment.yaml")).code == 0
    environment = json.loads(kidx("get", "environments", "-o", "json").out)["items"][0]
    environment["metadata"]["annotations"] = {
        **environment["metadata"].get("annotations", {}),
        "kernelindex.dev/measured-memory-bandwidth": "4000000000000",
        "kernelindex.dev/measured-peaks-at": "2026-12-01T00:00:00Z",
    }
    for key in ("digest", "creationTimestamp", "generation"):
        environment["metadata"].pop(key)
    assert kidx("apply", "-f", "-", stdin=json.dumps(environment)).code == 0
    assert _section(kidx("describe", "run", H200_FORWARD).out)[2:] == [
        "  Bandwidth:     1.861TB/s (38.8% of the published peak, 46.5% of the measured peak)",
        "  SOL:           38.8% of the published peak of the H200 SXM 141GB",
        "  SOL Measured:  46.5% of the peak measured on the environment",
    ]

"""Custom columns, csv columns and --sort-by that reach into referenced objects:
``workload.spec.parameters.seq``, ``implementation.spec.library``, ``environment.…``."""

from __future__ import annotations

from liger_stores import head_store  # noqa: F401  (session fixture)

SELECT = ("--references", "environment/liger-bench-nvidia-h100-80gb-hbm3",
          "--field-selector", "spec.sourceNative.benchmark=llama4_rope/backward")


def test_csv_of_a_latency_curve(kidx, head_store):
    code, out, err = kidx(
        "get", "runs", *SELECT, "--references", "implementation/liger-llama4-rope-transformers-eager",
        "-o", "csv=SEQ:workload.spec.parameters.seq,HIDDEN:workload.spec.parameters.hidden,"
              "LIBRARY:implementation.spec.library,MEDIAN_NS:.spec.timing.latencyNs.median,"
              "P20_NS:.spec.measurements[?(@.statistic==\"p20\")].value",
        "--sort-by", "workload.spec.parameters.hidden,workload.spec.parameters.seq,metadata.name",
        store_path=head_store,
    )
    assert (code, err) == (0, "")
    assert out == (
        "SEQ,HIDDEN,LIBRARY,MEDIAN_NS,P20_NS\n"
        "2048,512,transformers,137600,135744\n"
        "2048,2048,transformers,136000,134496\n"
        "1024,8192,transformers,118912,117696\n"
        "2048,8192,transformers,210112,209280\n"  # the same shape in the T-sweep and the H-sweep
        "2048,8192,transformers,210112,209248\n"
        "4096,8192,transformers,397408,396320\n"
        "8192,8192,transformers,754016,752896\n"
        "16384,8192,transformers,1482272,1481056\n"
    )


def test_custom_columns_and_descending_sort_through_references(kidx, head_store):
    code, out, _ = kidx(
        "get", "runs", *SELECT, "--sort-by=-workload.spec.parameters.seq,implementation.metadata.name", "--limit", "2",
        "-o", "custom-columns=SEQ:workload.spec.parameters.seq,GPU:environment.spec.hardware.product,"
              "PROTOCOL:protocol.metadata.name,IMPL:implementation.metadata.name",
        store_path=head_store,
    )
    assert code == 0
    assert out == (
        "SEQ     GPU           PROTOCOL                        IMPL\n"
        "16384   NVIDIA H100   liger-bench-do-bench-backward   liger-llama4-rope-liger-triton\n"
        "16384   NVIDIA H100   liger-bench-do-bench-backward   liger-llama4-rope-transformers-eager\n"
    )


def test_yaml_after_sorting_by_a_reference_shows_the_run_as_stored(kidx, head_store):
    code, out, _ = kidx("get", "runs", *SELECT, "--sort-by", "workload.spec.parameters.seq", "--limit", "1",
                        "-o", "yaml", store_path=head_store)
    assert code == 0
    assert "\n  workload:" not in out and "\n  implementation:" not in out
    assert "workloadDigest: sha256:" in out


def test_a_reference_path_no_run_has_is_reported(kidx, head_store):
    code, _, err = kidx("get", "runs", *SELECT, "--sort-by", "workload.spec.parameters.nope", store_path=head_store)
    assert code == 1 and "workload.spec.parameters.nope" in err

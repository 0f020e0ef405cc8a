"""Custom columns, csv columns and --sort-by that reach into referenced objects:
``workload.spec.parameters.seq``, ``implementation.spec.library``, ``environment.…``."""

from __future__ import annotations

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


def test_field_selector_through_references(kidx, head_store):
    code, out, err = kidx("get", "runs", "--field-selector",
                          "workload.spec.parameters.seq=16384,implementation.spec.library=transformers,"
                          "environment.metadata.name=liger-bench-nvidia-h100-80gb-hbm3", "-o", "name",
                          store_path=head_store)
    assert (code, err) == (0, "")
    assert out == (
        "benchmarkrun.kernelindex.dev/liger-llama4-rope-backward-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads-7a1c5fe285\n"
        "benchmarkrun.kernelindex.dev/liger-llama4-rope-forward-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads3-38c88cb623\n"
        "benchmarkrun.kernelindex.dev/liger-llama4-rope-full-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-s-2567260ec5\n"
        "benchmarkrun.kernelindex.dev/liger-llama4-rope-full-memory-huggingface-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-he-e3dc0d28bd\n"
    )


def test_field_selector_through_references_with_not_equal_and_names(kidx, head_store):
    seed = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"
    # a named run is checked against the selector too (it is not narrowed by the store)
    code, out, _ = kidx("get", "run", seed, "--field-selector", "workload.spec.parameters.seq!=16384", "-o", "name",
                        store_path=head_store)
    assert (code, out) == (0, "")
    code, out, _ = kidx("get", "run", seed, "--field-selector", "protocol.metadata.name=liger-bench-do-bench-backward",
                        "-o", "name", store_path=head_store)
    assert out == f"benchmarkrun.kernelindex.dev/{seed}\n"


def test_yaml_after_selecting_through_references_shows_the_run_as_stored(kidx, head_store):
    code, out, _ = kidx("get", "runs", "--field-selector", "workload.spec.parameters.seq=16384,"
                        "implementation.spec.library=transformers,protocol.metadata.name=liger-bench-do-bench-backward,"
                        "environment.metadata.name=liger-bench-nvidia-h100-80gb-hbm3", "-o", "json", store_path=head_store)
    assert code == 0
    import json

    [run] = json.loads(out)["items"]
    assert sorted(run) == ["apiVersion", "kind", "metadata", "spec"]


def test_references_a_kind_does_not_have_are_refused(kidx, head_store):
    for args, message in (
        (["runs,envs", "--field-selector", "workload.spec.parameters.seq=16384"],
         "workload.spec.parameters.seq (executionenvironments have no such field)"),
        (["runs", "--field-selector", "nope.spec.x=1"], "nope.spec.x"),
        (["runs", "--field-selector", "workload.foo=1"], "workload.foo"),
        (["runs", "--field-selector", "Workload.spec.parameters.seq=1"],
         "Workload.spec.parameters.seq (did you mean workload.spec.parameters.seq?)"),
    ):
        code, out, err = kidx("get", *args, store_path=head_store)
        assert (code, out, err) == (1, "", f"error: field label not supported: {message}\n")


def test_which_paths_read_the_runs_own_spec():
    from kidx.jsonpath import JSONPathTemplate
    from kidx.operations.select.get import LoadMode, LoadPlan
    from kidx.output.formats import parse_output_format
    from kidx.query.reference_paths import path_reads
    from kidx.query.sorting import parse_sort_keys

    def plan(output, sort_by=""):
        return parse_output_format(output).load_plan(parse_sort_keys(sort_by))

    def reads(template):
        return path_reads(JSONPathTemplate.parse(template).steps())

    assert plan("custom-columns=NAME:.metadata.name,SEQ:workload.spec.parameters.seq",
                "implementation.metadata.name") == LoadPlan(LoadMode.COLUMNS, frozenset({"workload", "implementation"}))
    assert plan("custom-columns=X:{.workload.spec.a}") == LoadPlan(LoadMode.COLUMNS, frozenset({"workload"}))
    assert plan("custom-columns=SEQ:workload.spec.parameters.seq,M:.spec.timing.latencyNs.median").mode is LoadMode.MANIFESTS
    assert plan(None, "-.spec.timing.latencyNs.median") == LoadPlan(LoadMode.MANIFESTS, frozenset())
    assert plan(None, "metadata.name") == LoadPlan(LoadMode.COLUMNS, frozenset())
    assert plan("name") == LoadPlan(LoadMode.NAMES, frozenset())
    assert plan("name", "metadata.name").mode is LoadMode.MANIFESTS
    assert plan("yaml", "workload.spec.parameters.seq") == LoadPlan(LoadMode.MANIFESTS, frozenset({"workload"}))
    assert plan("csv=N:.metadata.name").mode is LoadMode.COLUMNS
    # the CRD's own columns (a table, or its raw form) need no annotations
    assert plan("csv").mode is plan(None).mode is plan("wide").mode is LoadMode.TABLE
    # and each reads what it prints: the default table not every column, labels only when shown
    assert plan(None) == LoadPlan(LoadMode.TABLE, frozenset(), labels=True, every_column=False)
    assert parse_output_format(None).load_plan((), labels=False).labels is False
    assert plan("wide").every_column and plan("csv").every_column
    assert plan("custom-columns=X:{..median}").mode is LoadMode.MANIFESTS
    assert reads("{..median}").own_spec and reads("{.items[*].metadata.name}").own_spec
    assert reads("{.items[*].spec.x}") == (frozenset(), True)
    # the parse tree, not the text: literals read nothing, quoted keys and filters count
    assert reads('{"workload.spec "}{.metadata.name}') == (frozenset(), False)
    assert reads("{['workload']['spec']['x']}") == (frozenset({"workload"}), False)
    assert reads('{range .items[?(@.workload.spec.x==1)]}{.implementation.metadata.name}{end}') == (
        frozenset({"workload", "implementation"}), False)
    assert reads("{.}").own_spec and not reads("{.metadata}").own_spec
    # a template that does not parse is reported when printed; until then everything is read
    assert plan("jsonpath={.a[}", "workload.spec.x") == LoadPlan(LoadMode.MANIFESTS, frozenset({"workload"}))


def test_columns_of_metadata_and_references_match_a_full_read(kidx, head_store):
    columns = "custom-columns=NAME:.metadata.name,LIB:implementation.spec.library,SEQ:workload.spec.parameters.seq"
    fast = kidx("get", "runs", *SELECT, "--sort-by", "workload.spec.parameters.seq,metadata.name", "-o", columns,
                store_path=head_store)
    # a column of the run's own spec makes kidx read each run in full
    full = kidx("get", "runs", *SELECT, "--sort-by", "workload.spec.parameters.seq,metadata.name", "-o",
                columns + ",S:.spec.status", store_path=head_store)
    assert fast.code == full.code == 0
    assert [line.rsplit(None, 1)[0] for line in full.out.splitlines()] == [line.rstrip() for line in fast.out.splitlines()]
    assert len(fast.out.splitlines()) == 17

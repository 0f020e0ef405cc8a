"""kidx get end to end: type spellings, names and digests, selectors, output shapes, errors."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import (
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

from kidx.identity import digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

API = "kernelindex.dev/v1alpha1"
CREATED = "2025-08-08T00:00:00Z"
NOW = "2025-08-08T00:05:00Z"  # every AGE reads 5m
PROTOCOL_NAME = "liger-bench-do-bench-backward"
ENVIRONMENT_NAME = "liger-bench-nvidia-h100-80gb-hbm3"
RUN_Q = f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}"
PROTOCOL_Q = f"benchmarkprotocol.kernelindex.dev/{PROTOCOL_NAME}"
ENVIRONMENT_Q = f"executionenvironment.kernelindex.dev/{ENVIRONMENT_NAME}"
NO_RESOURCES = "No resources found\n"
EMPTY_LIST_YAML = "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ''\n"
EMPTY_LIST_JSON = (
    '{\n    "apiVersion": "v1",\n    "items": [],\n    "kind": "List",\n'
    '    "metadata": {\n        "resourceVersion": ""\n    }\n}\n'
)
TYPES = ("the resource types are benchmarkprotocols, benchmarkruns, executionenvironments, implementations and "
         "workloads ('kidx api-resources' lists their short names)\n")


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    """Objects are stored at CREATED and tables are printed at NOW."""
    from datetime import datetime

    import kidx.operations.maintain.apply
    import kidx.output.columns
    import kidx.store.store
    from kidx.output import units

    now = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    monkeypatch.setattr(kidx.store.store, "utc_now", lambda: CREATED)
    monkeypatch.setattr(kidx.operations.maintain.apply, "utc_now", lambda: CREATED)
    monkeypatch.setattr(kidx.output.columns, "age", lambda timestamp, now_=None: units.age(timestamp, now))


def workload(name, operation, labels=None, dtype=None, key=None):
    metadata = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    spec = {"operation": operation}
    if dtype:
        spec["dtype"] = dtype
    if key:
        spec["key"] = key
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata, "spec": spec}


WORKLOADS = [
    workload("wl-a", "rope", {"app": "web", "tier": "fe"}, "bf16", "h8192"),
    workload("wl-b", "swiglu", {"app": "api"}, "fp32"),
    workload("wl-c", "geglu"),
    workload("wl-d", "rms_norm", {"app": "web", "tier": "", "example.com/team": "kernels"}),
]


@pytest.fixture
def seeded(kidx):
    code, _, err = kidx("apply", "-f", str(SEED_BUNDLE))
    assert code == 0, err
    return kidx


@pytest.fixture
def populated(seeded):
    code, _, err = seeded("apply", "-f", "-", stdin="".join(json.dumps(w) for w in WORKLOADS))
    assert code == 0, err
    return seeded


def names(kidx, *args):
    code, out, err = kidx("get", *args, "-o", "name")
    assert (code, err) == (0, ""), err
    return out.splitlines()


# ---------------------------------------------------------------- type spellings


@pytest.mark.parametrize(
    "spelling",
    [
        "runs", "run", "br", "benchmarkrun", "benchmarkruns", "BenchmarkRun", "BENCHMARKRUNS", "Runs", "BR",
        "benchmarkruns.kernelindex.dev", "benchmarkrun.kernelindex.dev", "BenchmarkRun.kernelindex.dev",
        "benchmarkruns.v1alpha1.kernelindex.dev",
    ],
)
def test_every_spelling_of_a_type(seeded, spelling):
    assert seeded("get", spelling, "-o", "name") == (0, RUN_Q + "\n", "")


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("bp", PROTOCOL_Q), ("protocol", PROTOCOL_Q), ("benchmarkprotocols", PROTOCOL_Q),
        ("env", ENVIRONMENT_Q), ("ee", ENVIRONMENT_Q), ("environments", ENVIRONMENT_Q),
        ("ExecutionEnvironment", ENVIRONMENT_Q), ("envs", ENVIRONMENT_Q),
    ],
)
def test_spellings_of_other_kinds(seeded, spelling, expected):
    assert seeded("get", spelling, "-o", "name") == (0, expected + "\n", "")


@pytest.mark.parametrize("spelling", ["foos", "runs.example.com", "benchmarkruns.v2.kernelindex.dev"])
def test_unknown_type(seeded, spelling):
    assert seeded("get", spelling) == (1, "", f'error: kidx doesn\'t have a resource type "{spelling}"\n{TYPES}')


def test_unknown_type_names_the_nearest_and_every_type(seeded):
    assert seeded("get", "runz") == (1, "", 'error: kidx doesn\'t have a resource type "runz"\ndid you mean run? '
                                            + TYPES)
    assert seeded("get", "kernels")[2].endswith(f'"kernels"\n{TYPES}')


def test_no_type_is_a_usage_error(seeded):
    code, out, err = seeded("get")
    assert (code, out) == (1, "")
    assert err.startswith("error: You must specify the type of resource to get.")


# ---------------------------------------------------------------- argument shapes


def test_type_and_names(populated):
    assert names(populated, "wl", "wl-c", "wl-a") == [
        "workload.kernelindex.dev/wl-c", "workload.kernelindex.dev/wl-a",
    ]


def test_type_slash_name_of_several_kinds(populated):
    assert names(populated, "wl/wl-b", f"bp/{PROTOCOL_NAME}", "workload/wl-a") == [
        "workload.kernelindex.dev/wl-b", "workload.kernelindex.dev/wl-a", PROTOCOL_Q,
    ]


def test_two_types(populated):
    assert names(populated, "bp,env") == [PROTOCOL_Q, ENVIRONMENT_Q]
    assert names(populated, "env,bp,env") == [ENVIRONMENT_Q, PROTOCOL_Q]


def test_all_means_every_kind_in_the_store(populated):
    assert names(populated, "all") == [
        PROTOCOL_Q, RUN_Q, ENVIRONMENT_Q,
        "workload.kernelindex.dev/wl-a", "workload.kernelindex.dev/wl-b",
        "workload.kernelindex.dev/wl-c", "workload.kernelindex.dev/wl-d",
    ]


def test_mixing_type_and_type_slash_name_is_refused(populated):
    code, out, err = populated("get", "wl", "wl/wl-a")
    assert (code, out) == (1, "")
    assert err.startswith("error: there is no need to specify a resource type as a separate argument")


@pytest.mark.parametrize(
    "argument, message",
    [
        ("wl/a/b", "arguments in resource/name form may not have more than one slash"),
        ("/wl-a", "arguments in resource/name form must have a single resource and name"),
        ("wl/", "arguments in resource/name form must have a single resource and name"),
        ("wl,bp/wl-a", "arguments in resource/name form must have a single resource and name"),
    ],
)
def test_bad_resource_name_arguments(populated, argument, message):
    assert populated("get", argument) == (1, "", f"error: {message}\n")


# ---------------------------------------------------------------- digests


def test_get_by_full_digest(seeded):
    assert seeded("get", "bp", SEED_PROTOCOL_DIGEST, "-o", "name") == (0, PROTOCOL_Q + "\n", "")
    assert seeded("get", "run", SEED_RUN_DIGEST[len("sha256:"):], "-o", "name") == (0, RUN_Q + "\n", "")
    assert seeded("get", f"env/{SEED_ENVIRONMENT_DIGEST}", "-o", "name") == (0, ENVIRONMENT_Q + "\n", "")


@pytest.mark.parametrize("prefix", ["080e6e66", "sha256:080e6e66", "080e6e66e4ec75a1"])
def test_get_by_unique_digest_prefix(seeded, prefix):
    assert seeded("get", "bp", prefix, "-o", "name") == (0, PROTOCOL_Q + "\n", "")


def test_digest_prefix_shorter_than_8_is_not_a_digest(seeded):
    assert seeded("get", "bp", "080e6e6") == (
        1, "", 'Error (NotFound): benchmarkprotocols.kernelindex.dev "080e6e6" not found\n',
    )


def test_digest_prefix_of_another_kind_is_not_found(seeded):
    assert seeded("get", "run", "080e6e66") == (
        1, "", 'Error (NotFound): benchmarkruns.kernelindex.dev "080e6e66" not found\n',
    )


def test_digest_lookup_prints_the_bare_object(seeded):
    code, out, _ = seeded("get", "bp", "080e6e66", "-o", "json")
    assert code == 0
    assert json.loads(out)["metadata"]["name"] == PROTOCOL_NAME


# Two Workload specs whose digests share their first 8 hex digits (found by search):
#   op-66204  -> sha256:696e1bd10aebcffb…   op-144880 -> sha256:696e1bd145587c15…
TWINS = [workload("w66204", "op-66204"), workload("w144880", "op-144880")]


def test_twins_really_share_a_prefix():
    first, second = (digest_of(w) for w in TWINS)
    assert first[:15] == second[:15] == "sha256:696e1bd1"
    assert first[15] != second[15]


def test_ambiguous_digest_prefix_lists_the_candidates(kidx, store):
    assert kidx("apply", "-f", "-", stdin="".join(json.dumps(w) for w in TWINS))[0] == 0
    expected = (
        'error: digest prefix "696e1bd1" is ambiguous: it matches '
        "workload.kernelindex.dev/w144880 (sha256:696e1bd14558…), "
        "workload.kernelindex.dev/w66204 (sha256:696e1bd10aeb…)\n"
    )
    assert kidx("get", "wl", "696e1bd1") == (1, "", expected)
    assert kidx("get", "wl", "sha256:696e1bd1", "-o", "yaml") == (1, "", expected.replace('"696e1bd1"', '"sha256:696e1bd1"'))
    # one more digit decides
    assert kidx("get", "wl", "696e1bd14", "-o", "name") == (0, "workload.kernelindex.dev/w144880\n", "")
    assert kidx("get", "wl", "696e1bd10", "-o", "name") == (0, "workload.kernelindex.dev/w66204\n", "")
    # an exact name wins over a digest reading
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("696e1bd1", "named")))[0] == 0
    assert kidx("get", "wl", "696e1bd1", "-o", "name") == (0, "workload.kernelindex.dev/696e1bd1\n", "")


def test_catalog_digest_prefix_lookup(kidx, store):
    from kidx.kinds.registry import registry
    from kidx.query.selection import AmbiguousDigestError, find_entry
    from kidx.store.store import Store

    kidx("apply", "-f", "-", stdin="".join(json.dumps(w) for w in TWINS))
    catalog = Store(store).catalog()
    assert sorted(e.name for e in catalog.by_digest_prefix("696e1bd1")) == ["w144880", "w66204"]
    assert [e.name for e in catalog.by_digest_prefix("696e1bd1", "BenchmarkRun")] == []
    assert [e.name for e in catalog.by_digest_prefix("696e1bd14")] == ["w144880"]
    info = registry().by_kind("Workload")
    with pytest.raises(AmbiguousDigestError):
        find_entry(catalog, info, "696e1bd1")
    assert find_entry(catalog, info, "696e1bd10").name == "w66204"
    assert find_entry(catalog, info, "696e1bd") is None


# ---------------------------------------------------------------- label selectors


@pytest.mark.parametrize(
    "selector, expected",
    [
        ("app=web", ["wl-a", "wl-d"]),
        ("app==web", ["wl-a", "wl-d"]),
        ("app!=web", ["wl-b", "wl-c"]),
        ("app in (web,api)", ["wl-a", "wl-b", "wl-d"]),
        ("app in (api)", ["wl-b"]),
        ("app notin (web)", ["wl-b", "wl-c"]),
        ("app", ["wl-a", "wl-b", "wl-d"]),
        ("!app", ["wl-c"]),
        ("tier", ["wl-a", "wl-d"]),
        ("tier=", ["wl-d"]),
        ("tier in ()", ["wl-d"]),
        ("app=web,tier=fe", ["wl-a"]),
        ("app=web,!tier", []),
        ("app,!tier", ["wl-b"]),
        ("app=web,app=api", []),
        ("example.com/team=kernels", ["wl-d"]),
        (" app = web , tier ", ["wl-a", "wl-d"]),
        ("", ["wl-a", "wl-b", "wl-c", "wl-d"]),
    ],
)
def test_label_selectors(populated, selector, expected):
    assert names(populated, "wl", "-l", selector) == [f"workload.kernelindex.dev/{n}" for n in expected]


def test_selector_applies_to_each_type(populated):
    assert names(populated, "runs,wl", "--selector", "liger_version=0.6.1") == [RUN_Q]
    assert names(populated, "all", "-l", "app=api") == ["workload.kernelindex.dev/wl-b"]


@pytest.mark.parametrize(
    "selector, message",
    [
        (
            "app:web",
            "unable to parse requirement: <nil>: Invalid value: \"app:web\": name part must consist of alphanumeric "
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', "
            "or 'my.name', or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        ("app=web x", "found 'x', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        (",", "found ',', expected: !, identifier, or 'end of string'"),
        ("env in prod", "unable to parse requirement: found 'prod' expected: '('"),
        ("env in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
        ("env foo", "unable to parse requirement: found 'foo', expected: in, notin, =, ==, !=, gt, lt"),
        ("!app=x", "found '=', expected: ',' or 'end of string'"),
    ],
)
def test_invalid_selector(populated, selector, message):
    assert populated("get", "wl", "-l", selector) == (
        1, "", f'error: the provided selector "{selector}" is not valid: {message}\n',
    )


def test_selector_with_names_is_refused(populated):
    assert populated("get", "wl", "wl-a", "-l", "app") == (
        1, "", "error: name cannot be provided when a selector is specified\n",
    )
    assert populated("get", "wl/wl-a", "-l", "app") == (
        1, "", "error: selectors and the all flag cannot be used when passing resource/name arguments\n",
    )


def _traced_label_queries(kidx, store, monkeypatch, *args):
    """Run ``kidx get`` and return the SQL statements it sent that read labels."""
    import kidx.store.sqlite_catalog as catalog_module

    statements: list[str] = []
    original_init = catalog_module.SQLiteCatalog.__init__

    def traced_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.connection.set_trace_callback(statements.append)

    monkeypatch.setattr(catalog_module.SQLiteCatalog, "__init__", traced_init)
    code, out, err = kidx("get", *args)
    assert code == 0, err
    return out, [s for s in statements if "labels" in s and s.lstrip().upper().startswith("SELECT")]


@pytest.mark.parametrize(
    "selector",
    ["app=web", "app==web", "app in (web,api)", "app!=web", "app notin (web)", "app", "!app", "app=web,tier"],
)
@pytest.mark.sqlite_only  # SQLite's query plans
def test_label_queries_use_the_label_index(populated, store, monkeypatch, selector):
    out, queries = _traced_label_queries(populated, store, monkeypatch, "wl", "-l", selector, "-o", "name")
    assert queries, "the selector was not turned into SQL over the labels table"
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        for query in queries:
            plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + query)]
            label_steps = [step for step in plan if " labels" in step]
            assert label_steps, plan
            assert all("SCAN labels" not in step for step in plan), plan
            assert all(
                step.startswith("SEARCH labels USING PRIMARY KEY") or "USING INDEX" in step
                for step in label_steps
            ), plan
    finally:
        connection.close()


# ---------------------------------------------------------------- tables


SEED_RUN_TABLE = (
    f"{'NAME':<{len(SEED_RUN_NAME) + 3}}BENCHMARK              STATUS   MEDIAN    OBSERVED                   AGE\n"
    f"{SEED_RUN_NAME}   llama4_rope/backward   passed   417.5µs   2025-08-07T21:42:15.000Z   5m\n"
)
WORKLOAD_TABLE = (
    "NAME   OPERATION   DTYPE    KEY      AGE\n"
    "wl-a   rope        bf16     h8192    5m\n"
    "wl-b   swiglu      fp32     <none>   5m\n"
    "wl-c   geglu       <none>   <none>   5m\n"
    "wl-d   rms_norm    <none>   <none>   5m\n"
)


def test_table(populated):
    assert populated("get", "runs") == (0, SEED_RUN_TABLE, "")
    assert populated("get", "workloads") == (0, WORKLOAD_TABLE, "")


def test_table_of_named_objects_keeps_argument_order(populated):
    assert populated("get", "wl", "wl-b", "wl-a") == (
        0,
        "NAME   OPERATION   DTYPE   KEY      AGE\n"
        "wl-b   swiglu      fp32    <none>   5m\n"
        "wl-a   rope        bf16    h8192    5m\n",
        "",
    )


def test_wide_table_names_references_in_the_store(seeded):
    width = len(SEED_RUN_NAME) + 3
    assert seeded("get", "runs", "-o", "wide") == (
        0,
        f"{'NAME':<{width}}BENCHMARK              STATUS   MEDIAN    OBSERVED                   AGE   "
        "PEAK-MEMORY   PROTOCOL                        ENVIRONMENT                         IMPLEMENTATION        WORKLOAD\n"
        f"{SEED_RUN_NAME}   llama4_rope/backward   passed   417.5µs   2025-08-07T21:42:15.000Z   5m    "
        f"<none>        {PROTOCOL_NAME}   {ENVIRONMENT_NAME}   sha256:7b16e7caa072   sha256:acfd1d7e6ca5\n",
        "",
    )


def test_tables_of_several_kinds_are_prefixed_and_separated(populated):
    code, out, err = populated("get", "bp,wl", "-l", "!tier")
    assert (code, err) == (0, "")
    assert out == (
        "NAME                                                              HARNESS                          METRIC   TIMER         FAMILY               AGE\n"
        f"{PROTOCOL_Q}   Liger-Kernel benchmark scripts   <none>   cuda_events   liger_kernel_bench   5m\n"
        "\n"
        "NAME                            OPERATION   DTYPE    KEY      AGE\n"
        "workload.kernelindex.dev/wl-b   swiglu      fp32     <none>   5m\n"
        "workload.kernelindex.dev/wl-c   geglu       <none>   <none>   5m\n"
    )


def test_one_kind_with_results_is_not_prefixed(populated):
    assert populated("get", "runs,wl", "-l", "app=api") == (
        0, "NAME   OPERATION   DTYPE   KEY      AGE\nwl-b   swiglu      fp32    <none>   5m\n", "",
    )


def test_show_labels(populated):
    assert populated("get", "wl", "--show-labels") == (
        0,
        "NAME   OPERATION   DTYPE    KEY      AGE   LABELS\n"
        "wl-a   rope        bf16     h8192    5m    app=web,tier=fe\n"
        "wl-b   swiglu      fp32     <none>   5m    app=api\n"
        "wl-c   geglu       <none>   <none>   5m    <none>\n"
        "wl-d   rms_norm    <none>   <none>   5m    app=web,example.com/team=kernels,tier=\n",
        "",
    )


def test_label_columns(populated):
    expected = (
        0,
        "NAME   OPERATION   DTYPE    KEY      AGE   APP   TIER   TEAM\n"
        "wl-a   rope        bf16     h8192    5m    web   fe\n"
        "wl-b   swiglu      fp32     <none>   5m    api\n"
        "wl-c   geglu       <none>   <none>   5m\n"
        "wl-d   rms_norm    <none>   <none>   5m    web          kernels\n",
        "",
    )
    assert populated("get", "wl", "-L", "app,tier", "-L", "example.com/team") == expected
    assert populated("get", "wl", "--label-columns", "app", "-L", "tier,example.com/team") == expected


def test_label_columns_with_show_labels_and_no_headers(populated):
    assert populated("get", "wl", "wl-a", "wl-c", "-L", "app", "--show-labels", "--no-headers") == (
        0,
        "wl-a   rope    bf16     h8192    5m    web   app=web,tier=fe\n"
        "wl-c   geglu   <none>   <none>   5m          <none>\n",
        "",
    )


def test_no_headers(populated):
    assert populated("get", "runs", "--no-headers") == (
        0, f"{SEED_RUN_NAME}   llama4_rope/backward   passed   417.5µs   2025-08-07T21:42:15.000Z   5m\n", "",
    )


@pytest.mark.parametrize("fmt", ["yaml", "json", "name"])
def test_show_labels_only_with_tables(populated, fmt):
    assert populated("get", "wl", "--show-labels", "-o", fmt) == (
        1, "", f"error: --show-labels option cannot be used with {fmt} printer\n",
    )


def test_unknown_output_format(populated):
    code, out, err = populated("get", "wl", "-o", "xml")
    assert (code, out) == (1, "")
    assert err.startswith('error: unable to match a printer suitable for the output format "xml", allowed formats are: ')
    allowed = err.rstrip("\n").split("allowed formats are: ")[1].split(",")
    assert allowed == sorted(allowed)
    assert {"json", "name", "wide", "yaml"} <= set(allowed)


# ---------------------------------------------------------------- yaml, json, name

WL_A_YAML = (
    "apiVersion: kernelindex.dev/v1alpha1\n"
    "kind: Workload\n"
    "metadata:\n"
    f"  creationTimestamp: '{CREATED}'\n"
    f"  digest: {digest_of(WORKLOADS[0])}\n"
    "  generation: 1\n"
    "  labels:\n"
    "    app: web\n"
    "    tier: fe\n"
    "  name: wl-a\n"
    "spec:\n"
    "  dtype: bf16\n"
    "  key: h8192\n"
    "  operation: rope\n"
)


def _with_store_metadata(manifest):
    out = json.loads(json.dumps(manifest))
    out["metadata"].update({"creationTimestamp": CREATED, "digest": digest_of(manifest), "generation": 1})
    return out


def test_yaml_of_one_named_object_is_bare(populated):
    assert populated("get", "wl", "wl-a", "-o", "yaml") == (0, WL_A_YAML, "")
    assert populated("get", "wl/wl-a", "-o", "yaml") == (0, WL_A_YAML, "")


def test_json_of_one_named_object_is_bare(populated):
    code, out, err = populated("get", "workload/wl-a", "-o", "json")
    assert (code, err) == (0, "")
    assert out == json.dumps(_with_store_metadata(WORKLOADS[0]), indent=4, sort_keys=True, ensure_ascii=False) + "\n"
    assert out.startswith('{\n    "apiVersion": "kernelindex.dev/v1alpha1",\n    "kind": "Workload",\n    "metadata": {\n')


def test_yaml_of_a_type_is_a_list_even_with_one_item(populated):
    indented = "".join(("- " if i == 0 else "  ") + line + "\n" for i, line in enumerate(WL_A_YAML.splitlines()))
    expected = "apiVersion: v1\nitems:\n" + indented + "kind: List\nmetadata:\n  resourceVersion: ''\n"
    assert populated("get", "wl", "-l", "tier=fe", "-o", "yaml") == (0, expected, "")


def test_json_list_of_several(populated):
    code, out, err = populated("get", "wl", "wl-a", "wl-b", "-o", "json")
    assert (code, err) == (0, "")
    assert out == json.dumps(
        {"apiVersion": "v1", "items": [_with_store_metadata(WORKLOADS[0]), _with_store_metadata(WORKLOADS[1])],
         "kind": "List", "metadata": {"resourceVersion": ""}},
        indent=4, sort_keys=True, ensure_ascii=False,
    ) + "\n"


def test_several_resource_slash_names_give_a_list(populated):
    code, out, _ = populated("get", "wl/wl-a", "wl/wl-b", "-o", "json")
    assert code == 0
    assert [item["metadata"]["name"] for item in json.loads(out)["items"]] == ["wl-a", "wl-b"]


def test_output_objects_carry_store_set_metadata(seeded):
    code, out, _ = seeded("get", "all", "-o", "json")
    assert code == 0
    metadata = {item["metadata"]["name"]: item["metadata"] for item in json.loads(out)["items"]}
    assert {name: (m["digest"], m["creationTimestamp"], m["generation"]) for name, m in metadata.items()} == {
        SEED_RUN_NAME: (SEED_RUN_DIGEST, CREATED, 1),
        PROTOCOL_NAME: (SEED_PROTOCOL_DIGEST, CREATED, 1),
        ENVIRONMENT_NAME: (SEED_ENVIRONMENT_DIGEST, CREATED, 1),
    }
    assert metadata[SEED_RUN_NAME]["title"] == "Llama 4 rotary position embedding · liger · backward"
    assert metadata[SEED_RUN_NAME]["labels"] == {"liger_version": "0.6.1"}


def test_seed_run_yaml_keeps_strings_strings(seeded):
    code, out, _ = seeded("get", "run", SEED_RUN_NAME, "-o", "yaml")
    assert code == 0
    assert "  observedAt: '2025-08-07T21:42:15.000Z'\n" in out
    assert "    liger_version: 0.6.1\n" in out
    assert "  title: Llama 4 rotary position embedding · liger · backward\n" in out


def test_name_output(populated):
    assert populated("get", "wl", "-l", "app=web", "-o", "name") == (
        0, "workload.kernelindex.dev/wl-a\nworkload.kernelindex.dev/wl-d\n", "",
    )


# ---------------------------------------------------------------- nothing found, not found


@pytest.mark.parametrize("args", [("runs",), ("all",), ("runs,wl",), ("wl", "-o", "wide"), ("wl", "--show-labels")])
def test_a_named_store_that_does_not_exist_is_an_error(kidx, store, args):
    # --store (or KIDX_STORE) names a store nothing was written to: a typo, not an empty store
    assert kidx("get", *args) == (1, "", f"error: {missing_store_message(store)}\n")
    assert not store.exists()


def missing_store_message(store, source="--store") -> str:
    return (f"no store at {store} ({source}): nothing has been written there (check the path, or write to it first, "
            "e.g. kidx apply -f)")


def test_the_default_store_reads_as_empty_before_its_first_write(tmp_path):
    import subprocess
    import sys

    home = tmp_path / "home"
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "NO_COLOR": "1"}
    completed = subprocess.run([sys.executable, "-m", "kidx", "get", "runs"], capture_output=True, env=environment,
                               cwd=tmp_path)
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, b"", NO_RESOURCES.encode())
    assert not (home / "data" / "kidx").exists()
    environment["KIDX_STORE"] = str(tmp_path / "typo")
    completed = subprocess.run([sys.executable, "-m", "kidx", "get", "runs"], capture_output=True, env=environment,
                               cwd=tmp_path)
    assert (completed.returncode, completed.stderr.decode()) == (
        1, f"error: {missing_store_message(tmp_path / 'typo', '$KIDX_STORE')}\n")


def test_nothing_selected_says_no_resources_found(populated):
    assert populated("get", "wl", "-l", "app=nope") == (0, "", NO_RESOURCES)
    assert populated("get", "impl") == (0, "", NO_RESOURCES)


def test_empty_yaml_and_json_print_an_empty_list(populated):
    assert populated("get", "impl", "-o", "yaml") == (0, EMPTY_LIST_YAML, "")
    assert populated("get", "wl", "-l", "app=nope", "-o", "json") == (0, EMPTY_LIST_JSON, "")


def test_empty_name_output_prints_nothing(populated):
    assert populated("get", "impl", "-o", "name") == (0, "", "")


def test_named_object_not_found(populated):
    expected_err = 'Error (NotFound): benchmarkruns.kernelindex.dev "nope" not found\n'
    assert populated("get", "run", "nope") == (1, "", expected_err)
    assert populated("get", "run/nope") == (1, "", expected_err)
    assert populated("get", "run", "nope", "-o", "yaml") == (1, "", expected_err)
    assert populated("get", "run", "nope", "-o", "json") == (1, "", expected_err)
    assert populated("get", "run", "nope", "-o", "name") == (1, "", expected_err)


def test_not_found_with_others_still_printed(populated):
    err = (
        'Error (NotFound): workloads.kernelindex.dev "nope" not found\n'
        'Error (NotFound): workloads.kernelindex.dev "gone" not found\n'
    )
    assert populated("get", "wl", "wl-a", "nope", "wl-c", "gone") == (
        1,
        "NAME   OPERATION   DTYPE    KEY      AGE\n"
        "wl-a   rope        bf16     h8192    5m\n"
        "wl-c   geglu       <none>   <none>   5m\n",
        err,
    )
    assert populated("get", "wl", "wl-a", "nope", "wl-c", "gone", "-o", "name") == (
        1, "workload.kernelindex.dev/wl-a\nworkload.kernelindex.dev/wl-c\n", err,
    )
    code, out, err_yaml = populated("get", "wl", "nope", "wl-a", "-o", "yaml")
    assert (code, err_yaml) == (1, 'Error (NotFound): workloads.kernelindex.dev "nope" not found\n')
    assert out.startswith("apiVersion: v1\nitems:\n- apiVersion: kernelindex.dev/v1alpha1\n")
    assert out.endswith("kind: List\nmetadata:\n  resourceVersion: ''\n")


def test_not_found_across_kinds(populated):
    assert populated("get", "wl/wl-b", "bp/nope", "-o", "name") == (
        1, "workload.kernelindex.dev/wl-b\n",
        'Error (NotFound): benchmarkprotocols.kernelindex.dev "nope" not found\n',
    )


def test_ignore_not_found(populated):
    assert populated("get", "wl", "wl-b", "nope", "-o", "name", "--ignore-not-found") == (
        0, "workload.kernelindex.dev/wl-b\n", "",
    )
    assert populated("get", "wl", "nope", "--ignore-not-found") == (0, "", "")


def test_reading_a_missing_store_creates_nothing(kidx, store):
    assert kidx("get", "run", "nope") == (1, "", f"error: {missing_store_message(store)}\n")
    assert kidx("get", "all", "-o", "yaml") == (1, "", f"error: {missing_store_message(store)}\n")
    assert not store.exists()


def test_short_names_with_version_and_group(kidx, seed_bundle):
    import json as _json

    assert kidx("apply", "-f", "-", stdin=_json.dumps(seed_bundle)).code == 0
    for spelling in ("br.v1alpha1.kernelindex.dev", "br.kernelindex.dev", "runs.v1alpha1.kernelindex.dev"):
        result = kidx("get", spelling, "-o", "name")
        assert result.code == 0 and result.out.startswith("benchmarkrun.kernelindex.dev/liger-llama4-rope"), spelling


def test_a_table_reads_only_what_it_prints(kidx, monkeypatch):
    """The default table of runs shows neither labels nor a reference column, so its
    selection reads neither (kidx.store.catalog.CatalogQuery.read_labels, column_references);
    --show-labels and -L read the labels, -o wide and csv every column, a document all."""
    from kidx.store.store import Store

    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    asked = []
    select = Store.select
    monkeypatch.setattr(Store, "select", lambda self, query, catalog=None: asked.append(query) or select(
        self, query, catalog))
    for options, read in (((), (False, False)), (("--show-labels",), (True, False)), (("-L", "team"), (True, False)),
                          (("-o", "wide"), (False, True)), (("-o", "csv", "-L", "team"), (True, True)),
                          (("-o", "yaml"), (True, True)), (("--sort-by", ".spec.status"), (True, True))):
        asked.clear()
        assert kidx("get", "runs", *options).code == 0, options
        assert [(query.read_labels, query.column_references) for query in asked] == [read], options
    asked.clear()  # a kind whose default table shows no reference column either
    assert kidx("get", "workloads").code == 0
    assert [(query.read_labels, query.column_references) for query in asked] == [(False, False)]

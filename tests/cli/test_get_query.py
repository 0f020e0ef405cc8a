"""kidx get as a query tool: field selectors, --references, --sort-by, --limit, and the
jsonpath / custom-columns printers, on a small store whose contents the tests choose."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest
from conftest import (
    REPO,
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_NAME,
)

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

SMALL = """\
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkProtocol
metadata:
  name: proto-a
  labels: {team: alpha}
spec:
  harness: {name: Harness A}
  measurement: {timer: cuda_events, primaryStatistic: median}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkProtocol
metadata:
  name: proto-b
spec:
  harness: {name: Harness B}
  measurement: {timer: wall_clock, primaryStatistic: mean}
---
apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata:
  name: env-h100
  labels: {vendor: nvidia, gpu: h100}
spec:
  hardware: {vendor: nvidia, product: NVIDIA H100}
---
apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata:
  name: env-mi300
  labels: {vendor: amd, gpu: mi300}
spec:
  hardware: {vendor: amd, product: AMD MI300X}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-2
  labels: {app: web, tier: fe}
spec:
  status: passed
  timing: {latencyNs: {median: 200}, primaryStatistic: median}
  sourceNative: {source: test, benchmark: llama4_rope/backward}
  protocolRef: {name: proto-a}
  environmentRef: {name: env-h100}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-10
  labels: {app: web, tier: be}
spec:
  status: failed
  timing: {latencyNs: {median: 1000}, primaryStatistic: median}
  sourceNative: {source: test, benchmark: llama4_rope/forward}
  protocolRef: {name: proto-a}
  environmentRef: {name: env-mi300}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: web-1
spec:
  status: passed
  timing: {latencyNs: {median: 50.5}, primaryStatistic: median}
  sourceNative: {source: test, benchmark: 'a,b=c\\d'}
  protocolRef: {name: proto-b}
  environmentRef: {name: env-h100}
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: api-9
  labels: {app: api}
spec:
  status: skipped
  protocolRef: {name: proto-b}
"""
SEED = SEED_RUN_NAME
R = "benchmarkrun.kernelindex.dev/"
# catalog order (by name, byte-wise)
ALL_RUNS = ["api-9", SEED, "web-1", "web-10", "web-2"]
TYPES = ("the resource types are benchmarkprotocols, benchmarkruns, executionenvironments, implementations and "
         "workloads ('kidx api-resources' lists their short names)\n")


def _run_cli(args: list[str], tmp_path_factory) -> tuple[int, str, str]:
    """In process, for module fixtures: the same isolation as conftest gives each test."""
    from kidx.cli.app import run

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
        monkeypatch.setenv("NO_COLOR", "1")
        monkeypatch.delenv("KIDX_STORE", raising=False)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(args)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """Built once: the tests of this module only read it."""
    folder = tmp_path_factory.mktemp("query")
    path = folder / "store"
    manifests = folder / "small.yaml"
    manifests.write_text(SMALL, encoding="utf-8")
    for source in (SEED_BUNDLE, manifests):
        code, _, err = _run_cli(["apply", "-f", str(source), "--store", str(path)], tmp_path_factory)
        assert code == 0, err
    return path


@pytest.fixture
def q(kidx, small_store):
    """kidx against the shared small store."""

    def invoke(*args: str, stdin: str = ""):
        return kidx(*args, stdin=stdin, store_path=small_store)

    return invoke


def names(out: str) -> list[str]:
    return [line.removeprefix(R) for line in out.splitlines()]


def digest_of_object(q, type_name: str, name: str) -> str:
    code, out, err = q("get", type_name, name, "-o", "jsonpath={.metadata.digest}")
    assert (code, err) == (0, ""), err
    return out


# ------------------------------------------------------------------ --field-selector


@pytest.mark.parametrize(
    "selector, expected",
    [
        ("metadata.name=web-2", ["web-2"]),
        ("metadata.name==web-2", ["web-2"]),
        ("metadata.name!=web-2", ["api-9", SEED, "web-1", "web-10"]),
        ("spec.status=passed", [SEED, "web-1", "web-2"]),
        ("spec.status!=passed", ["api-9", "web-10"]),
        ("spec.status=passed,metadata.name!=web-1", [SEED, "web-2"]),
        ("spec.sourceNative.benchmark=llama4_rope/backward", [SEED, "web-2"]),
        ("spec.sourceNative.benchmark!=llama4_rope/backward", ["api-9", "web-1", "web-10"]),
        # an absent field reads as "": api-9 has no sourceNative
        ("spec.sourceNative.benchmark=", ["api-9"]),
        # numbers compare as their JSON text
        ("spec.timing.latencyNs.median=200", ["web-2"]),
        ("spec.timing.latencyNs.median=50.5", ["web-1"]),
        # escapes: the value is  a,b=c\d
        ("spec.sourceNative.benchmark=a\\,b\\=c\\\\d", ["web-1"]),
        ("metadata.name=nope", []),
        ("", ALL_RUNS),
    ],
)
def test_field_selector_selects(q, selector, expected):
    code, out, err = q("get", "runs", "-o", "name", "--field-selector", selector)
    assert (code, err) == (0, "")
    assert names(out) == expected


def test_field_selector_with_label_selector_is_an_and(q):
    code, out, err = q("get", "runs", "-o", "name", "-l", "app=web", "--field-selector", "spec.status=passed")
    assert (code, out, err) == (0, R + "web-2\n", "")


def test_field_selector_on_another_kind(q):
    code, out, err = q("get", "environments", "-o", "name", "--field-selector", "spec.hardware.vendor=amd")
    assert (code, out, err) == (0, "executionenvironment.kernelindex.dev/env-mi300\n", "")


def test_field_selector_matching_nothing_in_a_table_says_so(q):
    assert q("get", "runs", "--field-selector", "metadata.name=nope") == (0, "", "No resources found\n")


@pytest.mark.parametrize(
    "selector, message",
    [
        ("foo", "error: invalid selector: 'foo'; can't understand 'foo'\n"),
        ("spec.status=passed,bar", "error: invalid selector: 'spec.status=passed,bar'; can't understand 'bar'\n"),
        ("spec.status=a\\x", "error: invalid field selector: invalid escape sequence: \\x\n"),
        ("spec.status=a=b", "error: invalid field selector: unescaped character in value: 61\n"),
        ("status.phase=Running", "error: field label not supported: status.phase\n"),
        ("metadata.labels=x", "error: field label not supported: metadata.labels\n"),
        ("spec.Un-schedulable=true", "error: field label not supported: spec.Un-schedulable\n"),
    ],
)
def test_field_selector_errors(q, selector, message):
    assert q("get", "runs", "--field-selector", selector) == (1, "", message)


# ------------------------------------------------------------------ --references


def test_references_type_slash_name(q):
    code, out, err = q("get", "runs", "-o", "name", "--references", "protocol/proto-a")
    assert (code, err) == (0, "")
    assert names(out) == ["web-10", "web-2"]
    code, out, err = q("get", "runs", "-o", "name", "--references", "executionenvironment/env-h100")
    assert names(out) == ["web-1", "web-2"]


def test_references_full_digest_and_prefix(q):
    digest = digest_of_object(q, "protocol", "proto-b")
    assert digest.startswith("sha256:") and len(digest) == 71
    for value in (digest, digest[len("sha256:"):], digest[:15], digest[7:15], digest[7:30]):
        code, out, err = q("get", "runs", "-o", "name", "--references", value)
        assert (code, err) == (0, ""), value
        assert names(out) == ["api-9", "web-1"], value


def test_references_a_digest_that_is_not_in_the_store(q):
    # the seed's workload is not stored, but the seed run refers to it
    code, out, err = q("get", "runs", "-o", "name", "--references",
                       "sha256:acfd1d7e6ca5aee0df8b2dfece34e3144b249d3671745b21c015a45f41816344")
    assert (code, out, err) == (0, R + SEED + "\n", "")
    code, out, err = q("get", "runs", "-o", "name", "--references", "acfd1d7e")
    assert (code, out, err) == (0, R + SEED + "\n", "")


def test_references_seed_protocol_and_environment_digests(q):
    for digest in (SEED_PROTOCOL_DIGEST, SEED_ENVIRONMENT_DIGEST):
        assert q("get", "runs", "-o", "name", "--references", digest) == (0, R + SEED + "\n", "")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("environment:vendor=nvidia", ["web-1", "web-2"]),
        ("env:gpu in (h100,mi300)", ["web-1", "web-10", "web-2"]),
        ("env:vendor=intel", []),
        ("protocol:team=alpha", ["web-10", "web-2"]),
        ("protocol:!team", ["api-9", SEED, "web-1"]),
    ],
)
def test_references_type_colon_selector(q, value, expected):
    code, out, err = q("get", "runs", "-o", "name", "--references", value)
    assert (code, err) == (0, "")
    assert names(out) == expected


def test_repeated_references_must_all_hold(q):
    code, out, err = q("get", "runs", "-o", "name", "--references", "protocol/proto-a",
                       "--references", "env/env-h100")
    assert (code, out, err) == (0, R + "web-2\n", "")
    code, out, err = q("get", "runs", "-o", "name", "--references", "protocol/proto-b",
                       "--references", "env:vendor=amd")
    assert (code, out, err) == (0, "", "")


def test_references_combines_with_selectors(q):
    code, out, err = q("get", "runs", "-o", "name", "--references", "env:vendor", "-l", "tier=fe")
    assert (code, out, err) == (0, R + "web-2\n", "")
    code, out, err = q("get", "runs", "-o", "name", "--references", "env:vendor",
                       "--field-selector", "spec.status=failed")
    assert (code, out, err) == (0, R + "web-10\n", "")


def test_references_unknown_name_is_not_found(q):
    assert q("get", "runs", "--references", "protocol/nope") == (
        1, "", 'Error (NotFound): benchmarkprotocols.kernelindex.dev "nope" not found\n')


@pytest.mark.parametrize(
    "value, message",
    [
        ("nonsense", 'error: --references "nonsense": expected TYPE/NAME, a digest (sha256:… or 8+ hex digits) or TYPE:SELECTOR\n'),
        ("abcdef1", 'error: --references "abcdef1": expected TYPE/NAME, a digest (sha256:… or 8+ hex digits) or TYPE:SELECTOR\n'),
        ("env:a b", "error: the provided selector \"a b\" is not valid: unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt\n"),
        ("foos/x", 'error: kidx doesn\'t have a resource type "foos"\n' + TYPES),
    ],
)
def test_references_bad_values(q, value, message):
    assert q("get", "runs", "--references", value) == (1, "", message)


def test_references_are_answered_from_the_refs_primary_key(small_store):
    """The SQL the SQLite catalog compiles for --references searches refs by its keys: refs
    is a view of ref_targets (each (field, target) once, keyed by target) and ref_links
    (keyed by target id)."""
    from kidx.kinds.registry import registry
    from kidx.query.references import reference_condition
    from kidx.store.catalog import CatalogQuery
    from kidx.store.store import Store

    catalog = Store(small_store).catalog()
    digest = catalog.get("BenchmarkProtocol", "proto-a").digest
    for value in ("protocol/proto-a", "env:vendor=nvidia", digest[7:17], digest):
        query = CatalogQuery(kind="BenchmarkRun", references=(reference_condition(value, registry(), catalog),))
        assert catalog.list(query), value
        sql, parameters, _ = catalog.compile(query)
        plan = [row[-1] for row in catalog.connection.execute("EXPLAIN QUERY PLAN " + sql, parameters)]
        links = [step for step in plan if " ref_links " in f" {step} "]
        targets = [step for step in plan if " ref_targets " in f" {step} "]
        assert links and targets, plan
        assert all(step.startswith("SEARCH ref_links USING PRIMARY KEY (target_id=?)") for step in links), plan
        assert all(step.startswith("SEARCH ref_targets USING COVERING INDEX sqlite_autoindex_ref_targets_1 (target")
                   for step in targets), plan
    catalog.close()


# ------------------------------------------------------------------ --sort-by


def sorted_names(q, *args):
    code, out, err = q("get", "runs", "-o", "name", *args)
    assert (code, err) == (0, ""), err
    return names(out)


def test_sort_by_number_is_numeric_and_missing_values_come_first(q):
    # 50.5 < 200 < 1000 < 417536 (byte-wise text order would put 1000 before 200)
    assert sorted_names(q, "--sort-by", ".spec.timing.latencyNs.median") == [
        "api-9", "web-1", "web-2", "web-10", SEED]


def test_sort_by_descending(q):
    assert sorted_names(q, "--sort-by", "-.spec.timing.latencyNs.median") == [
        SEED, "web-10", "web-2", "web-1", "api-9"]


def test_sort_by_names_in_natural_order(q):
    assert sorted_names(q, "--sort-by", ".metadata.name") == ["api-9", SEED, "web-1", "web-2", "web-10"]
    assert sorted_names(q, "--sort-by", "{.metadata.name}") == ["api-9", SEED, "web-1", "web-2", "web-10"]
    assert sorted_names(q, "--sort-by", "-metadata.name") == ["web-10", "web-2", "web-1", SEED, "api-9"]


def test_sort_by_several_keys(q):
    assert sorted_names(q, "--sort-by", ".spec.status,-.metadata.name") == [
        "web-10", "web-2", "web-1", SEED, "api-9"]
    assert sorted_names(q, "--sort-by", ".metadata.labels.app,.spec.timing.latencyNs.median") == [
        "web-1", SEED, "api-9", "web-2", "web-10"]


def test_sort_by_reorders_list_items_and_tables(q):
    code, out, err = q("get", "runs", "-o", "json", "--sort-by", "-.spec.timing.latencyNs.median")
    assert (code, err) == (0, "")
    assert [item["metadata"]["name"] for item in json.loads(out)["items"]] == [
        SEED, "web-10", "web-2", "web-1", "api-9"]
    code, out, err = q("get", "runs", "--no-headers", "--sort-by", ".spec.timing.latencyNs.median")
    assert [line.split()[0] for line in out.splitlines()] == ["api-9", "web-1", "web-2", "web-10", SEED]


def test_sort_by_a_field_no_object_has(q):
    assert q("get", "runs", "--sort-by", ".spec.nope") == (
        1, "", 'error: couldn\'t find any field with path "{.spec.nope}" in the list of objects\n')


def test_sort_by_with_several_kinds_sorts_each_and_needs_the_field_somewhere(q):
    """Each kind is sorted on its own; a kind lacking the field is not an error when another has it."""
    code, out, err = q("get", "runs,protocols", "-o", "name", "--sort-by", "-.spec.status")
    assert (code, err) == (0, "")
    assert out.splitlines() == [R + name for name in ("api-9", SEED, "web-1", "web-2", "web-10")] + [
        "benchmarkprotocol.kernelindex.dev/" + name for name in ("liger-bench-do-bench-backward", "proto-a", "proto-b")]
    code, out, err = q("get", "protocols,envs", "--sort-by", "-.spec.hardware.vendor",
                       "-o", "custom-columns=N:.metadata.name,V:.spec.hardware.vendor", "--no-headers")
    assert (code, err) == (0, "")
    assert [line.split() for line in out.splitlines()][-3:] == [
        ["env-h100", "nvidia"], ["liger-bench-nvidia-h100-80gb-hbm3", "nvidia"], ["env-mi300", "amd"]]
    assert q("get", "runs,protocols", "--sort-by", ".spec.nope") == (
        1, "", 'error: couldn\'t find any field with path "{.spec.nope}" in the list of objects\n')


def test_sort_by_a_bad_path(q):
    code, out, err = q("get", "runs", "--sort-by", "{.a")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


# ------------------------------------------------------------------ --limit


def test_limit(q):
    assert sorted_names(q, "--limit", "2") == ["api-9", SEED]
    assert sorted_names(q, "--limit", "2", "--sort-by", "-.metadata.name") == ["web-10", "web-2"]
    assert sorted_names(q, "--limit", "99") == ALL_RUNS
    assert q("get", "runs", "-o", "name", "--limit", "0") == (0, "", "")


def test_limit_counts_across_kinds(q):
    code, out, err = q("get", "protocols,envs", "-o", "name", "--limit", "4")
    assert (code, err) == (0, "")
    assert out == (
        "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward\n"
        "benchmarkprotocol.kernelindex.dev/proto-a\n"
        "benchmarkprotocol.kernelindex.dev/proto-b\n"
        "executionenvironment.kernelindex.dev/env-h100\n"
    )


def test_negative_limit_is_a_usage_error(q):
    code, out, err = q("get", "runs", "--limit", "-1")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


# ------------------------------------------------------------------ -o jsonpath


def test_jsonpath_items_names_without_trailing_newline(q):
    assert q("get", "runs", "-o", "jsonpath={.items[*].metadata.name}") == (
        0, " ".join(ALL_RUNS), "")


def test_jsonpath_range(q):
    template = '{range .items[*]}{.metadata.name}{"\\t"}{.spec.status}{"\\n"}{end}'
    assert q("get", "runs", "-o", f"jsonpath={template}") == (
        0,
        f"api-9\tskipped\n{SEED}\tpassed\nweb-1\tpassed\nweb-10\tfailed\nweb-2\tpassed\n",
        "",
    )


def test_jsonpath_on_a_single_object_and_maps_as_json(q):
    assert q("get", "run", "web-2", "-o", "jsonpath={.metadata.labels}") == (0, '{"app":"web","tier":"fe"}', "")
    assert q("get", "run", "web-2", "-o", "jsonpath={.metadata.name} {.spec.timing.latencyNs.median}") == (
        0, "web-2 200", "")


@pytest.mark.parametrize(
    "template, expected",
    [
        ("{.items[?(@.spec.timing.latencyNs.median>150)].metadata.name}", f"{SEED} web-10 web-2"),
        ('{.items[?(@.spec.status=="failed")].metadata.name}', "web-10"),
        ("{.items[?(@.metadata.labels.tier)].metadata.name}", "web-10 web-2"),
        ("{.items[0].metadata.name}", "api-9"),
        ("{.items[-1].metadata.name}", "web-2"),
        ("{.items[1:3].metadata.name}", f"{SEED} web-1"),
        # extensions beyond kubectl (conventions §11.1)
        ('{.items[?(@.spec.status=="passed" && @.spec.timing.latencyNs.median<1000)].metadata.name}', "web-1 web-2"),
        ('{.items[?(@.spec.status=="skipped" || @.spec.status=="failed")].metadata.name}', "api-9 web-10"),
        ("{.items[?(!@.metadata.labels)].metadata.name}", "web-1"),
        ('{.items[?(@.metadata.name=~"^web-[0-9]$")].metadata.name}', "web-1 web-2"),
        ('{.items[?(!(@.spec.status=="passed"))].metadata.name}', "api-9 web-10"),
        ("{.items[*].nope}", ""),
    ],
)
def test_jsonpath_filters(q, template, expected):
    assert q("get", "runs", "-o", f"jsonpath={template}") == (0, expected, "")


def test_jsonpath_file(q, tmp_path):
    template = tmp_path / "names.jsonpath"
    template.write_text('{range .items[*]}{.metadata.name}{"\\n"}{end}', encoding="utf-8")
    assert q("get", "runs", "-o", f"jsonpath-file={template}") == (
        0, "".join(name + "\n" for name in ALL_RUNS), "")


def test_jsonpath_file_missing(q, tmp_path):
    code, out, err = q("get", "runs", "-o", f"jsonpath-file={tmp_path / 'nope'}")
    assert (code, out) == (1, "")
    assert err == f"error: error reading {tmp_path / 'nope'}: No such file or directory\n"


def test_jsonpath_errors(q):
    assert q("get", "runs", "-o", "jsonpath=") == (1, "", "error: template format specified but no template given\n")
    code, out, err = q("get", "runs", "-o", "jsonpath={.items[?(@.a && )]}")
    assert (code, out) == (1, "")
    assert err.startswith("error: error parsing jsonpath {.items[?(@.a && )]}, ")


def test_jsonpath_on_nothing_prints_nothing(q):
    assert q("get", "runs", "-l", "app=nope", "-o", "jsonpath={.items[*].metadata.name}") == (0, "", "")


# ------------------------------------------------------------------ -o custom-columns


def test_custom_columns_with_none(q):
    spec = "NAME:.metadata.name,APP:.metadata.labels.app,MEDIAN:.spec.timing.latencyNs.median"
    assert q("get", "runs", "-o", f"custom-columns={spec}", "-l", "app in (web,api)") == (
        0,
        "NAME     APP   MEDIAN\n"
        "api-9    api   <none>\n"
        "web-10   web   1000\n"
        "web-2    web   200\n",
        "",
    )


def test_custom_columns_no_headers_and_relaxed_paths(q):
    spec = "N:metadata.name,S:{.spec.status},B:{spec.sourceNative.benchmark}"
    assert q("get", "runs", "-o", f"custom-columns={spec}", "--no-headers", "-l", "app") == (
        0,
        "api-9    skipped   <none>\n"
        "web-10   failed    llama4_rope/forward\n"
        "web-2    passed    llama4_rope/backward\n",
        "",
    )


def test_custom_columns_several_values_joined_by_commas(q):
    code, out, err = q("get", "runs", SEED, "-o", "custom-columns=Q:.spec.measurements[*].statistic")
    assert (code, out, err) == (0, "Q\np20,p80\n", "")


def test_custom_columns_file(q, tmp_path):
    spec = tmp_path / "columns.txt"
    spec.write_text("NAME   STATUS    APP\n.metadata.name {.spec.status} metadata.labels.app\n", encoding="utf-8")
    assert q("get", "runs", "-o", f"custom-columns-file={spec}", "--sort-by", ".metadata.name") == (
        0,
        f"NAME{' ' * (len(SEED) - 1)}STATUS    APP\n"
        f"api-9{' ' * (len(SEED) - 2)}skipped   api\n"
        f"{SEED}   passed    <none>\n"
        f"web-1{' ' * (len(SEED) - 2)}passed    <none>\n"
        f"web-2{' ' * (len(SEED) - 2)}passed    web\n"
        f"web-10{' ' * (len(SEED) - 3)}failed    web\n",
        "",
    )
    code, out, err = q("get", "runs", "-o", f"custom-columns-file={spec}", "--no-headers", "-l", "tier=fe")
    assert (code, out, err) == (0, "web-2   passed   web\n", "")


def test_custom_columns_errors(q, tmp_path):
    assert q("get", "runs", "-o", "custom-columns=NAME") == (
        1, "", "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>\n")
    assert q("get", "runs", "-o", "custom-columns=") == (
        1, "", "error: custom-columns format specified but no custom columns given\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("A B\n.metadata.name\n", encoding="utf-8")
    assert q("get", "runs", "-o", f"custom-columns-file={bad}") == (
        1, "", "error: number of headers (2) and field specifications (1) don't match\n")


# ------------------------------------------------------------------ -o errors


def test_unknown_output_format_lists_the_allowed_ones(q):
    assert q("get", "runs", "-o", "foo") == (
        1,
        "",
        'error: unable to match a printer suitable for the output format "foo", allowed formats are: '
        "csv,custom-columns,custom-columns-file,json,jsonpath,jsonpath-file,name,tsv,wide,yaml\n",
    )


def test_format_that_needs_an_argument_without_one(q):
    code, out, err = q("get", "runs", "-o", "custom-columns")
    assert (code, out) == (1, "")
    assert err.startswith('error: unable to match a printer suitable for the output format "custom-columns"')


# ------------------------------------------------------------------ determinism

DETERMINISM = [
    ["get", "all", "-o", "yaml"],
    ["get", "all", "-o", "json"],
    ["get", "all", "-o", "name"],
    ["get", "runs", "-o", "jsonpath={range .items[*]}{.metadata.name} {.metadata.labels} {.spec}{\"\\n\"}{end}"],
    ["get", "all", "-o", "custom-columns=NAME:.metadata.name,KIND:.kind,DIGEST:.metadata.digest,LABELS:.metadata.labels"],
    # the default run table without AGE
    ["get", "runs", "-o", "custom-columns=NAME:.metadata.name,BENCHMARK:.spec.sourceNative.benchmark,"
     "STATUS:.spec.status,MEDIAN:.spec.timing.latencyNs.median,OBSERVED:.spec.observedAt"],
]


@pytest.mark.parametrize("args", DETERMINISM, ids=["yaml", "json", "name", "jsonpath", "custom-columns", "table"])
def test_same_command_twice_gives_identical_bytes(q, args):
    first = q(*args)
    second = q(*args)
    assert first.code == 0 and first.err == ""
    assert first.out
    assert first.out.encode() == second.out.encode()


def test_output_is_identical_across_processes_with_different_hash_seeds(small_store):
    """Set and dict orders must not leak into the output."""
    outputs = []
    for seed in ("1", "2"):
        environment = {**os.environ, "KIDX_STORE": str(small_store), "NO_COLOR": "1", "PYTHONHASHSEED": seed}
        script = "\n".join(
            [
                "import sys",
                "from kidx.cli.app import run",
                *(f"run({args!r}); sys.stdout.write('\\n---\\n')" for args in DETERMINISM),
            ]
        )
        completed = subprocess.run([sys.executable, "-c", script], capture_output=True, env=environment, cwd=REPO)
        assert completed.returncode == 0, completed.stderr
        assert completed.stderr == b""
        outputs.append(completed.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n---\n") == len(DETERMINISM)


def test_a_table_without_age_is_stable(q):
    """The real table: everything but the AGE column is the same every time."""
    first, second = q("get", "all", "--no-headers"), q("get", "all", "--no-headers")

    def without_age(out):
        return [line.split()[:-1] for line in out.splitlines() if line]

    assert first.code == 0
    assert without_age(first.out) == without_age(second.out)


def test_a_mistyped_path_names_the_nearest_real_one(kidx, seed_bundle):
    import json as _json

    kidx("apply", "-f", "-", stdin=_json.dumps(seed_bundle))
    assert kidx("get", "wl", "--field-selector", "spec.parameter.seq=16384") == (
        1, "", "error: field label not supported: spec.parameter.seq (did you mean spec.parameters.seq?)\n")
    assert kidx("get", "runs", "--sort-by", "median") == (
        1, "", 'error: couldn\'t find any field with path "{.median}" in the list of objects '
               "(did you mean .spec.timing.latencyNs.median?)\n")
    assert kidx("get", "runs", "--sort-by", "-.spec.timing.latencyNs.medain") == (
        1, "", 'error: couldn\'t find any field with path "{.spec.timing.latencyNs.medain}" in the list of objects '
               "(did you mean .spec.timing.latencyNs.median?)\n")
    # a path no real one is near, or one with an index, is kubectl's error alone
    assert kidx("get", "runs", "--sort-by", "{.spec.nothing[0]}") == (
        1, "", 'error: couldn\'t find any field with path "{.spec.nothing[0]}" in the list of objects\n')


def test_field_selector_path_the_kind_lacks_is_an_error(kidx, seed_bundle):
    import json as _json

    kidx("apply", "-f", "-", stdin=_json.dumps(seed_bundle))
    result = kidx("get", "runs", "--field-selector", "spec.sourcenative.benchmark=llama4_rope/backward")
    assert result == (1, "", "error: field label not supported: spec.sourcenative.benchmark "
                             "(did you mean spec.sourceNative.benchmark?)\n")
    result = kidx("get", "runs,workloads", "--field-selector", "spec.status=passed")
    assert result == (1, "", "error: field label not supported: spec.status (workloads have no such field)\n")
    result = kidx("get", "runs", "--field-selector", "spec.sourceNative.benchmark=llama4_rope/backward", "-o", "name")
    assert result.code == 0 and result.out.count("\n") == 1


def test_a_label_no_run_has_gets_a_hint_on_stderr(q):
    """kubectl's exit 0 and "No resources found", then compare's words for the typo."""
    code, out, err = q("get", "runs", "-l", "ap=web")
    assert (code, out) == (0, "")
    assert err.startswith("No resources found\nthe selection matched no runs: no run has the label ap "
                          "(labels present: app, ")


def test_a_value_no_run_has_gets_a_hint_on_stderr(q):
    assert q("get", "runs", "-l", "app=wbe") == (
        0, "", "No resources found\nthe selection matched no runs: no run has app=wbe (app values present: web, api)\n")


def test_no_hint_where_the_label_selector_alone_selects_runs(q):
    assert q("get", "runs", "-l", "app=web", "--field-selector", "metadata.name=nope") == (0, "", "No resources found\n")
    assert q("get", "envs", "-l", "ap=web") == (0, "", "No resources found\n")


def test_a_combination_that_selects_no_run_names_what_each_part_selects(q):
    assert q("get", "runs", "-l", "app=api,tier=fe") == (
        0, "", "No resources found\nthe selection matched no runs: no run matches every condition: app=api matches "
               "1 run, with no tier label; tier=fe matches 1 run, with app=web\n")
    assert q("get", "runs", "-l", "app=web,tier in (fe,be),!app")[2] == (
        "No resources found\nthe selection matched no runs: no run matches every condition: app=web matches 2 runs, "
        "with tier=be, fe; !app matches 2 runs, with no tier label; tier in (be,fe) matches 2 runs, with app=web\n")


def test_label_prefixes_and_version_ranges_select_releases(kidx, history_store):
    def versions(*args):
        code, out, err = kidx("get", "runs", *args, "-o", "custom-columns=V:.metadata.labels.liger_version",
                              "--no-headers", store_path=history_store)
        assert code == 0, err
        return sorted(set(out.split()))

    assert versions("-l", "liger_version=0.5.*") == ["0.5.10", "0.5.2", "0.5.3", "0.5.4", "0.5.8"]
    # in version order: 0.5.10 after 0.5.8, 0.6.0 within, 0.7.0 beyond
    assert versions("-l", "liger_version>=0.5.8,liger_version<=0.6.1") == ["0.5.10", "0.5.8", "0.6.0", "0.6.1"]
    # the same forms work through references and for compare
    code, out, err = kidx("compare", "-l", "kernel=kto_loss,liger_version=0.5.*", "--by", "label=liger_version",
                          "--baseline", "previous", "-o", "json", store_path=history_store)
    assert code == 0, err
    labels = {row["label"] for group in json.loads(out)["groups"] for row in group["rows"]}
    assert labels and all(label.startswith("0.5.") for label in labels)
    code, out, err = kidx("get", "runs", "-l", "liger_version=9.*", store_path=history_store)
    assert (code, out) == (0, "")
    assert err.startswith("No resources found\nthe selection matched no runs: no run has liger_version=9.* "
                          "(liger_version values present: ")


def test_a_selector_past_its_bound_is_refused_by_every_command(kidx, store):
    """Refused before any store is read (the analyses' errors are exit 2)."""
    selector = ",".join(f"k{index}=x" for index in range(1_001))
    message = "error: the label selector names 1,001 label keys; a selector may name at most 1,000\n"
    for command, code in ((("get", "runs"), 1), (("summary",), 1), (("delete", "runs"), 1), (("compare",), 2),
                          (("series",), 2)):
        assert kidx(*command, "-l", selector) == (code, "", message), command

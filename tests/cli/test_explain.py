"""kidx explain and kidx api-resources (conventions §9)."""

from __future__ import annotations

import pytest
from conftest import REPO
from ruamel.yaml import YAML

HEADER = "GROUP:      kernelindex.dev\nKIND:       BenchmarkRun\nVERSION:    v1alpha1\n\n"
TYPES = ("the resource types are benchmarkprotocols, benchmarkruns, executionenvironments, implementations and "
         "workloads ('kidx api-resources' lists their short names)\n")


def crd_schema(plural: str) -> dict:
    crd = YAML(typ="safe").load((REPO / "crds" / f"{plural}.yaml").read_text(encoding="utf-8"))
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


# ------------------------------------------------------------------ explain


EXPLAIN_RUNS = HEADER + """\
DESCRIPTION:
    A BenchmarkRun is one measurement of one implementation of one workload,
    in one execution environment, under one benchmark protocol: its outcome
    (status), its headline timing or memory figures, the raw measurements
    behind them, and the source's own record kept verbatim. It points at the
    protocol, workload, environment and implementation by digest; those
    objects need not be in the store for the run to be valid.

FIELDS:
  apiVersion\t<string> -required-
    enum: kernelindex.dev/v1alpha1
    Versioned schema of this object. Always kernelindex.dev/v1alpha1 for
    kidx objects.

  kind\t<string> -required-
    enum: BenchmarkRun
    The kind of object this manifest describes. Always BenchmarkRun in this
    file.

  metadata\t<Object> -required-
    Naming and bookkeeping for the object. Metadata is not part of the
    digest, so changing a title, label or annotation never changes the
    object's identity.

  spec\t<Object> -required-
    The measurement itself. Everything here is part of the run's digest.
"""


@pytest.mark.parametrize("spelling", ["runs", "run", "br", "benchmarkruns", "BenchmarkRun", "benchmarkruns.kernelindex.dev"])
def test_explain_a_kind(kidx, spelling):
    assert kidx("explain", spelling) == (0, EXPLAIN_RUNS, "")


def test_explain_description_comes_from_the_crd(kidx):
    _, out, _ = kidx("explain", "runs")
    description = out.split("DESCRIPTION:\n", 1)[1].split("\n\n", 1)[0]
    assert " ".join(description.split()) == " ".join(crd_schema("benchmarkruns")["description"].split())
    assert all(len(line) <= 76 for line in out.splitlines())


def test_explain_another_kind_lists_its_required_fields(kidx):
    code, out, err = kidx("explain", "environments.spec.hardware")
    assert (code, err) == (0, "")
    assert out.startswith("GROUP:      kernelindex.dev\nKIND:       ExecutionEnvironment\nVERSION:    v1alpha1\n\n"
                          "FIELD: hardware <Object> -required-\n\nDESCRIPTION:\n")
    fields = [line for line in out.splitlines() if "\t" in line]
    required = set(crd_schema("executionenvironments")["properties"]["spec"]["properties"]["hardware"]["required"])
    assert required == {"vendor", "product"}
    assert [line.split("\t")[0].strip() for line in fields] == sorted(
        crd_schema("executionenvironments")["properties"]["spec"]["properties"]["hardware"]["properties"])
    for line in fields:
        name = line.split("\t")[0].strip()
        assert line.endswith(" -required-") == (name in required), line


def test_explain_a_field(kidx):
    assert kidx("explain", "runs.spec.timing") == (
        0,
        HEADER + """\
FIELD: timing <Object>

DESCRIPTION:
    Headline latency of the timed operation, summarised over the harness's
    repetitions. Absent for runs that measure something other than time (for
    example peak memory).

FIELDS:
  latencyNs\t<Object>
    Summary statistics of the latency of one call of the timed operation, in
    nanoseconds. Any subset may be present; the protocol says how they were
    computed.

  primaryStatistic\t<string>
    enum: median, mean, min, max
    Which of the latencyNs statistics is the headline figure to compare and
    sort by (for example median for triton.testing.do_bench).
""",
        "",
    )


def test_explain_through_an_array_shows_the_enum(kidx):
    assert kidx("explain", "run.spec.measurements.unit") == (
        0,
        HEADER + """\
FIELD: unit <string> -required-

DESCRIPTION:
    Unit of value. ns, us, ms, s: time; bytes: memory; flop/s, bytes/s,
    items/s and tokens/s: throughput; ratio: dimensionless fraction or
    speed-up; count: a plain number of things.
    enum: ns, us, ms, s, bytes, flop/s, bytes/s, items/s, tokens/s, ratio, count
""",
        "",
    )


def test_explain_an_array_field_lists_item_fields_with_short_enums(kidx):
    code, out, err = kidx("explain", "runs.spec.measurements")
    assert (code, err) == (0, "")
    assert "FIELD: measurements <[]Object>\n" in out
    assert "  unit\t<string> -required-\n    enum: ns, us, ms, s, ....\n" in out
    assert "  value\t<number> -required-\n" in out


def test_explain_a_map_field(kidx):
    code, out, err = kidx("explain", "runs.metadata.labels")
    assert (code, err) == (0, "")
    assert "FIELD: labels <map[string]string>\n" in out
    assert "FIELDS:" not in out


def test_explain_recursive(kidx):
    assert kidx("explain", "runs.spec.timing", "--recursive") == (
        0,
        HEADER + """\
FIELD: timing <Object>

DESCRIPTION:
    Headline latency of the timed operation, summarised over the harness's
    repetitions. Absent for runs that measure something other than time (for
    example peak memory).

FIELDS:
  latencyNs\t<Object>
    max\t<number>
    mean\t<number>
    median\t<number>
    min\t<number>
    stddev\t<number>
  primaryStatistic\t<string>
""",
        "",
    )


def test_explain_recursive_steps_into_arrays_and_marks_required(kidx):
    code, out, err = kidx("explain", "runs", "--recursive")
    assert (code, err) == (0, "")
    fields = out.split("FIELDS:\n", 1)[1]
    assert fields.startswith(
        "  apiVersion\t<string> -required-\n"
        "  kind\t<string> -required-\n"
        "  metadata\t<Object> -required-\n"
        "    annotations\t<map[string]string>\n"
    )
    assert ("    measurements\t<[]Object>\n"
            "      metric\t<string> -required-\n"
            "      statistic\t<string> -required-\n"
            "      unit\t<string> -required-\n"
            "      value\t<number> -required-\n"
            "    memory\t<Object>\n") in fields


def test_explain_max_depth(kidx):
    code, out, err = kidx("explain", "runs", "--recursive", "--max-depth", "1")
    assert (code, err) == (0, "")
    assert out.split("FIELDS:\n", 1)[1] == (
        "  apiVersion\t<string> -required-\n"
        "  kind\t<string> -required-\n"
        "  metadata\t<Object> -required-\n"
        "  spec\t<Object> -required-\n"
    )
    code, out, err = kidx("explain", "runs", "--recursive", "--max-depth", "2")
    tree = out.split("FIELDS:\n", 1)[1].splitlines()
    assert "    status\t<string> -required-" in tree
    assert not any(line.startswith("      ") for line in tree)


def test_max_depth_needs_recursive(kidx):
    assert kidx("explain", "runs", "--max-depth", "1") == (1, "", "error: --max-depth requires --recursive\n")


@pytest.mark.parametrize("path", ["runs.nope", "runs.spec.nope", "runs.spec.status.nope", "runs.spec.measurements.nope"])
def test_explain_unknown_field(kidx, path):
    assert kidx("explain", path) == (1, "", 'error: field "nope" does not exist\n')


def test_explain_unknown_type(kidx):
    assert kidx("explain", "foos") == (1, "", 'error: kidx doesn\'t have a resource type "foos"\n' + TYPES)
    assert kidx("explain", "foos.spec") == (1, "", 'error: kidx doesn\'t have a resource type "foos"\n' + TYPES)


def test_explain_without_argument(kidx):
    assert kidx("explain") == (
        1,
        "",
        'error: You must specify the type of resource to explain. Use "kidx api-resources" for a complete '
        "list of supported resources.\n",
    )


# ------------------------------------------------------------------ api-resources

API_RESOURCES = """\
NAME                    SHORTNAMES                             APIVERSION                 NAMESPACED   KIND
benchmarkprotocols      protocol,protocols,bp                  kernelindex.dev/v1alpha1   false        BenchmarkProtocol
benchmarkruns           run,runs,br                            kernelindex.dev/v1alpha1   false        BenchmarkRun
executionenvironments   environment,environments,env,envs,ee   kernelindex.dev/v1alpha1   false        ExecutionEnvironment
implementations         impl,impls                             kernelindex.dev/v1alpha1   false        Implementation
workloads               wl                                     kernelindex.dev/v1alpha1   false        Workload
"""


def test_api_resources(kidx):
    assert kidx("api-resources") == (0, API_RESOURCES, "")


def test_api_resources_no_headers(kidx):
    assert kidx("api-resources", "--no-headers") == (
        0,
        "benchmarkprotocols      protocol,protocols,bp                  kernelindex.dev/v1alpha1   false   BenchmarkProtocol\n"
        "benchmarkruns           run,runs,br                            kernelindex.dev/v1alpha1   false   BenchmarkRun\n"
        "executionenvironments   environment,environments,env,envs,ee   kernelindex.dev/v1alpha1   false   ExecutionEnvironment\n"
        "implementations         impl,impls                             kernelindex.dev/v1alpha1   false   Implementation\n"
        "workloads               wl                                     kernelindex.dev/v1alpha1   false   Workload\n",
        "",
    )


def test_api_resources_name(kidx):
    assert kidx("api-resources", "-o", "name") == (
        0,
        "benchmarkprotocols.kernelindex.dev\n"
        "benchmarkruns.kernelindex.dev\n"
        "executionenvironments.kernelindex.dev\n"
        "implementations.kernelindex.dev\n"
        "workloads.kernelindex.dev\n",
        "",
    )


def test_api_resources_wide(kidx):
    verbs = "apply,delete,describe,diff,explain,get"
    assert kidx("api-resources", "-o", "wide") == (
        0,
        "NAME                    SHORTNAMES                             APIVERSION                 NAMESPACED   KIND                   VERBS                                    CATEGORIES\n"
        f"benchmarkprotocols      protocol,protocols,bp                  kernelindex.dev/v1alpha1   false        BenchmarkProtocol      {verbs}   kidx\n"
        f"benchmarkruns           run,runs,br                            kernelindex.dev/v1alpha1   false        BenchmarkRun           {verbs}   kidx\n"
        f"executionenvironments   environment,environments,env,envs,ee   kernelindex.dev/v1alpha1   false        ExecutionEnvironment   {verbs}   kidx\n"
        f"implementations         impl,impls                             kernelindex.dev/v1alpha1   false        Implementation         {verbs}   kidx\n"
        f"workloads               wl                                     kernelindex.dev/v1alpha1   false        Workload               {verbs}   kidx\n",
        "",
    )


def test_api_resources_sort_by_kind_and_name(kidx):
    assert kidx("api-resources", "--sort-by=kind") == (0, API_RESOURCES, "")
    assert kidx("api-resources", "--sort-by", "name") == (0, API_RESOURCES, "")


def test_api_resources_sort_orders_differ_when_names_and_kinds_do(kidx, monkeypatch):
    """The real kinds sort the same both ways; a registry where they do not tells them apart."""
    import importlib

    from kidx.kinds.registry import registry

    module = importlib.import_module("kidx.cli.commands.api_resources")
    real = registry()
    runs = next(info for info in real.kinds if info.kind == "BenchmarkRun")
    aardvark = runs._replace(kind="Aardvark", plural="zebras", singular="zebra", short_names=("zz",))

    class Fake:
        kinds = [*real.kinds, aardvark]

    monkeypatch.setattr(module, "kind_registry", lambda: Fake())
    _, by_name, _ = kidx("api-resources", "-o", "name", "--sort-by=name")
    _, by_kind, _ = kidx("api-resources", "--sort-by=kind", "--no-headers")
    assert by_name.splitlines()[-1] == "zebras.kernelindex.dev"
    assert [line.split()[-1] for line in by_kind.splitlines()] == [
        "Aardvark", "BenchmarkProtocol", "BenchmarkRun", "ExecutionEnvironment", "Implementation", "Workload"]


def test_api_resources_bad_sort_by(kidx):
    assert kidx("api-resources", "--sort-by=verbs") == (1, "", "error: --sort-by accepts only name or kind\n")


def test_api_resources_bad_output(kidx):
    assert kidx("api-resources", "-o", "foo") == (
        1, "", 'error: unable to match a printer suitable for the output format "foo", allowed formats are: '
        "json,name,wide,yaml\n")


def test_api_resources_json(kidx):
    import json

    code, out, err = kidx("api-resources", "-o", "json")
    assert (code, err) == (0, "")
    listing = json.loads(out)
    assert listing["kind"] == "APIResourceList"
    assert listing["groupVersion"] == "kernelindex.dev/v1alpha1"
    runs = next(r for r in listing["resources"] if r["kind"] == "BenchmarkRun")
    assert runs == {
        "name": "benchmarkruns", "singularName": "benchmarkrun", "namespaced": False, "kind": "BenchmarkRun",
        "shortNames": ["run", "runs", "br"], "categories": ["kidx"],
        "verbs": ["apply", "delete", "describe", "diff", "explain", "get"],
    }


def test_api_resources_takes_no_arguments(kidx):
    code, out, err = kidx("api-resources", "runs")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")

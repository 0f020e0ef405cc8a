"""The CustomResourceDefinitions in crds/: names, schema hygiene, and validation.

The schemas are checked with jsonschema's Draft 2020-12 validator. OpenAPI's
`nullable: true` has no JSON Schema equivalent, so `as_json_schema` turns it into a
type list first; every other keyword we allow means the same in both dialects
(x-* extensions are ignored by jsonschema).
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from conftest import REPO as REPO_ROOT
from jsonschema import Draft202012Validator
from ruamel.yaml import YAML

CRD_DIR = REPO_ROOT / "crds"

GROUP = "kernelindex.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"

# file stem -> (kind, singular, short names)
EXPECTED_NAMES = {
    "benchmarkruns": ("BenchmarkRun", "benchmarkrun", ["run", "runs", "br"]),
    "benchmarkprotocols": ("BenchmarkProtocol", "benchmarkprotocol", ["protocol", "protocols", "bp"]),
    "executionenvironments": (
        "ExecutionEnvironment",
        "executionenvironment",
        ["environment", "environments", "env", "envs", "ee"],
    ),
    "workloads": ("Workload", "workload", ["wl"]),
    "implementations": ("Implementation", "implementation", ["impl", "impls"]),
}

ALLOWED_KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "nullable",
    "anyOf",
    "x-kubernetes-preserve-unknown-fields",
    "x-kidx-reference",
    "x-kidx-name-reference",
}
SCALAR_TYPES = {"string", "integer", "number", "boolean"}
ALLOWED_TYPES = SCALAR_TYPES | {"object", "array"}
COLUMN_TYPES = {"string", "integer", "number", "boolean", "date"}

# The founding example (docs/design.md, "The record and its kinds"), verbatim from
# docs/examples/seed-bundle.json, so that a damaged example file cannot hide a change.
SEED_BUNDLE = json.loads(
    r"""
{
  "run": {
    "kind": "BenchmarkRun",
    "spec": {
      "status": "passed",
      "timing": {"latencyNs": {"median": 417536}, "primaryStatistic": "median"},
      "observedAt": "2025-08-07T21:42:15.000Z",
      "measurements": [
        {"unit": "ns", "value": 417056, "metric": "latency", "statistic": "p20"},
        {"unit": "ns", "value": 418138, "metric": "latency", "statistic": "p80"}
      ],
      "sourceNative": {
        "source": "liger-kernel-bench",
        "metrics": {
          "ms_20": 0.41705599427223206,
          "ms_50": 0.4175359904766083,
          "ms_80": 0.4181375920772552
        },
        "benchmark": "llama4_rope/backward",
        "externalId": "llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15"
      },
      "protocolDigest": "sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8",
      "workloadDigest": "sha256:acfd1d7e6ca5aee0df8b2dfece34e3144b249d3671745b21c015a45f41816344",
      "environmentDigest": "sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393",
      "implementationDigest": "sha256:7b16e7caa07229eb63274c52969e9742bd849258f08f13b57ebaa55928740b6d"
    },
    "metadata": {
      "name": "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-",
      "title": "Llama 4 rotary position embedding \u00b7 liger \u00b7 backward",
      "labels": {"liger_version": "0.6.1"}
    },
    "apiVersion": "kernelindex.dev/v1alpha1"
  },
  "protocol": {
    "kind": "BenchmarkProtocol",
    "spec": {
      "harness": {
        "name": "Liger-Kernel benchmark scripts",
        "repository": "https://github.com/linkedin/Liger-Kernel"
      },
      "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
      "comparability": {
        "notes": "Timed: the backward pass of the module output given a random upstream gradient, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread). The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each run's labels. Comparable only within one kernel, workload, timed pass, and GPU.",
        "family": "liger_kernel_bench"
      }
    },
    "metadata": {
      "name": "liger-bench-do-bench-backward",
      "title": "Liger benchmark harness \u00b7 backward pass"
    },
    "apiVersion": "kernelindex.dev/v1alpha1"
  },
  "environment": {
    "kind": "ExecutionEnvironment",
    "spec": {
      "hardware": {
        "vendor": "nvidia",
        "product": "NVIDIA H100",
        "formFactor": "80GB HBM3",
        "architecture": "sm_90"
      },
      "software": {}
    },
    "metadata": {
      "name": "liger-bench-nvidia-h100-80gb-hbm3",
      "title": "Liger benchmark host \u00b7 H100 80GB HBM3"
    },
    "apiVersion": "kernelindex.dev/v1alpha1"
  }
}
"""
)
SEED_BUNDLE_FILE = REPO_ROOT / "docs" / "examples" / "seed-bundle.json"
SEED_RECORD_FILE = REPO_ROOT / "docs" / "examples" / "seed-record.txt"


# --- helpers -----------------------------------------------------------------


def load_crds() -> dict[str, dict]:
    yaml = YAML(typ="safe")
    return {path.stem: yaml.load(path.read_text(encoding="utf-8")) for path in sorted(CRD_DIR.glob("*.yaml"))}


CRDS = load_crds()
CRDS_BY_KIND = {crd["spec"]["names"]["kind"]: crd for crd in CRDS.values()}


def schema_of(crd: dict) -> dict:
    (version,) = crd["spec"]["versions"]
    return version["schema"]["openAPIV3Schema"]


def child_schemas(schema: dict):
    """Yield (path segment, sub-schema, needs_description) for each direct sub-schema."""
    for name, prop in schema.get("properties", {}).items():
        yield name, prop, True
    if isinstance(schema.get("items"), dict):
        yield "[]", schema["items"], True
    if isinstance(schema.get("additionalProperties"), dict):
        yield "{}", schema["additionalProperties"], True
    for i, branch in enumerate(schema.get("anyOf", [])):
        yield f"anyOf[{i}]", branch, False


def walk(schema: dict, path: str = ""):
    """Yield (path, schema, needs_description) for a schema and every schema inside it."""
    yield path, schema, True
    stack = [(path, schema)]
    while stack:
        here, node = stack.pop()
        for segment, child, needs_description in child_schemas(node):
            child_path = f"{here}.{segment}" if here else segment
            yield child_path, child, needs_description
            stack.append((child_path, child))


def all_schema_nodes():
    for stem, crd in CRDS.items():
        for path, node, needs_description in walk(schema_of(crd)):
            yield f"{stem}:{path or '<root>'}", node, needs_description


def as_json_schema(schema: dict) -> dict:
    """Translate OpenAPI `nullable: true` into a JSON Schema type list."""
    schema = copy.deepcopy(schema)
    for _, node, _ in walk(schema):
        if node.pop("nullable", False) and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
    return schema


def validator_for(kind: str) -> Draft202012Validator:
    schema = as_json_schema(schema_of(CRDS_BY_KIND[kind]))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors_of(kind: str, manifest: dict) -> list[tuple[tuple, str]]:
    return sorted(
        ((tuple(e.absolute_path), e.validator) for e in validator_for(kind).iter_errors(manifest)),
        key=repr,
    )


def schema_at(schema: dict, dotted: str) -> dict | None:
    """Follow a kubectl-style jsonPath such as .spec.timing.latencyNs.median."""
    node = schema
    for part in dotted.lstrip(".").split("."):
        node = node.get("properties", {}).get(part)
        if node is None:
            return None
    return node


# --- names -------------------------------------------------------------------


def test_exactly_the_five_crd_files_exist():
    assert set(CRDS) == set(EXPECTED_NAMES)


@pytest.mark.parametrize("stem", sorted(EXPECTED_NAMES))
def test_crd_header_and_names(stem):
    crd = CRDS[stem]
    kind, singular, short_names = EXPECTED_NAMES[stem]
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"]["name"] == f"{stem}.{GROUP}"
    spec = crd["spec"]
    assert spec["group"] == GROUP
    assert spec["scope"] == "Cluster"
    assert spec["names"] == {
        "kind": kind,
        "plural": stem,
        "singular": singular,
        "shortNames": short_names,
        "listKind": f"{kind}List",
        "categories": ["kidx"],
    }
    (version,) = spec["versions"]
    assert version["name"] == VERSION
    assert version["served"] is True
    assert version["storage"] is True


def test_every_spelling_of_a_kind_is_unique():
    short_names = [s for crd in CRDS.values() for s in crd["spec"]["names"]["shortNames"]]
    assert len(short_names) == len(set(short_names))
    # no spelling of one kind (plural, singular, lower-case kind, short name) names another
    spellings = []
    for crd in CRDS.values():
        names = crd["spec"]["names"]
        spellings += {names["plural"], names["singular"], names["kind"].lower(), *names["shortNames"]}
    assert len(spellings) == len(set(spellings))


# --- schema shape and hygiene ------------------------------------------------


@pytest.mark.parametrize("stem", sorted(EXPECTED_NAMES))
def test_top_level_schema(stem):
    kind = EXPECTED_NAMES[stem][0]
    schema = schema_of(CRDS[stem])
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["apiVersion", "kind", "metadata", "spec"]
    assert set(schema["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert schema["properties"]["apiVersion"]["enum"] == [API_VERSION]
    assert schema["properties"]["kind"]["enum"] == [kind]
    metadata = schema["properties"]["metadata"]
    assert metadata["required"] == ["name"]
    assert set(metadata["properties"]) == {
        "name",
        "title",
        "labels",
        "annotations",
        "digest",
        "creationTimestamp",
        "generation",
    }
    name = metadata["properties"]["name"]
    assert (name["minLength"], name["maxLength"], name["pattern"]) == (1, 253, "^[a-z0-9][a-z0-9._-]*$")
    assert "spec" in schema["properties"] and schema["properties"]["spec"]["type"] == "object"


def test_metadata_is_the_same_for_every_kind():
    blocks = {json.dumps(schema_of(crd)["properties"]["metadata"], sort_keys=True) for crd in CRDS.values()}
    assert len(blocks) == 1


@pytest.mark.parametrize("where,node,needs_description", list(all_schema_nodes()))
def test_schema_node_hygiene(where, node, needs_description):
    assert set(node) <= ALLOWED_KEYWORDS, f"{where}: disallowed keywords {set(node) - ALLOWED_KEYWORDS}"
    if needs_description:
        assert isinstance(node.get("description"), str) and node["description"].strip(), f"{where}: no description"
    if "anyOf" in node:
        assert "type" not in node, f"{where}: anyOf and type together"
        for branch in node["anyOf"]:
            assert branch.get("type") in SCALAR_TYPES, f"{where}: anyOf is only for scalar unions"
            assert set(branch) <= {"type", "description"}, f"{where}: anyOf branches carry only a type"
    else:
        assert isinstance(node.get("type"), str) and node["type"] in ALLOWED_TYPES, f"{where}: bad type"
    if node.get("type") == "object":
        open_object = node.get("x-kubernetes-preserve-unknown-fields") is True
        assert node.get("additionalProperties") is False or isinstance(node.get("additionalProperties"), dict) or (
            open_object and "additionalProperties" not in node
        ), f"{where}: object must be closed, a map, or explicitly open"
    for name in node.get("required", []):
        assert name in node.get("properties", {}), f"{where}: required {name!r} is not a property"
    if "pattern" in node:
        re.compile(node["pattern"])
    if "enum" in node:
        assert len(node["enum"]) == len(set(node["enum"]))
        assert all(isinstance(v, str) for v in node["enum"]) == (node["type"] == "string")
    if "nullable" in node:
        assert node["nullable"] is True and node.get("type") in SCALAR_TYPES


@pytest.mark.parametrize("stem", sorted(EXPECTED_NAMES))
def test_schema_has_a_kind_description(stem):
    assert len(schema_of(CRDS[stem])["description"]) > 40


# --- references --------------------------------------------------------------


def test_references_name_known_kinds():
    references = [(where, node["x-kidx-reference"]) for where, node, _ in all_schema_nodes() if "x-kidx-reference" in node]
    assert {kind for _, kind in references} == {"BenchmarkProtocol", "Workload", "ExecutionEnvironment", "Implementation"}
    for where, node, _ in all_schema_nodes():
        if "x-kidx-reference" in node:
            assert node["type"] == "string" and node["pattern"] == DIGEST_PATTERN, where


def test_name_references_point_at_sibling_digest_references():
    found = 0
    for where, node, _ in all_schema_nodes():
        properties = node.get("properties", {})
        for name, prop in properties.items():
            if "x-kidx-name-reference" not in prop:
                continue
            found += 1
            target = prop["x-kidx-name-reference"]
            assert target in properties, f"{where}.{name}: {target!r} is not a sibling"
            assert "x-kidx-reference" in properties[target], f"{where}.{name}: {target!r} is not a reference"
            assert prop["type"] == "object" and prop["required"] == ["name"] and prop["additionalProperties"] is False
    assert found == 4


def test_run_refs_pin_the_matching_digest():
    spec = schema_of(CRDS["benchmarkruns"])["properties"]["spec"]["properties"]
    for stem, kind in [
        ("protocol", "BenchmarkProtocol"),
        ("workload", "Workload"),
        ("environment", "ExecutionEnvironment"),
        ("implementation", "Implementation"),
    ]:
        assert spec[f"{stem}Digest"]["x-kidx-reference"] == kind
        assert spec[f"{stem}Ref"]["x-kidx-name-reference"] == f"{stem}Digest"


# --- printer columns ---------------------------------------------------------


@pytest.mark.parametrize("stem", sorted(EXPECTED_NAMES))
def test_printer_columns_resolve_to_schema_fields(stem):
    crd = CRDS[stem]
    (version,) = crd["spec"]["versions"]
    columns = version["additionalPrinterColumns"]
    names = [c["name"] for c in columns]
    assert {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}.items() <= columns[names.index("Age")].items()
    assert len(names) == len(set(names))
    for column in columns:
        assert set(column) <= {"name", "type", "format", "jsonPath", "priority", "description"}
        assert column["type"] in COLUMN_TYPES and column["priority"] in (0, 1)
        assert column["description"].strip()
        field = schema_at(schema_of(crd), column["jsonPath"])
        assert field is not None, f"{stem}: {column['jsonPath']} is not in the schema"
        expected_type = "string" if column["type"] == "date" else column["type"]
        if column["type"] == "number":
            assert field["type"] in ("number", "integer")
        else:
            assert field["type"] == expected_type, column
    # wide columns come after the default ones, as in kubectl (AGE before IP, NODE …)
    priorities = [c["priority"] for c in columns]
    assert priorities == sorted(priorities)


def test_run_printer_columns():
    (version,) = CRDS["benchmarkruns"]["spec"]["versions"]
    columns = [(c["name"], c["jsonPath"], c["type"], c.get("format"), c["priority"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("Benchmark", ".spec.sourceNative.benchmark", "string", None, 0),
        ("Status", ".spec.status", "string", None, 0),
        ("Median", ".spec.timing.latencyNs.median", "number", "figure", 0),
        ("Observed", ".spec.observedAt", "string", None, 0),
        ("Age", ".metadata.creationTimestamp", "date", None, 0),
        ("Peak-Memory", ".spec.memory.peakAllocatedBytes.median", "number", "bytes", 1),
        ("Protocol", ".spec.protocolDigest", "string", "reference", 1),
        ("Environment", ".spec.environmentDigest", "string", "reference", 1),
        ("Implementation", ".spec.implementationDigest", "string", "reference", 1),
        ("Workload", ".spec.workloadDigest", "string", "reference", 1),
    ]


# --- validation: the seed and other good manifests ---------------------------


def test_embedded_seed_matches_the_bundled_examples():
    assert json.loads(SEED_BUNDLE_FILE.read_text(encoding="utf-8")) == SEED_BUNDLE
    record = SEED_RECORD_FILE.read_text(encoding="utf-8")
    assert json.loads(record[record.index("{"):]) == SEED_BUNDLE


@pytest.mark.parametrize("part", ["run", "protocol", "environment"])
def test_seed_manifests_validate(part):
    manifest = SEED_BUNDLE[part]
    assert errors_of(manifest["kind"], manifest) == []


GOOD_MANIFESTS = [
    {  # docs/liger-data.md §3.1
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {"name": "liger-llama4-rope-hidden8192-kv-heads8-q-heads32-seq16384-bf16"},
        "spec": {
            "family": "liger_kernel_bench",
            "operation": "llama4_rope",
            "parameters": {"hidden": 8192, "kv_heads": 8, "q_heads": 32, "seq": 16384, "eps": 1e-06, "bias": True, "model": "llama_3_8b"},
            "dtype": "bf16",
            "key": "hidden8192-kv_heads8-q_heads32-seq16384-bf16",
        },
    },
    {  # docs/liger-data.md §3.2
        "apiVersion": API_VERSION,
        "kind": "Implementation",
        "metadata": {"name": "liger-llama4-rope-liger-triton", "annotations": {"liger.providers": "liger, liger_triton"}},
        "spec": {"operation": "llama4_rope", "library": "liger-kernel", "backend": "triton", "repository": "https://github.com/linkedin/Liger-Kernel"},
    },
    {  # a memory run (docs/liger-data.md §3.3), by-name references, a failed measurement
        "apiVersion": API_VERSION,
        "kind": "BenchmarkRun",
        "metadata": {"name": "hand-written-run", "digest": "sha256:" + "0" * 64, "generation": 2},
        "spec": {
            "status": "passed",
            "observedAt": "2025-08-07T21:42:15+02:00",
            "memory": {"peakAllocatedBytes": {"median": 734134784}, "primaryStatistic": "median"},
            "measurements": [{"metric": "peak_memory", "statistic": "p20", "unit": "bytes", "value": None}],
            "sourceNative": {"source": "liger-kernel-bench", "metrics": {"MB_50": 700.12548828125, "MB_20": None}, "extra": [1, 2]},
            "protocolRef": {"name": "liger-bench-peak-memory-full"},
            "environmentRef": {"name": "liger-bench-nvidia-h100-80gb-hbm3"},
        },
    },
    {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": {"name": "mi300x"},
        "spec": {
            "hardware": {"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942", "count": 8, "memoryBytes": 206158430208},
            "software": {"rocm": "6.2", "torch": "2.5.1"},
        },
    },
]


@pytest.mark.parametrize("manifest", GOOD_MANIFESTS, ids=lambda m: m["kind"])
def test_other_good_manifests_validate(manifest):
    assert errors_of(manifest["kind"], manifest) == []


# --- validation: rejections, each with its exact path ------------------------


def _set(path: tuple, value):
    def mutate(manifest):
        node = manifest
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


REJECTIONS = [
    ("unknown top-level field", _set(("status",), {"phase": "done"}), (), "additionalProperties", "'status'"),
    ("status not in enum", _set(("spec", "status"), "great"), ("spec", "status"), "enum", "'great'"),
    ("malformed digest", _set(("spec", "protocolDigest"), "sha256:abc"), ("spec", "protocolDigest"), "pattern", "sha256:abc"),
    ("median is a string", _set(("spec", "timing", "latencyNs", "median"), "fast"), ("spec", "timing", "latencyNs", "median"), "type", "'fast'"),
    ("unknown field under spec", _set(("spec", "latency"), 417536), ("spec",), "additionalProperties", "'latency'"),
]


@pytest.mark.parametrize("mutate,path,keyword,mentions", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_bad_run_is_rejected_at_the_exact_path(mutate, path, keyword, mentions):
    manifest = copy.deepcopy(SEED_BUNDLE["run"])
    mutate(manifest)
    errors = list(validator_for("BenchmarkRun").iter_errors(manifest))
    assert [(tuple(e.absolute_path), e.validator) for e in errors] == [(path, keyword)]
    assert mentions in errors[0].message


def test_the_api_version_kidx_writes_is_every_crds():
    from kidx.kinds.metadata import API_VERSION as WRITTEN
    from kidx.kinds.registry import registry

    assert {info.api_version for info in registry().kinds} == {WRITTEN}

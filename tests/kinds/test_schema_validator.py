"""kidx's schema validation, checked against a stock jsonschema (Draft 2020-12) oracle.

``kidx.kinds.schema.SchemaValidator`` answers from a fast compiled predicate and, for a
document it rejects, from jsonschema (the validator of record, extended with Kubernetes'
readings). Here both must agree with a stock Draft 2020-12 validator, set up independently,
on the five CRD schemas in ``crds/``: on valid documents (the seed's manifests, generated
runs, documents generated from the schemas themselves, by hypothesis) and on many mutations
of them. The fast path must accept exactly what kidx's jsonschema accepts, and the fields
kidx reports must be the fields the oracle blames.

The oracle schema is the CRD schema with OpenAPI's ``nullable: true`` written as a type list
and ``x-*`` extensions removed. Three readings are deliberate, and asserted on their own
instead of being hidden:
- integers are strict in kidx: ``5.0`` is not an integer (it hashes differently from ``5``),
  while JSON Schema counts it as one. The differential cases never put an integral float
  where an integer is expected.
- patterns match as in ECMA-262 and Go's RE2 (what CRD patterns are written for): ``$``
  only at the very end of the text (Python's ``re`` also matches before a final newline)
  and ``\\d`` only ASCII digits. The oracle's patterns are ASCII (``(?a)``) and end in ``\\Z``.
- ``format: date-time`` is checked (strict RFC 3339); the oracle uses the same checker.
"""

from __future__ import annotations

import copy
import json
import random
import re

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from kidx.kinds.crd_files import load_crds
from kidx.kinds.schema import KNOWN_KEYWORDS, SchemaCompileError, SchemaValidator, compile_predicate, is_date_time

SEED = json.loads((REPO / "docs" / "examples" / "seed-bundle.json").read_text(encoding="utf-8"))
API = "kernelindex.dev/v1alpha1"
MISSING = object()


def _crd_schemas() -> dict[str, dict]:
    schemas = {}
    for crd in load_crds(REPO / "crds"):
        version = next(v for v in crd["spec"]["versions"] if v.get("storage", True))
        schemas[crd["spec"]["names"]["kind"]] = version["schema"]["openAPIV3Schema"]
    return schemas


SCHEMAS = _crd_schemas()
KINDS = sorted(SCHEMAS)


def to_json_schema(schema: dict) -> dict:
    """The oracle's form of a CRD schema (see the module docstring)."""
    converted = {}
    for key, value in schema.items():
        if key.startswith("x-") or key == "nullable":
            continue
        if key == "properties":
            value = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            value = to_json_schema(value)
        elif key == "anyOf":
            value = [to_json_schema(branch) for branch in value]
        elif key == "pattern":
            assert value.count("$") == 1 and value.endswith("$") and not value.endswith("\\$"), value
            value = "(?a)" + value[:-1] + r"\Z"
        converted[key] = value
    if schema.get("nullable") and "type" in converted:
        converted["type"] = [converted["type"], "null"]
    # structural schemas: an object that lists its properties is closed unless it says otherwise
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        converted["additionalProperties"] = False
    return converted


DATE_TIME_CHECKER = FormatChecker(formats=())
DATE_TIME_CHECKER.checks("date-time")(is_date_time)
ORACLES = {
    kind: Draft202012Validator(to_json_schema(schema), format_checker=DATE_TIME_CHECKER)
    for kind, schema in SCHEMAS.items()
}
VALIDATORS = {kind: SchemaValidator(schema) for kind, schema in SCHEMAS.items()}


def field_path(parts) -> str:
    """jsonschema's path parts in kidx's ``a.b[0].c`` form."""
    text = ""
    for part in parts:
        text = f"{text}[{part}]" if isinstance(part, int) else (f"{text}.{part}" if text else part)
    return text


def oracle_paths(kind: str, document) -> set[str]:
    """The fields jsonschema blames, named the way kidx names them: a missing required field
    and an unknown field are blamed on themselves, not on the object that holds them."""
    paths = set()
    for error in ORACLES[kind].iter_errors(document):
        base = list(error.absolute_path)
        if error.validator == "required":
            match = re.match(r"^'(.*)' is a required property$", error.message)
            assert match, error.message
            paths.add(field_path([*base, match.group(1)]))
        elif error.validator == "additionalProperties" and error.validator_value is False:
            known = error.schema.get("properties", {})
            paths.update(field_path([*base, key]) for key in error.instance if key not in known)
        else:
            paths.add(field_path(base))
    return paths


def kidx_paths(kind: str, document) -> set[str]:
    return {path for path, _ in VALIDATORS[kind].errors(document)}


PREDICATES = {kind: compile_predicate(schema) for kind, schema in SCHEMAS.items()}


def assert_agree(kind: str, document) -> bool:
    """Both validators agree on ``document``; returns whether it is valid."""
    expected = oracle_paths(kind, document)
    found = kidx_paths(kind, document)
    shown = json.dumps(document, default=str)[:600]
    assert bool(found) == bool(expected), f"{kind}: kidx {sorted(found)} vs jsonschema {sorted(expected)}: {shown}"
    assert expected <= found, f"{kind}: jsonschema blames {sorted(expected - found)} too: {shown}"
    # the fast path accepts exactly what kidx's jsonschema (the validator of record) accepts
    of_record = VALIDATORS[kind].jsonschema_errors(document)
    assert PREDICATES[kind](document) == (not of_record), f"{kind}: the fast path disagrees: {of_record} {shown}"
    assert {path for path, _ in of_record} == found or not PREDICATES[kind](document)
    return not found


# --- valid documents ---------------------------------------------------------------------


def generated_runs(count: int, seed: int = 7) -> list[dict]:
    """Runs of every shape the schema allows: memory runs, failures, null measurements."""
    generator = random.Random(seed)
    runs = []
    for index in range(count):
        run = copy.deepcopy(SEED["run"])
        run["metadata"]["name"] = f"generated-{index:04d}"
        spec = run["spec"]
        spec["status"] = generator.choice(["passed", "failed", "error", "skipped"])
        if spec["status"] != "passed":
            spec["failure"] = {"reason": "OutOfMemory", "message": "CUDA out of memory"}
        if generator.random() < 0.3:
            del spec["timing"]
            spec["memory"] = {
                "peakAllocatedBytes": {"median": generator.randrange(2**40), "max": 2**63 - 1},
                "primaryStatistic": "median",
            }
        else:
            spec["timing"]["latencyNs"] = {"median": generator.uniform(0, 1e9), "min": 0, "stddev": 1.25}
        spec["measurements"] = [
            {"metric": "latency", "statistic": f"p{q}", "unit": generator.choice(["ns", "ms", "ratio"]),
             "value": None if generator.random() < 0.2 else generator.uniform(0, 1e6)}
            for q in range(generator.randrange(4))
        ]
        spec["sourceNative"]["metrics"] = {"ms_50": generator.random(), "missing": None}
        spec["sourceNative"]["anything"] = {"kept": [1, "two", None, {"three": 3.5}]}
        spec["observedAt"] = f"2025-0{generator.randrange(1, 10)}-1{generator.randrange(10)}T01:02:03+02:00"
        runs.append(run)
    return runs


WORKLOAD = {
    "apiVersion": API,
    "kind": "Workload",
    "metadata": {"name": "llama4-rope-hidden8192", "labels": {"family": "liger_kernel_bench"}},
    "spec": {
        "operation": "llama4_rope",
        "family": "liger_kernel_bench",
        "parameters": {"hidden": 8192, "q_heads": 32, "scale": 0.5, "mode": "backward", "fused": True},
        "dtype": "bf16",
        "key": "hidden8192-bf16",
    },
}
IMPLEMENTATION = {
    "apiVersion": API,
    "kind": "Implementation",
    "metadata": {"name": "liger-llama4-rope", "annotations": {"note": "any text"}},
    "spec": {"library": "liger-kernel", "operation": "llama4_rope", "backend": "triton", "version": "0.6.1"},
}


PROTOCOL = {
    "apiVersion": API,
    "kind": "BenchmarkProtocol",
    "metadata": {"name": "do-bench", "title": "do_bench", "labels": {"harness": "triton"}},
    "spec": {
        "harness": {"name": "triton.testing.do_bench", "repository": "https://github.com/triton-lang/triton",
                    "version": "3.1.0", "script": "bench.py"},
        "measurement": {"metric": "latency", "timer": "cuda_events", "primaryStatistic": "median",
                        "quantiles": [0.5, 0.2, 0.8, 0, 1], "warmupIterations": 0, "repetitions": 1,
                        "method": "median of 100 calls"},
        "comparability": {"family": "triton", "notes": "same GPU only"},
    },
}
ENVIRONMENT = {
    "apiVersion": API,
    "kind": "ExecutionEnvironment",
    "metadata": {"name": "mi300x"},
    "spec": {
        "hardware": {"vendor": "amd", "product": "AMD Instinct MI300X", "formFactor": "OAM",
                     "architecture": "gfx942", "count": 1, "memoryBytes": 0},
        "software": {"rocm": "6.2", "torch": "2.5.1"},
    },
}


def valid_documents() -> list[tuple[str, dict]]:
    documents = [(manifest["kind"], manifest) for manifest in SEED.values()]
    documents += [("Workload", WORKLOAD), ("Implementation", IMPLEMENTATION)]
    documents += [("BenchmarkProtocol", PROTOCOL), ("ExecutionEnvironment", ENVIRONMENT)]
    documents += [("BenchmarkRun", run) for run in generated_runs(40)]
    return documents


@pytest.mark.parametrize("kind, document", valid_documents(), ids=lambda v: v if isinstance(v, str) else "")
def test_valid_documents_are_valid_to_both(kind, document):
    assert ORACLES[kind].is_valid(document)
    assert assert_agree(kind, document)


def test_every_kind_is_covered():
    assert KINDS == ["BenchmarkProtocol", "BenchmarkRun", "ExecutionEnvironment", "Implementation", "Workload"]
    assert {kind for kind, _ in valid_documents()} == set(KINDS)


# --- mutations ---------------------------------------------------------------------------

# values of every JSON type; no integral floats (see the module docstring), no trailing "\n"
POOL = [
    None, True, False, 0, 1, -1, 7, 2**63 - 1, -(2**63), 0.5, -0.25, 1.5e-300, 3.75, "", "x", "passed",
    "median", "ns", "Passed", "sha256:" + "0" * 64, "sha256:" + "0" * 63, "2025-08-07T21:42:15Z", "not a date",
    "2025-08-07T21:42:15.5-07:30", "٢٠٢٥-08-07T21:42:15Z", "2025-13-99T99:99:99Z", "2025-02-29T00:00:00Z",
    "2024-02-29T23:59:60Z", "2024-02-29T23:58:60Z", "2025-08-07T21:42:15+24:00", "2025-08-07T21:42:15z",
    "UPPER", "a b", "a/b", "-lead", "läuft", "x" * 300, [], [1], ["a", None], [{}], {}, {"a": 1}, {"name": "x"},
    {"name": "UPPER"}, {"source": "s"}, {"metric": "m", "statistic": "s", "unit": "ns", "value": 1},
]


def sites(schema: dict, value, path: tuple = ()):
    """Every (path, schema, value) of a document, absent optional properties included."""
    yield path, schema, value
    if type(value) is dict:
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                yield from sites(properties[key], item, (*path, key))
            elif isinstance(additional, dict):
                yield from sites(additional, item, (*path, key))
            else:
                yield (*path, key), {}, item
        for key, sub in properties.items():
            if key not in value:
                yield (*path, key), sub, MISSING
    elif type(value) is list and "items" in schema:
        for index, item in enumerate(value):
            yield from sites(schema["items"], item, (*path, index))


def _types(schema: dict) -> set[str]:
    if "anyOf" in schema:
        return set().union(*(_types(branch) for branch in schema["anyOf"]))
    return {schema["type"]} if "type" in schema else set()


def candidate_values(schema: dict, value, generator: random.Random) -> list:
    """Values likely to break ``schema`` (and some that satisfy it)."""
    values = list(POOL)
    if "enum" in schema:
        first = schema["enum"][0]
        values += [first.upper(), first + "x", " " + first, *schema["enum"]]
    if "pattern" in schema:
        values += ["", "sha256:" + "A" * 64, "sha256:" + "a" * 65, "md5:" + "a" * 64, "a_b", "a.b", "0", "abc-"]
    for bound in ("minimum", "maximum"):
        if bound in schema:
            limit = schema[bound]
            values += [limit - 1, limit + 1, limit, limit - 0.5, limit + 0.5]
    if "minLength" in schema:
        values += ["", "y" * schema["minLength"]]
    if "maxLength" in schema:
        values += ["z" * schema["maxLength"], "z" * (schema["maxLength"] + 1)]
    if isinstance(value, list):
        values += [value + [generator.choice(POOL)], value[:-1]]
    if isinstance(value, dict):
        values += [{**value, "unknownField": generator.choice(POOL)}]
        if value:
            key = generator.choice(sorted(value))
            values += [{k: v for k, v in value.items() if k != key}, {**value, key: generator.choice(POOL)}]
    if "integer" in _types(schema):
        values = [v for v in values if not (type(v) is float and v.is_integer())]
    return values


def _set(document, path: tuple, value) -> None:
    node = document
    for part in path[:-1]:
        node = node[part]
    if value is MISSING:
        del node[path[-1]]
    else:
        node[path[-1]] = value


def mutate(kind: str, document: dict, generator: random.Random, count: int) -> dict:
    """``count`` random edits: drop a field, retype it, null it, add unknown fields, break an
    enum, a pattern, a bound or a length, or fill in an absent optional field badly."""
    mutated = copy.deepcopy(document)
    for _ in range(count):
        path, schema, value = generator.choice(list(sites(SCHEMAS[kind], mutated)))
        if not path:
            mutated = {**mutated, "unexpected": 1} if generator.random() < 0.5 else mutated
            continue
        if value is not MISSING and generator.random() < 0.15:
            _set(mutated, path, MISSING)  # drop (a required field, or an optional one)
            continue
        replacement = generator.choice(candidate_values(schema, None if value is MISSING else value, generator))
        _set(mutated, path, copy.deepcopy(replacement))
    return mutated


@pytest.mark.slow
def test_random_mutations_agree():
    generator = random.Random(20250807)
    documents = valid_documents()
    seen_valid = seen_invalid = 0
    for trial in range(4000):
        kind, document = documents[trial % len(documents)]
        mutated = mutate(kind, document, generator, count=1 + trial % 3)
        # (today kidx blames exactly the fields jsonschema blames, no more)
        assert kidx_paths(kind, mutated) == oracle_paths(kind, mutated)
        if assert_agree(kind, mutated):
            seen_valid += 1
        else:
            seen_invalid += 1
    # both outcomes were exercised, mostly invalid ones
    assert seen_invalid > 2500 and seen_valid > 100, (seen_valid, seen_invalid)


def test_several_errors_are_all_reported():
    run = copy.deepcopy(SEED["run"])
    run["spec"]["status"] = "great"
    run["spec"]["measurements"][1]["unit"] = 5
    del run["spec"]["measurements"][0]["value"]
    run["spec"]["timing"]["latencyNs"]["median"] = -3
    run["spec"]["protocolDigest"] = "sha256:xyz"
    run["metadata"]["extra"] = True
    expected = {
        "spec.status", "spec.measurements[1].unit", "spec.measurements[0].value",
        "spec.timing.latencyNs.median", "spec.protocolDigest", "metadata.extra",
    }
    assert oracle_paths("BenchmarkRun", run) == expected
    assert kidx_paths("BenchmarkRun", run) == expected


# --- documents generated from the schemas (hypothesis) -----------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5) | st.floats(
    allow_nan=False, allow_infinity=False
)
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
KEYS = st.text(st.characters(codec="utf-8", exclude_characters="\n"), min_size=1, max_size=10)


def instances(schema: dict):
    """A strategy for values that satisfy a CRD schema (kidx's reading of it)."""
    if "anyOf" in schema:
        base = st.one_of([instances(branch) for branch in schema["anyOf"]])
    else:
        base = _typed_instances(schema)
    return st.none() | base if schema.get("nullable") else base


def _typed_instances(schema: dict):
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        fixed = st.fixed_dictionaries(
            {name: instances(sub) for name, sub in properties.items() if name in required},
            optional={name: instances(sub) for name, sub in properties.items() if name not in required},
        )
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            extra = st.dictionaries(KEYS.filter(lambda k: k not in properties), instances(additional), max_size=3)
        elif schema.get("x-kubernetes-preserve-unknown-fields"):
            extra = st.dictionaries(KEYS.filter(lambda k: k not in properties), JSON_VALUES, max_size=2)
        else:
            return fixed
        return st.builds(lambda a, b: {**b, **a}, fixed, extra)
    if kind == "array":
        return st.lists(instances(schema.get("items", {})), max_size=3)
    if kind == "string":
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        low, high = schema.get("minLength", 0), schema.get("maxLength", 30)
        if "pattern" in schema:
            if schema.get("format") == "date-time":
                return DATE_TIMES
            pattern = "(?a)" + schema["pattern"][:-1] + r"\Z"
            return st.from_regex(pattern, fullmatch=True).filter(lambda s: low <= len(s) <= high)
        return st.text(min_size=low, max_size=high)
    if kind == "integer":
        return st.integers(schema.get("minimum", -(2**63)), schema.get("maximum", 2**63 - 1))
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.integers(low if low is not None else -(2**53), high if high is not None else 2**53) | st.floats(
            low, high, allow_nan=False, allow_infinity=False
        )
    if kind == "boolean":
        return st.booleans()
    return JSON_VALUES


DATE_TIMES = st.builds(
    lambda moment, fraction, zone: f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}{fraction}{zone}",
    st.datetimes(),
    st.sampled_from(["", ".5", ".123456789"]),
    st.sampled_from(["Z", "+00:00", "-07:30", "+14:00"]),
)
DOCUMENTS = {kind: instances(schema) for kind, schema in SCHEMAS.items()}


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_generated_documents_and_their_mutations_agree(kind, data):
    """The property: on documents hypothesis generates from each CRD and on mutations of
    them, the fast path accepts exactly what jsonschema (kidx's validator of record) accepts,
    and both agree with the stock oracle (see ``assert_agree``)."""
    document = data.draw(DOCUMENTS[kind], label="document")
    assert ORACLES[kind].is_valid(document), "the generator made an invalid document"
    assert assert_agree(kind, document)
    seed = data.draw(st.integers(0, 2**32), label="mutation seed")
    mutated = mutate(kind, document, random.Random(seed), count=data.draw(st.integers(1, 3), label="edits"))
    assert_agree(kind, mutated)


# --- the deliberate differences ----------------------------------------------------------


@pytest.mark.parametrize(
    "path", [("spec", "memory", "peakAllocatedBytes", "median"), ("metadata", "generation")], ids=".".join
)
@pytest.mark.parametrize("number", [5.0, 0.0, 1e20])
def test_integral_float_is_not_an_integer_to_kidx(path, number):
    run = copy.deepcopy(SEED["run"])
    node = run
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = number
    assert ORACLES["BenchmarkRun"].is_valid(run)  # JSON Schema: 5.0 is an integer
    assert VALIDATORS["BenchmarkRun"].errors(run) == [
        (".".join(path), f"Invalid value: {number!r} is not of type 'integer'")
    ]
    node[path[-1]] = int(number)
    assert VALIDATORS["BenchmarkRun"].errors(run) == []


@pytest.mark.parametrize(
    "path, value",
    [
        (("spec", "protocolDigest"), "sha256:" + "a" * 64 + "\n"),
        (("spec", "observedAt"), "2025-08-07T21:42:15.000Z\n"),
        (("metadata", "labels", "liger_version"), "0.6.1\n"),
    ],
    ids=["digest", "timestamp", "label-value"],
)
def test_pattern_dollar_does_not_match_before_a_final_newline(path, value):
    run = copy.deepcopy(SEED["run"])
    node = run
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    stock = Draft202012Validator(SCHEMAS["BenchmarkRun"])  # Python's re: "$" matches before "\n"
    assert stock.is_valid(run)
    assert not ORACLES["BenchmarkRun"].is_valid(run)
    (error,) = VALIDATORS["BenchmarkRun"].errors(run)
    assert error[0] == ".".join(path) and "does not match '^" in error[1]
    node[path[-1]] = value[:-1]
    assert VALIDATORS["BenchmarkRun"].errors(run) == []


# --- the compiler refuses what it does not implement -------------------------------------

UNSUPPORTED = [
    "const", "oneOf", "allOf", "not", "$ref", "$defs", "patternProperties", "propertyNames",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "minProperties", "maxProperties",
    "if", "then", "else", "dependentRequired", "dependentSchemas", "prefixItems", "contains",
    "unevaluatedProperties", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-validations", "typo",
]
PLACES = {
    "top": lambda extra: {"type": "object", **extra},
    "property": lambda extra: {"type": "object", "properties": {"a": {"type": "string", **extra}}},
    "items": lambda extra: {"type": "array", "items": {"type": "integer", **extra}},
    "additionalProperties": lambda extra: {"type": "object", "additionalProperties": {"type": "string", **extra}},
    "anyOf": lambda extra: {"anyOf": [{"type": "string"}, {"type": "integer", **extra}]},
    "deep": lambda extra: {"properties": {"a": {"properties": {"b": {"items": {**extra}}}}}},
}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("keyword", UNSUPPORTED)
def test_compile_predicate_refuses_unknown_keywords(keyword, place):
    assert keyword not in KNOWN_KEYWORDS
    with pytest.raises(SchemaCompileError, match=re.escape(keyword)):
        compile_predicate(PLACES[place]({keyword: 1}))


@pytest.mark.parametrize("type_name", ["nul", "int", "float", "dict", ["string", "null"], 1, True])
def test_compile_predicate_refuses_unknown_types(type_name):
    with pytest.raises(SchemaCompileError, match="unsupported schema type"):
        compile_predicate({"type": type_name})


def test_every_keyword_the_crds_use_is_known_and_compiles():
    used: set[str] = set()

    def walk(schema):
        used.update(schema)
        for sub in schema.get("properties", {}).values():
            walk(sub)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                walk(schema[key])
        for branch in schema.get("anyOf", ()):
            walk(branch)

    for schema in SCHEMAS.values():
        walk(schema)
        compile_predicate(schema)
    assert used <= KNOWN_KEYWORDS

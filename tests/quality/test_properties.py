"""Property tests: selectors, JSONPath and canonical JSON hold their laws on generated
input, and the manifest reader survives arbitrary bytes (a fuzz target)."""

from __future__ import annotations

import io
import json
import math
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from query.test_label_selector import keys, selector_texts, values

from kidx.errors import KidxError, Problem, UsageError
from kidx.identity.canonical import canonical_json, digest_of
from kidx.jsonpath import JSONPath, JSONPathError, JSONPathTemplate
from kidx.manifests.reader import ReadResult, read_sources, read_text
from kidx.output.serialize import to_json, to_yaml
from kidx.query.field_selector import FieldSelector, escape_value
from kidx.query.label_selector import LabelSelector
from kidx.store.catalog import CatalogQuery, Change, Entry
from kidx.store.sqlite_catalog import SQLiteCatalog

SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- label selectors: the catalog's SQL answers what the selector's own matcher answers --

label_sets = st.lists(st.dictionaries(keys, values, max_size=4), min_size=1, max_size=6)


@SLOW
@given(selector_texts, label_sets)
def test_catalog_selects_exactly_what_the_selector_matches(text, label_sets):
    selector = LabelSelector.parse(text)
    catalog = SQLiteCatalog(None)
    changes = [
        Change(Entry("Workload", f"w{index}", f"sha256:{index:064x}", None, labels, {}, "t", 1), [])
        for index, labels in enumerate(label_sets)
    ]
    catalog.begin_write()
    catalog.put_many(changes, "t")
    catalog.commit()
    found = [entry.name for entry in catalog.list(CatalogQuery(kind="Workload", labels=tuple(selector.requirements)))]
    expected = sorted(change.entry.name for change in changes if selector.matches(change.entry.labels))
    assert found == expected
    catalog.close()


@given(st.text(max_size=40))
def test_any_label_selector_text_parses_or_is_a_usage_error(text):
    try:
        LabelSelector.parse(text)
    except UsageError:
        pass


# --- field selectors -----------------------------------------------------------------------

plain_values = st.text(min_size=1, max_size=20).filter(lambda v: v == v.strip() and v.isprintable())


@given(plain_values, plain_values)
def test_field_selector_equality_on_any_escaped_value(value, other):
    manifest = {"metadata": {"name": value}}
    assert FieldSelector.parse(f"metadata.name={escape_value(value)}").matches(manifest)
    assert not FieldSelector.parse(f"metadata.name!={escape_value(value)}").matches(manifest)
    assert FieldSelector.parse(f"metadata.name={escape_value(other)}").matches(manifest) is (value == other)


@given(st.text(max_size=40))
def test_any_field_selector_text_parses_or_is_a_usage_error(text):
    try:
        FieldSelector.parse(text)
    except UsageError:
        pass


# --- JSONPath --------------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
safe_keys = st.text(alphabet=st.characters(blacklist_characters="'\\\"", blacklist_categories=["Cs"]), max_size=6)


@st.composite
def data_and_route(draw):
    """Nested data and a route of keys and indexes that exists in it."""
    route: list = []
    leaf = draw(json_values)
    data = leaf
    for _ in range(draw(st.integers(min_value=0, max_value=5))):
        if draw(st.booleans()):
            key = draw(safe_keys)
            data = {**draw(st.dictionaries(safe_keys, json_scalars, max_size=2)), key: data}
            route.insert(0, key)
        else:
            before = draw(st.lists(json_scalars, max_size=2))
            data = [*before, data]
            route.insert(0, len(before))
    return data, route, leaf


@given(data_and_route())
def test_a_path_of_keys_and_indexes_finds_the_value_it_names(case):
    data, route, leaf = case
    path = "".join(f"['{step}']" if isinstance(step, str) else f"[{step}]" for step in route)
    assert JSONPath.parse(path).find(data) == [leaf]


@given(st.text(max_size=60))
def test_any_template_parses_or_is_a_jsonpath_error_and_renders(text):
    try:
        template = JSONPathTemplate.parse(text)
    except JSONPathError:
        return
    rendered = template.render({"items": [{"metadata": {"name": "a"}, "spec": {"n": 1}}], "kind": "List"})
    assert isinstance(rendered, str)


@given(st.text(alphabet="{}[]()?@.$*!=~&|<>'\"\\:,range end 0-9ab", max_size=80))
def test_template_punctuation_soup_never_escapes_the_error_type(text):
    try:
        JSONPathTemplate.parse(text).render({"a": [{"b": "x"}]})
    except JSONPathError:
        pass


# --- canonical JSON: JSON <-> YAML <-> digest ----------------------------------------------

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
specs = st.dictionaries(
    st.text(max_size=8),
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), finite_floats,
                  st.text(max_size=12)),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
        max_leaves=15,
    ),
    max_size=5,
)


def _manifest(spec) -> dict:
    return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"}, "spec": spec}


def _read(text: str, source: str) -> dict:
    result = ReadResult()
    read_text(text, source, result, is_json=source.endswith(".json"))
    assert result.problems == []
    (document,) = result.documents
    return document.body


def _same(a, b) -> bool:
    """Equal as JSON data, with -0.0 and 0.0 told apart (the canonical bytes differ)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@SLOW
@given(specs)
def test_canonical_json_reads_back_to_the_same_value(spec):
    data = canonical_json(spec)
    assert _same(json.loads(data), spec)
    assert canonical_json(json.loads(data)) == data


@SLOW
@given(specs)
def test_json_and_yaml_of_a_manifest_give_the_same_digest(spec):
    manifest = _manifest(spec)
    digest = digest_of(manifest)
    from_json = _read(to_json(manifest), "m.json")
    from_yaml = _read(to_yaml(manifest), "m.yaml")
    assert _same(from_json["spec"], spec) and _same(from_yaml["spec"], spec)
    assert digest_of(from_json) == digest_of(from_yaml) == digest
    # and once more through the other format
    assert digest_of(_read(to_yaml(from_json), "again.yaml")) == digest
    assert digest_of(_read(to_json(from_yaml), "again.json")) == digest


# --- fuzz: the manifest reader takes any bytes ----------------------------------------------

YAMLISH = st.text(alphabet="abc:-{}[],#&*!|>'\"%@`?~ \n\t0.1eE+\\x\u00e9\ufeff", max_size=200)


def _read_bytes(data: bytes) -> ReadResult:
    started = time.monotonic()
    result = read_sources(["-"], stdin=io.BytesIO(data))
    assert time.monotonic() - started < 5, "the reader must never hang"
    assert all(isinstance(problem, Problem) for problem in result.problems)
    assert result.problems or result.documents
    return result


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_reader_takes_arbitrary_bytes(data):
    try:
        _read_bytes(data)
    except KidxError:
        pass  # kidx's own error types only: no other exception escapes


@settings(max_examples=300, deadline=None)
@given(YAMLISH)
def test_reader_takes_arbitrary_yaml_like_text(text):
    try:
        _read_bytes(text.encode("utf-8"))
    except KidxError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3)))
def test_reader_takes_arbitrary_json_values(value):
    try:
        _read_bytes(json.dumps(value).encode("utf-8"))
    except KidxError:
        pass


def test_reader_refuses_pathological_nesting_quickly():
    for text in ("[" * 100_000, "{a: " * 50_000, "- " * 50_000 + "x", '{"a":' * 100_000, "&a [" * 10_000):
        result = _read_bytes(text.encode())
        assert result.documents == [] and result.problems, text[:10]

"""Field selectors: kubectl's grammar and messages (§2), kidx's selectable fields."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kidx.errors import UsageError
from kidx.query.field_selector import (
    FieldRequirement,
    FieldSelector,
    FieldSelectorError,
    escape_value,
    split_path,
    unescape_value,
)

PARSE_CASES = [
    # input, requirements (field, operator, value), canonical string
    ("", [], ""),
    ("   ", [], ""),
    (",", [], ""),
    ("metadata.name=foo", [("metadata.name", "=", "foo")], "metadata.name=foo"),
    ("metadata.name==foo", [("metadata.name", "=", "foo")], "metadata.name=foo"),
    ("metadata.name!=foo", [("metadata.name", "!=", "foo")], "metadata.name!=foo"),
    ("metadata.name=", [("metadata.name", "=", "")], "metadata.name="),
    ("metadata.title=a b", [("metadata.title", "=", "a b")], "metadata.title=a b"),
    ("spec.status=ok", [("spec.status", "=", "ok")], "spec.status=ok"),
    (
        "spec.sourceNative.benchmark=gemm_1",
        [("spec.sourceNative.benchmark", "=", "gemm_1")],
        "spec.sourceNative.benchmark=gemm_1",
    ),
    (
        "spec.b=1,metadata.name=x,,spec.a!=2",
        [("metadata.name", "=", "x"), ("spec.a", "!=", "2"), ("spec.b", "=", "1")],
        "metadata.name=x,spec.a!=2,spec.b=1",
    ),
    ("metadata.name=a\\,b", [("metadata.name", "=", "a,b")], "metadata.name=a\\,b"),
    ("metadata.name=a\\=b", [("metadata.name", "=", "a=b")], "metadata.name=a\\=b"),
    ("metadata.name=a\\\\b", [("metadata.name", "=", "a\\b")], "metadata.name=a\\\\b"),
    ("metadata.name=!x", [("metadata.name", "=", "!x")], "metadata.name=!x"),
    ("spec.x=1,spec.x=2", [("spec.x", "=", "1"), ("spec.x", "=", "2")], "spec.x=1,spec.x=2"),
    (" metadata.name=x ", [("metadata.name", "=", "x")], "metadata.name=x"),
]


@pytest.mark.parametrize(("text", "requirements", "canonical"), PARSE_CASES)
def test_parse(text, requirements, canonical):
    selector = FieldSelector.parse(text)
    assert [(r.field, r.operator, r.value) for r in selector.requirements] == requirements
    assert str(selector) == canonical
    assert selector.is_empty == (not requirements)
    assert FieldSelector.parse(canonical) == selector


ERROR_CASES = [
    ("foo", "invalid selector: 'foo'; can't understand 'foo'"),
    ("metadata.name=x,foo", "invalid selector: 'metadata.name=x,foo'; can't understand 'foo'"),
    ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
    ("metadata.name===b", "invalid field selector: unescaped character in value: 61"),
    ("metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x"),
    ("metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
    ("metadata.name=a\\ b", "invalid field selector: invalid escape sequence: \\ "),
    ("spec=x", "field label not supported: spec"),
    ("spec.=x", "field label not supported: spec."),
    ("spec.a..b=x", "field label not supported: spec.a..b"),
    ("spec.a-b=x", "field label not supported: spec.a-b"),
    ("spec.0=x", "field label not supported: spec.0"),
    ("=x", "field label not supported: "),
    ("metadata.name =x", "field label not supported: metadata.name "),
    ("!metadata.name=x", "field label not supported: !metadata.name"),
    # terms are sorted first; every term's syntax is checked before any field name
    ("b=1,a=2", "field label not supported: a"),
    ("zz=a\\x,bad=1", "invalid field selector: invalid escape sequence: \\x"),
    ("zz,a=b=c", "invalid field selector: unescaped character in value: 61"),
]


@pytest.mark.parametrize(("text", "message"), ERROR_CASES)
def test_error_message(text, message):
    with pytest.raises(FieldSelectorError) as caught:
        FieldSelector.parse(text)
    assert str(caught.value) == message
    assert isinstance(caught.value, UsageError)


def test_unescaped_comma_inside_a_value_is_an_error():
    # a raw ',' always splits terms, so only unescape_value itself can meet one
    with pytest.raises(FieldSelectorError, match=r"^invalid field selector: unescaped character in value: 44$"):
        unescape_value("a,b")


RUN = {
    "apiVersion": "kernelindex.dev/v1alpha1",
    "kind": "BenchmarkRun",
    "metadata": {"name": "run-1", "title": "First run", "labels": {"app": "x"}},
    "spec": {
        "status": "succeeded",
        "sourceNative": {"benchmark": "gemm", "repeat": 3, "warm": True, "ratio": 0.5},
        "empty": "",
        "nothing": None,
        "list": [1, 2],
        "map": {"a": "b"},
        "big": 1e20,
        "whole": 2.0,
        "off": False,
    },
}

MATCH_CASES = [
    ("metadata.name=run-1", True),
    ("metadata.name==run-1", True),
    ("metadata.name!=run-1", False),
    ("metadata.name=run-2", False),
    ("metadata.name!=run-2", True),
    ("metadata.title=First run", True),
    ("spec.status=succeeded", True),
    ("spec.sourceNative.benchmark=gemm", True),
    ("spec.sourceNative.benchmark=gemm,spec.status!=failed", True),
    ("spec.sourceNative.benchmark=gemm,spec.status=failed", False),
    ("spec.sourceNative.repeat=3", True),
    ("spec.sourceNative.repeat=3.0", False),
    ("spec.sourceNative.warm=true", True),
    ("spec.sourceNative.warm=True", False),
    ("spec.off=false", True),
    ("spec.sourceNative.ratio=0.5", True),
    ("spec.whole=2.0", True),
    ("spec.big=1e+20", True),
    # absent, null and unreachable fields read as ""
    ("spec.missing=", True),
    ("spec.missing!=", False),
    ("spec.missing!=x", True),
    ("spec.missing=x", False),
    ("spec.nothing=", True),
    ("spec.empty=", True),
    ("spec.status.deeper=", True),
    ("spec.list.item=", True),
    # mappings and lists equal nothing
    ("spec.map=", False),
    ("spec.map!=", True),
    ("spec.list=", False),
    ("spec.sourceNative!=x", True),
    ("", True),
    ("spec.x=1,spec.x=2", False),
]


@pytest.mark.parametrize(("text", "expected"), MATCH_CASES)
def test_matches(text, expected):
    selector = FieldSelector.parse(text)
    assert selector.matches(RUN) is expected
    assert all(r.matches(RUN) for r in selector.requirements) is expected


def test_escaped_values_match_literally():
    obj = {"metadata": {"name": "x"}, "spec": {"expr": "a=b,c\\d"}}
    assert FieldSelector.parse("spec.expr=a\\=b\\,c\\\\d").matches(obj)


def test_missing_spec_and_metadata():
    assert FieldSelector.parse("spec.a=").matches({})
    assert FieldSelector.parse("metadata.title!=x").matches({"metadata": {"name": "n"}})


@pytest.mark.parametrize(
    ("field", "segments"),
    [("metadata.name", ["metadata", "name"]), ("metadata.title", ["metadata", "title"]),
     ("spec.a", ["spec", "a"]), ("spec._a1.B_2", ["spec", "_a1", "B_2"])],
)
def test_split_path(field, segments):
    assert split_path(field) == segments


@pytest.mark.parametrize("field", ["metadata", "spec", "kind", "spec.a b", "spec.é"])
def test_split_path_refuses(field):
    with pytest.raises(FieldSelectorError, match=f"^field label not supported: {field}$"):
        split_path(field)


def test_requirement_built_directly():
    requirement = FieldRequirement("spec.status", "!=", "ok")
    assert requirement.matches({"spec": {"status": "bad"}})
    assert str(requirement) == "spec.status!=ok"
    with pytest.raises(ValueError):
        FieldRequirement("spec.status", "==", "ok")
    with pytest.raises(FieldSelectorError):
        FieldRequirement("spec.a b", "=", "ok")


@pytest.mark.parametrize(("text", "message"), [
    ("metadata.namespace=x", "field label not supported: metadata.namespace"),
    ("status.phase=x", "field label not supported: status.phase"),
    ("metadata.labels.app=x", "field label not supported: metadata.labels.app"),
    ("metadata.labels=x", "field label not supported: metadata.labels"),
    ("spec.sourcenative.benchmark=x",
     "field label not supported: spec.sourcenative.benchmark (did you mean spec.sourceNative.benchmark?)"),
    ("spec.STATUS=x", "field label not supported: spec.STATUS (did you mean spec.status?)"),
    ("spec.timing.latencyNs.medain=1",
     "field label not supported: spec.timing.latencyNs.medain (did you mean spec.timing.latencyNs.median?)"),
    ("spec.median=1", "field label not supported: spec.median (did you mean spec.timing.latencyNs.median?)"),
    ("workload.spec.parameter.seq=1",
     "field label not supported: workload.spec.parameter.seq (did you mean workload.spec.parameters.seq?)"),
    ("spec.timing.latencyNs.average=1", "field label not supported: spec.timing.latencyNs.average"),
    ("spec.status=passed,spec.nope=1", "field label not supported: spec.nope"),
])
def test_fields_a_kind_does_not_have(text, message):
    from kidx.kinds.registry import registry
    from kidx.query.field_selector import check_fields

    with pytest.raises(FieldSelectorError) as caught:
        check_fields(FieldSelector.parse(text), registry(), [registry().resolve("runs")])
    assert str(caught.value) == message


@pytest.mark.parametrize(("kind", "path"), [
    ("runs", "metadata.name"), ("runs", "metadata.title"), ("runs", "spec.status"),
    ("runs", "spec.timing.latencyNs.median"),
    ("runs", "spec.sourceNative.benchmark"), ("runs", "spec.sourceNative.any.key.below"),  # free-form
    ("workloads", "spec.parameters.seq"), ("workloads", "spec.parameters.anything"),  # a map of values
    ("environments", "spec.hardware.product"),
])
def test_fields_a_kind_has(kind, path):
    from kidx.kinds.field_paths import resolve_field_path
    from kidx.kinds.registry import registry

    found = resolve_field_path(registry(), registry().resolve(kind), path)
    assert found is not None and found.reference is None and ".".join(found.segments) == path


@pytest.mark.parametrize(("path", "kind", "rest"), [
    ("workload.spec.parameters.seq", "Workload", "spec.parameters.seq"),
    ("implementation.spec.library", "Implementation", "spec.library"),
    ("environment.spec.hardware.product", "ExecutionEnvironment", "spec.hardware.product"),
    ("protocol.metadata.name", "BenchmarkProtocol", "metadata.name"),
])
def test_reference_paths_are_checked_in_the_referenced_kind(path, kind, rest):
    from kidx.kinds.field_paths import resolve_field_path
    from kidx.kinds.registry import registry

    found = resolve_field_path(registry(), registry().resolve("runs"), path)
    assert found.reference.target_kind == kind and ".".join(found.segments) == rest
    for wrong in (path + ".deeper", path.replace(".spec.", ".spec.nope.").replace(".metadata.", ".metadata.x")):
        assert resolve_field_path(registry(), registry().resolve("runs"), wrong) is None
    assert resolve_field_path(registry(), registry().resolve("workloads"), path) is None  # workloads refer to nothing


@given(st.text(max_size=20))
def test_escape_round_trips(value):
    assert unescape_value(escape_value(value)) == value
    # a second term keeps the value away from the ends, where the selector is trimmed
    selector = FieldSelector.parse(f"spec.v={escape_value(value)},spec.w=1")
    (parsed,) = [r for r in selector.requirements if r.field == "spec.v"]
    assert parsed.value == value
    assert selector.matches({"spec": {"v": value, "w": 1}})

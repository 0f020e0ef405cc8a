"""--sort-by: kubectl's relaxed paths, its not-found error and missing-first rule (§3.7),
plus descending, multi-key, stable and natural order (§11 item 3)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kidx.errors import UsageError
from kidx.jsonpath import JSONPathError
from kidx.query.sorting import SortError, SortKey, natural_key, parse_sort_keys, sort_objects

_UNSET = object()


def widget(name, replicas=_UNSET, **spec):
    obj = {"kind": "Widget", "metadata": {"name": name}, "spec": dict(spec)}
    if replicas is not _UNSET:
        obj["spec"]["replicas"] = replicas
    return obj


def names(objects) -> list[str]:
    return [o["metadata"]["name"] for o in objects]


ALPHA, BETA = widget("alpha", 3), widget("beta-2", 1)


def test_documented_example_sorts_by_replicas():
    assert names(sort_objects([ALPHA, BETA], ".spec.replicas")) == ["beta-2", "alpha"]


@pytest.mark.parametrize(("spec", "keys"), [
    (".spec.replicas", [SortKey("{.spec.replicas}")]),
    ("{.spec.replicas}", [SortKey("{.spec.replicas}")]),
    ("spec.replicas", [SortKey("{.spec.replicas}")]),
    ("{spec.replicas}", [SortKey("{.spec.replicas}")]),
    ("-.spec.replicas", [SortKey("{.spec.replicas}", descending=True)]),
    ("-{.metadata.name}", [SortKey("{.metadata.name}", descending=True)]),
    ("-.spec.replicas,.metadata.name", [SortKey("{.spec.replicas}", True), SortKey("{.metadata.name}")]),
    (" .a , -b ", [SortKey("{.a}"), SortKey("{.b}", True)]),
    (".spec.ports[0,1].port", [SortKey("{.spec.ports[0,1].port}")]),
    ("", []),
])
def test_parse_sort_keys(spec, keys):
    assert parse_sort_keys(spec) == keys


def test_sort_key_text():
    assert [str(k) for k in parse_sort_keys("-a,.b")] == ["-{.a}", "{.b}"]


@pytest.mark.parametrize(("spec", "message"), [
    ("{.a}{.b}", "unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                 "or '{name1.name2}' or '{.name1.name2}'"),
    ("-", 'invalid sort key "-" in "-", expected a path such as .metadata.name or -.spec.replicas'),
    (".a,,.b", 'invalid sort key "" in ".a,,.b", expected a path such as .metadata.name or -.spec.replicas'),
    (".a[", "error parsing jsonpath {.a[}, unterminated array"),
])
def test_parse_sort_key_errors(spec, message):
    with pytest.raises(UsageError) as caught:
        parse_sort_keys(spec)
    assert str(caught.value) == message


def test_bad_path_is_a_jsonpath_error_and_bad_shape_a_sort_error():
    with pytest.raises(JSONPathError):
        parse_sort_keys(".a[")
    with pytest.raises(SortError):
        parse_sort_keys("{.a}{.b}")


def test_field_found_in_no_object_is_kubectls_error():
    with pytest.raises(SortError) as caught:
        sort_objects([ALPHA, BETA], ".spec.nope")
    assert str(caught.value) == 'couldn\'t find any field with path "{.spec.nope}" in the list of objects'
    with pytest.raises(SortError):
        sort_objects([ALPHA], "-spec.nope")


def test_empty_list_needs_no_field():
    assert sort_objects([], ".spec.nope") == []


def test_each_key_must_be_found_somewhere():
    with pytest.raises(SortError) as caught:
        sort_objects([ALPHA, BETA], ".metadata.name,-.spec.nope")
    assert '"{.spec.nope}"' in str(caught.value)


def test_missing_sorts_first_ascending_and_last_descending():
    objs = [widget("a", 2), widget("b"), widget("c", 1)]
    assert names(sort_objects(objs, ".spec.replicas")) == ["b", "c", "a"]
    assert names(sort_objects(objs, "-.spec.replicas")) == ["a", "c", "b"]


def test_natural_string_order():
    objs = [widget(n) for n in ["web-10", "web-2", "web-1", "web-02", "web", "db-3", "web-1a"]]
    assert names(sort_objects(objs, ".metadata.name")) == [
        "db-3", "web", "web-1", "web-1a", "web-2", "web-02", "web-10"]
    assert names(sort_objects(objs, "-.metadata.name")) == [
        "web-10", "web-02", "web-2", "web-1a", "web-1", "web", "db-3"]


@pytest.mark.parametrize(("smaller", "larger"), [
    ("web-2", "web-10"), ("a1", "a01"), ("a", "a1"), ("a1", "a-"), ("a1b", "ab"), ("0", "00"),
    ("v1.9", "v1.10"), ("2.9", "2.10"), ("B", "a"), ("x9y", "x10a"), ("é1", "é2"),
])
def test_natural_key_pairs(smaller, larger):
    assert natural_key(smaller) < natural_key(larger)


@given(st.text(), st.text())
def test_natural_key_is_equal_only_for_equal_strings(a, b):
    assert (natural_key(a) == natural_key(b)) == (a == b)


def test_numbers_compare_numerically_ints_with_floats():
    objs = [widget("a", 10), widget("b", 9.5), widget("c", -1), widget("d", 100)]
    assert names(sort_objects(objs, ".spec.replicas")) == ["c", "b", "a", "d"]


def test_mixed_types_have_a_fixed_order():
    values = [{"x": 1}, True, "10", None, 2, [1], False, "9", 1.5]
    objs = [widget(f"o{i}", v) for i, v in enumerate(values)] + [widget("missing")]
    expected = ["missing", "o3", "o8", "o4", "o7", "o2", "o6", "o1", "o5", "o0"]
    assert names(sort_objects(objs, ".spec.replicas")) == expected
    shuffled = objs[:]
    random.Random(7).shuffle(shuffled)
    assert names(sort_objects(shuffled, ".spec.replicas")) == expected
    assert names(sort_objects(objs, "-.spec.replicas")) == expected[::-1]


def test_sort_is_stable_in_both_directions():
    objs = [widget("b", 1), widget("a", 2), widget("c", 1), widget("d", 2)]
    assert names(sort_objects(objs, ".spec.replicas")) == ["b", "c", "a", "d"]
    assert names(sort_objects(objs, "-.spec.replicas")) == ["a", "d", "b", "c"]


def test_multi_key_sort():
    objs = [widget("b", 1), widget("a", 2), widget("c", 1), widget("d", 2), widget("e")]
    assert names(sort_objects(objs, "-.spec.replicas,-.metadata.name")) == ["d", "a", "c", "b", "e"]
    assert names(sort_objects(objs, ".spec.replicas,-.metadata.name")) == ["e", "c", "b", "d", "a"]


def test_only_the_first_value_counts():
    objs = [widget("a", ports=[{"port": 443}, {"port": 1}]), widget("b", ports=[{"port": 80}, {"port": 9999}])]
    assert names(sort_objects(objs, ".spec.ports[*].port")) == ["b", "a"]


def test_input_is_not_modified_and_keys_may_be_parsed_beforehand():
    objs = [ALPHA, BETA]
    keys = parse_sort_keys("metadata.name")
    result = sort_objects(objs, parse_sort_keys("-metadata.name"))
    assert names(result) == ["beta-2", "alpha"] and names(objs) == ["alpha", "beta-2"]
    assert sort_objects(objs, keys) == [ALPHA, BETA]


def test_timestamps_sort_chronologically():
    objs = [widget(n, created=t) for n, t in [
        ("x", "2024-05-01T10:00:00Z"), ("y", "2023-12-31T23:59:59Z"), ("z", "2024-05-01T09:00:00Z")]]
    assert names(sort_objects(objs, ".spec.created")) == ["y", "z", "x"]


@given(st.lists(st.one_of(st.none(), st.integers(-5, 5), st.sampled_from(["a", "a2", "a10", "b"])), max_size=12))
def test_descending_is_exactly_the_reverse_of_ascending_for_distinct_values(values):
    distinct = list(dict.fromkeys(values))
    objs = [widget(str(i), v) for i, v in enumerate(distinct)] + [widget("anchor", "zzz")]
    up = names(sort_objects(objs, ".spec.replicas"))
    down = names(sort_objects(objs, "-.spec.replicas"))
    assert down == up[::-1]

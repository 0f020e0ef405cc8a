"""kubectl's own test tables (tests/kubectl_tables/, data ported from kubernetes' tests)
run through kidx: the parsers and evaluators directly, and a representative subset
through the CLI against objects in a temporary store."""

from __future__ import annotations

import copy
import json

import pytest
from kubectl_tables import jsonpath_cases as jp

from kidx.errors import KidxError
from kidx.jsonpath import JSONPathTemplate


def _render(template: str, data) -> str:
    return JSONPathTemplate.parse(template).render(data)


def _error_reason(exc: Exception) -> str:
    text = str(exc)
    for prefix in ("Error executing template: ", ", "):
        if prefix in text:
            return text.split(prefix, 1)[1]
    return text


# ------------------------------------------------------------------------ jsonpath


@pytest.mark.parametrize(("name", "template", "data", "expected", "error", "allow_missing"), jp.CASES,
                         ids=[case[0] for case in jp.CASES])
def test_jsonpath(name, template, data, expected, error, allow_missing):
    if name in jp.DIVERGENCES:
        expected, _reason = jp.DIVERGENCES[name]
        error = False
    if error:
        with pytest.raises(KidxError):
            _render(template, copy.deepcopy(data))
    else:
        assert _render(template, copy.deepcopy(data)) == expected


@pytest.mark.parametrize(("name", "template", "data", "expected"), jp.SORTED_OUTPUT_CASES)
def test_jsonpath_unordered(name, template, data, expected):
    assert sorted(_render(template, data).split()) == sorted(expected.split())


@pytest.mark.parametrize(("name", "template", "data", "message"), jp.ERROR_CASES,
                         ids=[case[0] for case in jp.ERROR_CASES])
def test_jsonpath_errors(name, template, data, message):
    if name in jp.ERROR_DIVERGENCES:
        message, _reason = jp.ERROR_DIVERGENCES[name]
    if message is None:
        assert _render(template, data) == ""
        return
    with pytest.raises(KidxError) as caught:
        _render(template, data)
    assert _error_reason(caught.value) == message


def test_every_jsonpath_divergence_names_a_case_and_a_reason():
    names = {case[0] for case in jp.CASES}
    assert set(jp.DIVERGENCES) <= names
    assert set(jp.ERROR_DIVERGENCES) <= {case[0] for case in jp.ERROR_CASES}
    assert all(reason for _, reason in [*jp.DIVERGENCES.values(), *jp.ERROR_DIVERGENCES.values()])


# ------------------------------------------------------------------ label selectors

from kubectl_tables import label_selector_cases as ls  # noqa: E402

from kidx.query.label_selector import LabelSelector, Requirement, SelectorError  # noqa: E402


def _requirements(selector: LabelSelector) -> list[tuple[str, str, list[str]]]:
    return [(r.key, r.operator, sorted(r.values)) for r in selector.requirements]


@pytest.mark.parametrize("text", ls.GOOD)
def test_label_selector_parses_and_prints_back(text):
    assert str(LabelSelector.parse(text)) == text.replace(" ", "")


@pytest.mark.parametrize("text", ls.BAD)
def test_label_selector_refused(text):
    with pytest.raises(SelectorError):
        LabelSelector.parse(text)


@pytest.mark.parametrize(("first", "second"), ls.SAME)
def test_label_selector_is_deterministic(first, second):
    assert str(LabelSelector.parse(first)) == str(LabelSelector.parse(second))


@pytest.mark.parametrize(("text", "labels", "matches"), ls.MATCHES)
def test_label_selector_matches(text, labels, matches):
    assert LabelSelector.parse(text).matches(labels) is matches


@pytest.mark.parametrize(("requirements", "text"), ls.TO_STRING)
def test_label_selector_text(requirements, text):
    built = LabelSelector(Requirement(key, "=" if op == "==" else op, values) for key, op, values in requirements)
    expected = ls.DIVERGENCES[text][0] if text in ls.DIVERGENCES else text
    assert str(built) == expected
    assert str(LabelSelector.parse(expected)) == expected


@pytest.mark.parametrize(("labels", "requirements", "matches"), ls.REQUIREMENT_MATCHES)
def test_label_requirements_match(labels, requirements, matches):
    selector = LabelSelector(Requirement(key, op, values) for key, op, values in requirements)
    assert selector.matches(labels) is matches


@pytest.mark.parametrize(("text", "requirements", "valid"), ls.SET_PARSER)
def test_label_set_selector_parser(text, requirements, valid):
    if not valid:
        with pytest.raises(SelectorError):
            LabelSelector.parse(text)
        return
    assert _requirements(LabelSelector.parse(text)) == requirements


# ------------------------------------------------------------------ field selectors

from kubectl_tables import field_selector_cases as fc  # noqa: E402

from kidx.query import field_selector as fs  # noqa: E402


def _in_spec(text: str) -> str:
    """The upstream selector with every field ``x`` read as ``spec.x``."""
    return ",".join(f"spec.{term}" if term else term for term in fs._split_terms(text)) if text else text


@pytest.mark.parametrize(("text", "terms"), fc.SPLIT_TERMS.items())
def test_field_selector_split_terms(text, terms):
    assert (fs._split_terms(text) if text else []) == terms


@pytest.mark.parametrize(("term", "parts"), fc.SPLIT_TERM.items())
def test_field_selector_split_term(term, parts):
    assert fs._split_term(term) == parts


@pytest.mark.parametrize(("plain", "escaped"), fc.ESCAPES.items())
def test_field_selector_escapes(plain, escaped):
    assert fs.escape_value(plain) == escaped
    assert fs.unescape_value(escaped) == plain


@pytest.mark.parametrize("value", fc.INVALID_ESCAPES)
def test_field_selector_invalid_escapes(value):
    with pytest.raises(fs.FieldSelectorError, match="invalid escape sequence"):
        fs.unescape_value(value)


@pytest.mark.parametrize("text", fc.GOOD)
def test_field_selector_parses_and_prints_back(text):
    assert str(fs.FieldSelector.parse(_in_spec(text))) == _in_spec(text)


@pytest.mark.parametrize("text", fc.BAD)
def test_field_selector_refused(text):
    with pytest.raises(fs.FieldSelectorError):
        fs.FieldSelector.parse(_in_spec(text))


@pytest.mark.parametrize(("first", "second"), fc.SAME)
def test_field_selector_is_deterministic(first, second):
    assert str(fs.FieldSelector.parse(_in_spec(first))) == str(fs.FieldSelector.parse(_in_spec(second)))


@pytest.mark.parametrize(("text", "fields", "matches"), fc.MATCHES)
def test_field_selector_matches(text, fields, matches):
    assert fs.FieldSelector.parse(_in_spec(text)).matches({"spec": fields}) is matches


# ------------------------------------------------------------------ custom columns

from kubectl_tables import custom_columns_cases as ccc  # noqa: E402

from kidx.jsonpath import RelaxedPathError, relaxed_path  # noqa: E402
from kidx.output import custom_columns as cc  # noqa: E402
from kidx.output.table import render_table  # noqa: E402


@pytest.mark.parametrize(("text", "normalised"), ccc.RELAXED)
def test_custom_columns_relaxed_path(text, normalised):
    if normalised is None:
        with pytest.raises(RelaxedPathError):
            relaxed_path(text)
    else:
        assert relaxed_path(text) == normalised


@pytest.mark.parametrize(("spec", "columns"), ccc.SPECS)
def test_custom_columns_spec(spec, columns):
    if columns is None:
        with pytest.raises(cc.CustomColumnsError):
            cc.parse_custom_columns(spec)
    else:
        assert cc.parse_custom_columns(spec) == columns


@pytest.mark.parametrize(("text", "columns"), ccc.TEMPLATES)
def test_custom_columns_file(text, columns):
    if columns is None:
        with pytest.raises(cc.CustomColumnsError):
            cc.parse_custom_columns_file(text)
    else:
        assert cc.parse_custom_columns_file(text) == columns


@pytest.mark.parametrize(("columns", "objects", "output"), ccc.PRINTS)
def test_custom_columns_print(columns, objects, output):
    rows = [cc.custom_column_cells(columns, obj) for obj in objects]
    assert render_table([header for header, _ in columns], rows) == output


@pytest.mark.parametrize(("spec", "output"), ccc.SLICES)
def test_custom_columns_slices(spec, output):
    columns = cc.parse_custom_columns(spec)
    if output is None:
        with pytest.raises(KidxError):
            cc.custom_column_cells(columns, ccc.POD)
    else:
        assert render_table([h for h, _ in columns], [cc.custom_column_cells(columns, ccc.POD)]) == output


# ------------------------------------------------------------------------ sorting

from kubectl_tables import sorter_cases as sc  # noqa: E402

from kidx.query.sorting import SortError, sort_objects  # noqa: E402


@pytest.mark.parametrize(("name", "field", "objects", "expected"), sc.CASES, ids=[c[0] for c in sc.CASES])
def test_sorting(name, field, objects, expected):
    if name in sc.DIVERGENCES:
        expected = sc.DIVERGENCES[name][0]
    if isinstance(expected, str):
        with pytest.raises(SortError) as caught:
            sort_objects(objects, field)
        assert expected in str(caught.value)
    else:
        assert [o["metadata"].get("name") for o in sort_objects(objects, field)] == expected


@pytest.mark.parametrize(("field", "i", "j", "before"), sc.LESS)
def test_sorting_pairs(field, i, j, before):
    before = sc.LESS_DIVERGENCES.get((field, i, j), (before,))[0]
    pair = [sc.LESS_PODS[i], sc.LESS_PODS[j]]
    first = sort_objects(pair, field)[0]
    if before:
        assert first is pair[0]
    else:  # not less: j first, unless the two are equal (none are here)
        assert first is pair[1]


# ------------------------------------------------------- through the CLI, on a store
#
# The upstream inputs become BenchmarkRuns: a copy of the seed run whose
# spec.sourceNative (kept verbatim by kidx) holds the test's object, so the paths are
# the upstream ones under .spec.sourceNative.


def _runs(seed_bundle, natives: dict[str, dict]) -> str:
    documents = []
    for name, native in natives.items():
        run = copy.deepcopy(seed_bundle["run"])
        run["metadata"] = {"name": name}
        run["spec"]["sourceNative"] = {"source": "kubectl-tests", **copy.deepcopy(native)}
        documents.append(json.dumps(run))
    return "\n---\n".join(documents)


def _under_native(template: str) -> str:
    return template.replace("{.", "{.spec.sourceNative.")


_CLI_JSONPATH = [case for case in jp.CASES if case[2] is jp.FOUR_CONTAINERS or case[2] is jp.SIX_CONTAINERS]


def test_jsonpath_index_cases_through_the_cli(kidx, seed_bundle):
    natives = {"four": jp.FOUR_CONTAINERS, "six": jp.SIX_CONTAINERS}
    assert kidx("apply", "-f", "-", stdin=_runs(seed_bundle, natives)).code == 0
    assert len(_CLI_JSONPATH) == 28
    for name, template, data, expected, error, _ in _CLI_JSONPATH:
        run_name = "four" if data is jp.FOUR_CONTAINERS else "six"
        result = kidx("get", "runs", run_name, "-o", f"jsonpath={_under_native(template)}")
        if error:
            assert result.code == 1 and result.out == "", name
            assert result.err.startswith("error: "), name
        else:
            assert (result.code, result.out, result.err) == (0, expected, ""), name


def test_jsonpath_error_text_through_the_cli(kidx, seed_bundle):
    kidx("apply", "-f", "-", stdin=_runs(seed_bundle, {"four": jp.FOUR_CONTAINERS}))
    result = kidx("get", "runs", "four", "-o", "jsonpath={.spec.sourceNative.spec.containers[-5].name}")
    assert result.code == 1
    assert result.err == ('error: error executing jsonpath "{.spec.sourceNative.spec.containers[-5].name}": '
                          "Error executing template: array index out of bounds: index -1, length 4\n")
    result = kidx("get", "runs", "four", "-o", "jsonpath={.metadata[0]}")
    assert result.err.endswith("Error executing template: map[string]interface {} is not array or slice\n")


def test_custom_column_slices_through_the_cli(kidx, seed_bundle):
    assert kidx("apply", "-f", "-", stdin=_runs(seed_bundle, {"fake-name": ccc.POD})).code == 0
    for spec, output in ccc.SLICES:
        result = kidx("get", "runs", "fake-name", "-o", f"custom-columns={spec.replace(':.', ':.spec.sourceNative.')}")
        if output is None:
            assert result.code == 1 and result.out == "", spec
            assert result.err.startswith("error: "), spec
        else:
            assert (result.code, result.out, result.err) == (0, output, ""), spec


def test_custom_columns_escape_through_the_cli(kidx, seed_bundle):
    kidx("apply", "-f", "-", stdin=_runs(seed_bundle, {"odd": {"title": "\x1b[31m red \r"}}))
    result = kidx("get", "runs", "odd", "-o", "custom-columns=T:.spec.sourceNative.title")
    assert result.out == "T\n^[[31m red \\r\n"


_CLI_SORTS = [case for case in sc.CASES if case[0] in (
    "reverse-order", "random-order-numbers", "some-missing-fields", "all-missing-fields",
    "empty fields", "pod-resources-cpu-random-order-with-missing-fields")]


@pytest.mark.parametrize(("name", "field", "objects", "expected"), _CLI_SORTS, ids=[c[0] for c in _CLI_SORTS])
def test_sort_by_through_the_cli(kidx, seed_bundle, name, field, objects, expected):
    if name in sc.DIVERGENCES:
        expected = sc.DIVERGENCES[name][0]
    natives = {f"obj-{i}": {**obj, "id": obj["metadata"]["name"]} for i, obj in enumerate(objects)}
    assert kidx("apply", "-f", "-", stdin=_runs(seed_bundle, natives)).code == 0
    path = field.replace("{.", "{.spec.sourceNative.")
    result = kidx("get", "runs", "--sort-by", path, "-o", 'jsonpath={range .items[*]}{.spec.sourceNative.id}{"\\n"}{end}')
    if isinstance(expected, str):
        assert result.code == 1
        assert result.err == f"error: {expected.replace(field, path)}\n"
    else:
        assert (result.code, result.out.split(), result.err) == (0, expected, "")


@pytest.mark.parametrize(("text", "valid"), ls.REQUIREMENTS, ids=[t[:12] for t, _ in ls.REQUIREMENTS])
def test_label_requirements_built_from_text(text, valid):
    if valid:
        assert str(LabelSelector.parse(text)) == text
    else:
        with pytest.raises(SelectorError):
            LabelSelector.parse(text)

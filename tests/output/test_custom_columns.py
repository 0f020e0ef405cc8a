"""-o custom-columns: kubectl's spec syntax, relaxed paths, cells and exact errors (§3.6),
plus commas inside brackets (§11 item 11)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kidx.errors import UsageError
from kidx.jsonpath import JSONPathError, relaxed_path, split_outside_brackets
from kidx.output.custom_columns import (
    CustomColumnsError,
    custom_column_cells,
    parse_custom_columns,
    parse_custom_columns_file,
)

ALPHA = {
    "kind": "Widget",
    "metadata": {"name": "alpha", "labels": {"app": "web", "tier": "fe"}},
    "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}], "ratio": 2.0, "note": ""},
}
BETA = {"kind": "Widget", "metadata": {"name": "beta-2"}, "spec": {}}

RELAXED_ERROR = ("unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                 "or '{name1.name2}' or '{.name1.name2}'")
FILE_FORMAT = ("Expected format is one line of space separated headers, "
               "one line of space separated column specs.")


def error_of(call, *args) -> str:
    with pytest.raises(UsageError) as caught:
        call(*args)
    return str(caught.value)


def test_documented_example():
    columns = parse_custom_columns("NAME:.metadata.name,REPLICAS:.spec.replicas,PORTS:.spec.ports[*].port")
    assert columns == [("NAME", "{.metadata.name}"), ("REPLICAS", "{.spec.replicas}"),
                       ("PORTS", "{.spec.ports[*].port}")]
    assert custom_column_cells(columns, ALPHA) == ["alpha", "3", "80,443"]
    assert custom_column_cells(columns, BETA) == ["beta-2", "<none>", "<none>"]


@pytest.mark.parametrize("path", ["metadata.name", ".metadata.name", "{metadata.name}", "{.metadata.name}"])
def test_relaxed_forms_are_equivalent(path):
    assert relaxed_path(path) == "{.metadata.name}"
    assert parse_custom_columns(f"N:{path}") == [("N", "{.metadata.name}")]
    assert custom_column_cells(parse_custom_columns(f"N:{path}"), ALPHA) == ["alpha"]


@pytest.mark.parametrize(("path", "normalised"), [
    ("..port", "{..port}"),
    ("{$.metadata.name}", "{$.metadata.name}"),
    ("@.kind", "{@.kind}"),
    ("spec.ports[0].port", "{.spec.ports[0].port}"),
    ("['metadata']", "{.['metadata']}"),
    ("", ""),
])
def test_relaxed_path_normalisation(path, normalised):
    assert relaxed_path(path) == normalised


@pytest.mark.parametrize("path", ["{.a}{.b}", "{.a", ".a}", "{}", "{.a}x", "a{b}"])
def test_relaxed_path_rejections(path):
    assert error_of(relaxed_path, path) == RELAXED_ERROR
    assert error_of(parse_custom_columns, f"X:{path}") == RELAXED_ERROR


@pytest.mark.parametrize(("spec", "message"), [
    ("", "custom-columns format specified but no custom columns given"),
    ("NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
    ("NAME:.metadata.name,AGE", "unexpected custom-columns spec: AGE, expected <header>:<json-path-expr>"),
    ("NAME:.metadata.name,", "unexpected custom-columns spec: , expected <header>:<json-path-expr>"),
    ("NAME:{.a}{.b}", RELAXED_ERROR),
    ("NAME:.a[", "error parsing jsonpath {.a[}, unterminated array"),
    ("NAME:.a[?(@.b & @.c)]", "error parsing jsonpath {.a[?(@.b & @.c)]}, "
                              "unrecognized character in action: U+0026 '&'"),
])
def test_spec_errors(spec, message):
    assert error_of(parse_custom_columns, spec) == message


def test_path_errors_are_jsonpath_errors_and_the_rest_custom_columns_errors():
    with pytest.raises(JSONPathError):
        parse_custom_columns("N:.a[")
    with pytest.raises(CustomColumnsError):
        parse_custom_columns("N")


def test_header_splits_at_first_colon_only():
    assert parse_custom_columns("TIME:metadata.annotations.a:b") == [("TIME", "{.metadata.annotations.a:b}")]
    assert custom_column_cells(parse_custom_columns("A:metadata.labels.a:b"),
                               {"metadata": {"labels": {"a:b": "yes"}}}) == ["yes"]


def test_empty_path_always_shows_none_and_empty_header_is_allowed():
    columns = parse_custom_columns(":,X:")
    assert columns == [("", ""), ("X", "")]
    assert custom_column_cells(columns, ALPHA) == ["<none>", "<none>"]


def test_cells_use_jsonpath_value_printing():
    columns = parse_custom_columns("L:.metadata.labels,R:.spec.ratio,N:.spec.note,P:.spec.ports[0]")
    assert custom_column_cells(columns, ALPHA) == ['{"app":"web","tier":"fe"}', "2", "", '{"port":80}']


def test_commas_inside_brackets_do_not_split_columns():
    columns = parse_custom_columns(
        "PORTS:.spec.ports[1,0].port,LABELS:.metadata.labels['tier','app'],NAME:.metadata.name")
    assert [header for header, _ in columns] == ["PORTS", "LABELS", "NAME"]
    assert custom_column_cells(columns, ALPHA) == ["443,80", "fe,web", "alpha"]


def test_commas_inside_quoted_filter_strings_and_escaped_commas():
    data = {"items": [{"n": "a,b", "v": 1}, {"n": "c", "v": 2}], "x,y": "z"}
    columns = parse_custom_columns('V:.items[?(@.n=="a,b")].v,Z:.x\\,y')
    assert custom_column_cells(columns, data) == ["1", "z"]


def test_whitespace_around_columns_is_ignored():
    assert parse_custom_columns(" NAME : .metadata.name , KIND:kind ") == [
        ("NAME", "{.metadata.name}"), ("KIND", "{.kind}")]


def test_filters_and_extensions_work_in_columns():
    columns = parse_custom_columns('HTTPS:.spec.ports[?(@.port>100 && @.port<1000)].port')
    assert custom_column_cells(columns, ALPHA) == ["443"]


@given(st.lists(st.from_regex(r"[A-Za-z_]{1,8}", fullmatch=True), min_size=1, max_size=5))
def test_plain_specs_split_like_kubectl(fields):
    spec = ",".join(f"{f.upper()}:.spec.{f}" for f in fields)
    assert split_outside_brackets(spec) == spec.split(",")
    assert parse_custom_columns(spec) == [(f.upper(), f"{{.spec.{f}}}") for f in fields]


# --------------------------------------------------------------------- custom-columns-file


def test_file_two_lines():
    text = "NAME          REPLICAS\n{.metadata.name}   spec.replicas\n"
    columns = parse_custom_columns_file(text)
    assert columns == [("NAME", "{.metadata.name}"), ("REPLICAS", "{.spec.replicas}")]
    assert custom_column_cells(columns, ALPHA) == ["alpha", "3"]


def test_file_without_final_newline_crlf_and_extra_lines():
    text = "NAME\tKIND\r\nmetadata.name\t.kind\r\nthis line is ignored"
    assert parse_custom_columns_file(text) == [("NAME", "{.metadata.name}"), ("KIND", "{.kind}")]


@pytest.mark.parametrize(("text", "message"), [
    ("", f"invalid template, missing header line. {FILE_FORMAT}"),
    ("NAME KIND\n", f"invalid template, missing spec line. {FILE_FORMAT}"),
    ("NAME KIND", f"invalid template, missing spec line. {FILE_FORMAT}"),
    ("NAME KIND\n.metadata.name\n", "number of headers (2) and field specifications (1) don't match"),
    ("NAME\n{.a}{.b}\n", RELAXED_ERROR),
])
def test_file_errors(text, message):
    assert error_of(parse_custom_columns_file, text) == message

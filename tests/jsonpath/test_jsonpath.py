"""-o jsonpath follows kubectl's dialect and output rules (§3.5), plus kidx's filter
extensions (§11 item 1): exact outputs, exact error texts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kidx.errors import UsageError
from kidx.jsonpath import (
    JSONPath,
    JSONPathError,
    JSONPathEvaluationError,
    JSONPathTemplate,
    evaluate,
    format_value,
)

ALPHA = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "alpha",
        "labels": {"app": "web", "tier": "fe", "app.kubernetes.io/name": "alpha-ui"},
        "creationTimestamp": "2024-05-01T10:00:00Z",
    },
    "spec": {"replicas": 3, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
             "ratio": 0.5, "enabled": True, "owner": None},
}
BETA = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "beta-2", "labels": {"app": "db"}},
    "spec": {"replicas": 1, "ratio": 2.0, "enabled": False},
}
WIDGETS = {"apiVersion": "v1", "kind": "List", "items": [ALPHA, BETA],
           "metadata": {"resourceVersion": ""}}


def render(template: str, data=WIDGETS) -> str:
    return JSONPathTemplate.parse(template).render(data)


def parse_error(template: str) -> str:
    with pytest.raises(JSONPathError) as caught:
        JSONPathTemplate.parse(template)
    return str(caught.value)


# ------------------------------------------------------------ kubectl's documented examples


def test_names_of_a_list_joined_by_one_space_without_newline():
    assert render("{.items[*].metadata.name}") == "alpha beta-2"


def test_range_with_tab_and_newline_literals():
    template = '{range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}'
    assert render(template) == "alpha\t3\nbeta-2\t1\n"


def test_filter_greater_than():
    assert render("{.items[?(@.spec.replicas>2)].metadata.name}") == "alpha"


def test_map_prints_as_compact_json_with_sorted_keys():
    assert render("{.metadata.labels}", BETA) == '{"app":"db"}'
    assert render("{.metadata.labels}", ALPHA) == (
        '{"app":"web","app.kubernetes.io/name":"alpha-ui","tier":"fe"}')


# ------------------------------------------------------------------------ output rules


@pytest.mark.parametrize(("template", "expected"), [
    ("{.spec.replicas}", "3"),
    ("{.metadata.name}", "alpha"),
    ("{.spec.enabled}", "true"),
    ("{.spec.owner}", "null"),
    ("{.spec.ratio}", "0.5"),
    ("{.spec.ports}", '[{"name":"http","port":80},{"name":"https","port":443}]'),
    ("{.spec.ports[*].port}", "80 443"),
    ("name={.metadata.name}; replicas={.spec.replicas}", "name=alpha; replicas=3"),
    ("no actions at all", "no actions at all"),
    ("{.missing}", ""),
    ("<{.missing.deeper[0]}>", "<>"),
    ("", ""),
])
def test_output(template, expected):
    assert render(template, ALPHA) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (2.0, "2"), (0.5, "0.5"), (1e-06, "1e-06"), (0.0001, "0.0001"), (1234567.0, "1.234567e+06"),
    (123456.5, "123456.5"), (1e21, "1e+21"), (-2.5, "-2.5"), (-0.0, "-0"), (3, "3"),
    (10**20, "100000000000000000000"), (True, "true"), (False, "false"), (None, "null"),
    ("ünïcode", "ünïcode"), ("", ""),
])
def test_scalars_print_like_go_percent_v(value, expected):
    assert format_value(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ({"b": 1, "a": [2.0, 0.5, 1e-07, 1234567.0]}, '{"a":[2,0.5,1e-7,1234567],"b":1}'),
    ({"name": "żółw", "quote": 'say "hi"\n'}, '{"name":"żółw","quote":"say \\"hi\\"\\n"}'),
    ([True, None, {}, []], "[true,null,{},[]]"),
    ({"z": {"y": 1, "x": 2}}, '{"z":{"x":2,"y":1}}'),
])
def test_containers_print_as_compact_json_like_go(value, expected):
    assert format_value(value) == expected


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
))
def test_compact_json_matches_sorted_compact_json_without_floats(value):
    rendered = render("{.v}", {"v": value})
    if isinstance(value, (dict, list)):
        assert rendered == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert json.loads(rendered) == value
    elif isinstance(value, str):
        assert rendered == value


@given(st.text().filter(lambda t: "{" not in t))
def test_text_outside_braces_is_copied_verbatim(text):
    assert render(text + "{.kind}" + text, ALPHA) == text + "Widget" + text


# ------------------------------------------------------------------------------ syntax


@pytest.mark.parametrize(("template", "expected"), [
    # root and current are optional and interchangeable
    ("{$.metadata.name}", "alpha"),
    ("{@.metadata.name}", "alpha"),
    ("{$['metadata']['name']}", "alpha"),
    ('{.metadata["name"]}', "alpha"),
    ("{.metadata['labels']['app.kubernetes.io/name']}", "alpha-ui"),
    ("{.metadata.labels.app\\.kubernetes\\.io/name}", "alpha-ui"),
    ("{.metadata.creationTimestamp}", "2024-05-01T10:00:00Z"),
    ("{ .metadata.name }", "alpha"),
    # indexes and slices
    ("{.spec.ports[0].port}", "80"),
    ("{.spec.ports[-1].port}", "443"),
    ("{.spec.ports[0:1].name}", "http"),
    ("{.spec.ports[1:].name}", "https"),
    ("{.spec.ports[:-1].name}", "http"),
    ("{.spec.ports[::2].name}", "http"),
    ("{.spec.ports[*].name}", "http https"),
    ("{.spec.ports.*.name}", "http https"),
    # wildcards over an object list its values in key order
    ("{.metadata.labels.*}", "web alpha-ui fe"),
    ("{.metadata.labels[*]}", "web alpha-ui fe"),
    # unions
    ("{.spec.ports[1,0].port}", "443 80"),
    ("{.metadata['name','labels']}", 'alpha {"app":"web","app.kubernetes.io/name":"alpha-ui","tier":"fe"}'),
    ("{.metadata.labels['tier', 'app']}", "fe web"),
    # recursive descent
    ("{..port}", "80 443"),
    ("{.spec..name}", "http https"),
    ("{..ports[0].name}", "http"),
    # field of a non-object, index of a non-list: nothing
    ("{.metadata.name.first}", ""),
    ("{.spec.replicas[*]}", ""),
    # the whole current object
    ("{.spec.ports[0]}", '{"name":"http","port":80}'),
    ("{.spec.ports[0].}", '{"name":"http","port":80}'),
])
def test_paths(template, expected):
    assert render(template, ALPHA) == expected


def test_empty_action_and_dot_are_the_current_object():
    assert render("{}", {"b": 1, "a": "x"}) == '{"a":"x","b":1}'
    assert render("{.}", [1, "two"]) == '[1,"two"]'
    assert render("{@}", "plain") == "plain"


def test_recursive_descent_visits_in_pre_order_with_sorted_keys():
    data = {"b": {"name": "b1", "z": {"name": "b2"}}, "a": [{"name": "a1"}], "name": "top"}
    assert render("{..name}", data) == "top a1 b1 b2"


@pytest.mark.parametrize(("template", "expected"), [
    ('{"\\n"}', "\n"),
    ('{"\\t"}', "\t"),
    ('{"\\r"}', "\r"),
    ('{"a\\\\b"}', "a\\b"),
    ('{"say \\"hi\\""}', 'say "hi"'),
    ("{'x'}", "x"),
    ("{'it\\'s'}", "it's"),
    ('{"{curly}"}', "{curly}"),
    ('{"\\u00e9"}', "é"),
    ('{"\\d"}', "\\d"),
])
def test_string_literals(template, expected):
    assert render(template, {}) == expected


def test_nested_range():
    template = '{range .items[*]}{.metadata.name}:{range .spec.ports[*]} {.port}{end};{end}'
    assert render(template) == "alpha: 80 443;beta-2:;"


def test_range_over_nothing_prints_nothing():
    assert render("[{range .items[*].nope}x{end}]") == "[]"


def test_dollar_inside_range_is_the_item_as_in_kubectl():
    assert render("{range .items[*]}{$.metadata.name},{end}") == "alpha,beta-2,"


def test_find_results_groups_values_per_action():
    template = JSONPathTemplate.parse('{range .items[*]}{.metadata.name}{"|"}{end}{.kind}')
    assert template.find_results(WIDGETS) == [["alpha"], ["|"], ["beta-2"], ["|"], ["List"]]


# ----------------------------------------------------------------------------- filters

PODS = {"items": [
    {"name": "liger-rope-fwd", "n": 1, "dtype": "bf16", "tags": ["a", "b"], "ok": True, "lo": 1, "hi": 2},
    {"name": "liger-rms-norm", "n": 2.5, "dtype": "fp32", "tags": ["c"], "ok": False, "lo": 3, "hi": 3},
    {"name": "triton-rope", "n": 10, "tags": [], "ok": None, "lo": 5, "hi": 4},
    {"name": "plain", "n": "10"},
]}


def names(filter_text: str) -> str:
    return render(f"{{.items[{filter_text}].name}}", PODS)


@pytest.mark.parametrize(("filter_text", "expected"), [
    ('?(@.dtype=="bf16")', "liger-rope-fwd"),
    ("?(@.dtype=='fp32')", "liger-rms-norm"),
    ('?(@.dtype!="bf16")', "liger-rms-norm"),  # no dtype: not compared (as kubectl)
    ("?(@.n==10)", "triton-rope"),  # "10" is a string, not equal to the number 10
    ('?(@.n=="10")', "plain"),
    ("?(@.n<2.5)", "liger-rope-fwd"),
    ("?(@.n<=2.5)", "liger-rope-fwd liger-rms-norm"),
    ("?(@.n>2)", "liger-rms-norm triton-rope"),
    ("?(@.n>=10)", "triton-rope"),
    ("?(@.n>-1)", "liger-rope-fwd liger-rms-norm triton-rope"),
    ("?(@.n==1.0)", "liger-rope-fwd"),
    ("?(@.ok==true)", "liger-rope-fwd"),
    ("?(@.ok==false)", "liger-rms-norm"),
    ("?(@.ok)", "liger-rope-fwd liger-rms-norm triton-rope"),  # present, even if false/null
    ("?(@.dtype)", "liger-rope-fwd liger-rms-norm"),
    ("?(@.lo==@.hi)", "liger-rms-norm"),
    ("?(@.lo<@.hi)", "liger-rope-fwd"),
    ('?(@.name>"p")', "triton-rope plain"),
    ('?( @.dtype == "bf16" )', "liger-rope-fwd"),
    ('?(@.tags[*]=="c")', "liger-rms-norm"),  # any of several values (kubectl refuses)
    ('?("bf16"==@.dtype)', "liger-rope-fwd"),
    ('?(@.n=="x")', ""),
])
def test_kubectl_filters(filter_text, expected):
    assert names(filter_text) == expected


@pytest.mark.parametrize(("filter_text", "expected"), [
    ('?(@.name=~"^liger-.*rope")', "liger-rope-fwd"),
    ('?(@.name =~ "rope")', "liger-rope-fwd triton-rope"),
    ("?(@.name=~'NORM$')", ""),
    ('?(@.name=~"(?i)NORM$")', "liger-rms-norm"),
    ('?(@.dtype=~"\\d\\d$")', "liger-rope-fwd liger-rms-norm"),
    ('?(@.n=~"1")', "plain"),  # only strings match
    ('?(@.dtype=="bf16" || @.dtype=="fp32")', "liger-rope-fwd liger-rms-norm"),
    ('?(@.name=~"^liger" && @.n>2)', "liger-rms-norm"),
    ("?(!@.dtype)", "triton-rope plain"),
    ('?(!(@.dtype=="bf16"))', "liger-rms-norm triton-rope plain"),
    ('?(!@.dtype=="bf16")', "liger-rms-norm triton-rope plain"),
    ('?(@.ok && !@.ok==false)', "liger-rope-fwd triton-rope"),
    ("?(@.n==1 || @.n==10 && @.ok==false)", "liger-rope-fwd"),  # && binds tighter than ||
    ('?((@.a=="x" || @.n==1) && @.ok==true)', "liger-rope-fwd"),
    ('?(@.n==1) || (@.n==10)', "liger-rope-fwd triton-rope"),
    ("?@.dtype", "liger-rope-fwd liger-rms-norm"),
])
def test_filter_extensions(filter_text, expected):
    assert names(filter_text) == expected


def test_filter_example_from_the_brief():
    data = {"items": [{"a": "x", "b": 1, "id": 1}, {"a": "x", "b": 3, "id": 2}, {"a": "y", "b": 0, "id": 3}]}
    assert render('{.items[?(@.a=="x" && !(@.b>2))].id}', data) == "1"


def test_filter_on_nested_list_and_then_continue():
    template = '{.items[?(@.metadata.name=="alpha")].spec.ports[?(@.port>100)].name}'
    assert render(template) == "https"


def test_filter_of_a_list_of_scalars_with_current():
    assert render('{.v[?(@>1)]}', {"v": [0, 1, 2, 3]}) == "2 3"


@pytest.mark.parametrize(("template", "reason"), [
    ("{.spec.ports[2].port}", "array index out of bounds: index 2, length 2"),
    ("{.spec.ports[-3].port}", "array index out of bounds: index -1, length 2"),
    ("{.spec.ports[0,5].port}", "array index out of bounds: index 5, length 2"),
    ("{.spec.ports[1:0]}", "starting index 1 is greater than ending index 0"),
    ("{.metadata[0]}", "map[string]interface {} is not array or slice"),
    ("{.metadata.name[0]}", "string is not array or slice"),
    ("{.metadata.labels[?(@.x)]}", "map[app:web app.kubernetes.io/name:alpha-ui tier:fe] is not array or slice and cannot be filtered"),
])
def test_execution_errors_are_kubectls(template, reason):
    with pytest.raises(JSONPathEvaluationError) as caught:
        render(template, ALPHA)
    assert str(caught.value) == f'error executing jsonpath "{template}": Error executing template: {reason}'


def test_empty_index_is_the_first_element_and_null_is_nothing():
    assert render("{.spec.ports[].port}", ALPHA) == "80"
    assert render("{.spec.missing[0]}{.spec.missing[?(@.a)]}", {"spec": {"missing": None}}) == ""
    # inside a filter a path that cannot be followed finds nothing, it does not abort
    assert render("{.spec.ports[?(@.name[0]==1)].port}", ALPHA) == ""


# ------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(("template", "reason"), [
    ("{.items[?(@.a & @.b)]}", "unrecognized character in action: U+0026 '&'"),
    ("{.items[?(@.a | @.b)]}", "unrecognized character in action: U+007C '|'"),
    ("{.items[?(@.a = 1)]}", "unrecognized character in action: U+003D '='"),
    ("{#}", "unrecognized character in action: U+0023 '#'"),
    ("{.metadata.name", "unclosed action"),
    ("x{", "unclosed action"),
    ('{"abc}', "unterminated quoted string"),
    ("{.a[?(@.b=='x)]}", "unterminated quoted string"),
    ("{.a[0}", "unterminated array"),
    ("{.a[?(@.b==1}", "unterminated filter"),
    ("{.a[?(@.b==1]}", 'unexpected "]", expected ")"'),
    ("{.a[?(@.b==)]}", 'unexpected ")", expected a path or a literal'),
    ("{.a[?(1)]}", "a filter needs a path or a comparison, not only 1"),
    ("{.a[?(@.b==nil)]}", "unrecognized identifier nil"),
    ("{.a[x]}", "invalid array index x"),
    ("{.a[1.5]}", "array index 1.5 is not an integer"),
    ("{.a[::0]}", "step must be > 0"),
    ("{.a[::-1]}", "step must be > 0"),
    ("{....a}", "invalid multiple recursive descent"),
    ("{metadata.name}", "unrecognized identifier metadata"),
    ("{end}", "not in range, nothing to end"),
    ("{range .items[*]}{.x}", "{range} without a matching {end}"),
    ("{.a .b 'c'}", "unexpected \"'c'\", expected \"}\""),
    ('{.a[?(@.b=~"(")]}', 'invalid regular expression "(": missing ) at offset 0'),
    ("{.a[?(@.b=~@.c)]}", "=~ needs a quoted regular expression on its right"),
    ("{.a\\", "unfinished escape at the end of a field name"),
    ("{.a@}", 'unexpected "@", expected "}"'),
])
def test_parse_errors(template, reason):
    assert parse_error(template) == f"error parsing jsonpath {template}, {reason}"


def test_errors_are_usage_errors_carrying_template_and_reason():
    with pytest.raises(UsageError) as caught:
        JSONPathTemplate.parse("{.a")
    assert isinstance(caught.value, JSONPathError)
    assert (caught.value.template, caught.value.reason) == ("{.a", "unclosed action")


def test_field_names_end_at_operators_only_inside_filters():
    data = {"a=b": 1, "f(x)": 2, "items": [{"k": "v"}]}
    assert render("{.a=b} {.f(x)}", data) == "1 2"
    assert render('{.items[?(@.k=="v")].k}', data) == "v"


# --------------------------------------------------------------------- bare path evaluate


def test_evaluate_bare_paths():
    assert evaluate(".spec.ports[*].port", ALPHA) == [80, 443]
    assert evaluate('.spec.ports[?(@.name=="https")]', ALPHA) == [{"name": "https", "port": 443}]
    assert evaluate("$.metadata.labels", BETA) == [{"app": "db"}]
    assert evaluate("..replicas", WIDGETS) == [3, 1]
    assert evaluate(".nope", ALPHA) == []
    assert evaluate("", ALPHA) == [ALPHA]


def test_evaluate_returns_the_objects_themselves():
    found = evaluate(".metadata", ALPHA)
    assert found[0] is ALPHA["metadata"]


def test_bare_path_errors_name_the_expression():
    with pytest.raises(JSONPathError) as caught:
        evaluate(".a[", {})
    assert str(caught.value) == "error parsing jsonpath .a[, unterminated array"
    with pytest.raises(JSONPathError) as caught:
        JSONPath.parse(".a b")
    assert str(caught.value) == "error parsing jsonpath .a b, unrecognized identifier b"
    with pytest.raises(JSONPathError) as caught:
        JSONPath.parse("{.a}")
    assert str(caught.value) == "error parsing jsonpath {.a}, unrecognized character in action: U+007B '{'"

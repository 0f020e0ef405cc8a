"""Label selectors behave like kubectl's: grammar, matching and exact error texts (§1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kidx.errors import UsageError
from kidx.query.label_selector import LabelSelector, Requirement, SelectorError, go_quote

NAME_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', "
    "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', "
    "or 'my_value', or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
PREFIX_REGEX = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
REQ = "unable to parse requirement: "
INT_ERROR = "for 'Gt', 'Lt' operators, the value must be an integer"


def parse_error(text: str) -> SelectorError:
    with pytest.raises(SelectorError) as caught:
        LabelSelector.parse(text)
    return caught.value


# ---------------------------------------------------------------- parse results

PARSE_CASES = [
    # input, canonical string, requirements (key, operator, values)
    ("", "", []),
    ("  \t\n ", "", []),
    ("app=web", "app=web", [("app", "=", ("web",))]),
    ("app==web", "app=web", [("app", "=", ("web",))]),
    ("app!=web", "app!=web", [("app", "!=", ("web",))]),
    ("app", "app", [("app", "exists", ())]),
    ("!app", "!app", [("app", "!", ())]),
    ("! app", "!app", [("app", "!", ())]),
    ("app=", "app=", [("app", "=", ("",))]),
    ("app!=", "app!=", [("app", "!=", ("",))]),
    ("app=,b", "app=,b", [("app", "=", ("",)), ("b", "exists", ())]),
    ("env in (prod,dev)", "env in (dev,prod)", [("env", "in", ("dev", "prod"))]),
    ("env notin (prod)", "env notin (prod)", [("env", "notin", ("prod",))]),
    ("env in ( a , b )", "env in (a,b)", [("env", "in", ("a", "b"))]),
    ("env\tin\r\n(a)", "env in (a)", [("env", "in", ("a",))]),
    ("env = prod", "env=prod", [("env", "=", ("prod",))]),
    ("x in ()", "x in ()", [("x", "in", ("",))]),
    ("x in (,)", "x in ()", [("x", "in", ("",))]),
    ("x in (a,,b)", "x in (,a,b)", [("x", "in", ("", "a", "b"))]),
    ("x in (a,,)", "x in (,a)", [("x", "in", ("", "a"))]),  # current apimachinery accepts these
    ("x in (,,)", "x in ()", [("x", "in", ("",))]),
    ("x in (a,,,,b,,)", "x in (,a,b)", [("x", "in", ("", "a", "b"))]),
    ("x in (,a)", "x in (,a)", [("x", "in", ("", "a"))]),
    ("x in (a,)", "x in (,a)", [("x", "in", ("", "a"))]),
    ("x in (b,a,b)", "x in (a,b)", [("x", "in", ("a", "b"))]),
    ("x notin ()", "x notin ()", [("x", "notin", ("",))]),
    ("x in (in,notin)", "x in (in,notin)", [("x", "in", ("in", "notin"))]),
    ("in in (in)", "in in (in)", [("in", "in", ("in",))]),
    ("notin=in", "notin=in", [("notin", "=", ("in",))]),
    ("!in", "!in", [("in", "!", ())]),
    ("k>5", "k>5", [("k", "gt", ("5",))]),
    ("k < 10", "k<10", [("k", "lt", ("10",))]),
    ("k>007", "k>007", [("k", "gt", ("007",))]),
    ("b=1,a=2", "a=2,b=1", [("a", "=", ("2",)), ("b", "=", ("1",))]),
    ("a=2,a=1", "a=2,a=1", [("a", "=", ("2",)), ("a", "=", ("1",))]),
    (
        "example.com/app=web,kidx.dev/tier",
        "example.com/app=web,kidx.dev/tier",
        [("example.com/app", "=", ("web",)), ("kidx.dev/tier", "exists", ())],
    ),
    ("My_Name.x-1=V.a_l-2", "My_Name.x-1=V.a_l-2", [("My_Name.x-1", "=", ("V.a_l-2",))]),
    (
        "x in (foo,,baz),y,z notin ()",
        "x in (,baz,foo),y,z notin ()",
        [("x", "in", ("", "baz", "foo")), ("y", "exists", ()), ("z", "notin", ("",))],
    ),
    ("a" * 63 + "=" + "b" * 63, "a" * 63 + "=" + "b" * 63, [("a" * 63, "=", ("b" * 63,))]),
]


@pytest.mark.parametrize(("text", "canonical", "requirements"), PARSE_CASES)
def test_parse(text, canonical, requirements):
    selector = LabelSelector.parse(text)
    assert [(r.key, r.operator, r.values) for r in selector.requirements] == requirements
    assert str(selector) == canonical
    assert selector.is_empty == (not requirements)
    assert LabelSelector.parse(canonical) == selector


# ---------------------------------------------------------------- error messages

ERROR_CASES = [
    # every row of §1.4
    ("app:web", REQ + '<nil>: Invalid value: "app:web": name part ' + NAME_REGEX),
    ("Example.com/x=1", REQ + '<nil>: Invalid value: "Example.com/x": ' + PREFIX_REGEX),
    (
        "a/b/c=1",
        REQ + '<nil>: Invalid value: "a/b/c": a valid label key ' + NAME_REGEX
        + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    ("app=-bad", REQ + 'values[0][app]: Invalid value: "-bad": ' + VALUE_REGEX),
    ("app=web x", "found 'x', expected: ',' or 'end of string'"),
    (",", "found ',', expected: !, identifier, or 'end of string'"),
    ("=x", "found '=', expected: !, identifier, or 'end of string'"),
    ("a,", "found '', expected: identifier after ','"),
    ("env in prod", REQ + "found 'prod' expected: '('"),
    ("env in (a b)", REQ + "found 'b', expected: ',' or ')'"),
    ("env foo", REQ + "found 'foo', expected: in, notin, =, ==, !=, gt, lt"),
    ("!app=x", "found '=', expected: ',' or 'end of string'"),
    # further shapes from the same parser
    ("a,,b", "found ',', expected: identifier after ','"),
    ("a, =b", "found '=', expected: identifier after ','"),
    ("(", "found '(', expected: !, identifier, or 'end of string'"),
    ("!", REQ + "found '', expected: identifier"),
    ("!,a", REQ + "found ',', expected: identifier"),
    ("!!a", REQ + "found '!', expected: identifier"),
    ("a b", REQ + "found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a !", REQ + "found '!', expected: in, notin, =, ==, !=, gt, lt"),
    ("a in", REQ + "found '' expected: '('"),
    ("a in (", REQ + "found '', expected: ',', ')' or identifier"),
    ("a in (=", REQ + "found '=', expected: ',', ')' or identifier"),
    ("a in (b", REQ + "found '', expected: ',' or ')'"),
    ("a in (b,", REQ + "found '', expected: ',', or identifier"),
    ("a in (,=)", REQ + "found '=', expected: ',', or identifier"),
    # upstream quirk: a trailing ",," before ")" is refused, while "(a,,b)" is fine
    ("a in (b))", "found ')', expected: ',' or 'end of string'"),
    ("a=(", REQ + "found '(', expected: identifier"),
    ("a===b", REQ + "found '=', expected: identifier"),
    ("a=b=c", "found '=', expected: ',' or 'end of string'"),
    ("a in (b) c", "found 'c', expected: ',' or 'end of string'"),
    ("a>abc", REQ + 'values[0]: Invalid value: "abc": ' + INT_ERROR),
    ("a>1.5", REQ + 'values[0]: Invalid value: "1.5": ' + INT_ERROR),
    ("a>", REQ + 'values[0]: Invalid value: "": ' + INT_ERROR),
    ("a>99999999999999999999", REQ + 'values[0]: Invalid value: "99999999999999999999": ' + INT_ERROR),
    ("a<-1", REQ + 'values[0][a]: Invalid value: "-1": ' + VALUE_REGEX),
    (
        "a>-x",
        REQ + '[values[0]: Invalid value: "-x": ' + INT_ERROR
        + ', values[0][a]: Invalid value: "-x": ' + VALUE_REGEX + "]",
    ),
    (
        "a in (-y,ok,-x)",
        REQ + '[values[0][a]: Invalid value: "-x": ' + VALUE_REGEX
        + ', values[1][a]: Invalid value: "-y": ' + VALUE_REGEX + "]",
    ),
    ("a notin (x,b_)", REQ + 'values[0][a]: Invalid value: "b_": ' + VALUE_REGEX),
    ("a=" + "v" * 64, REQ + f'values[0][a]: Invalid value: "{"v" * 64}": must be no more than 63 bytes'),
    ("a=b:c", REQ + 'values[0][a]: Invalid value: "b:c": ' + VALUE_REGEX),
    ("/a", REQ + '<nil>: Invalid value: "/a": prefix part must be non-empty'),
    ("a/", REQ + '<nil>: Invalid value: "a/": name part must be non-empty; name part ' + NAME_REGEX),
    ("-a", REQ + '<nil>: Invalid value: "-a": name part ' + NAME_REGEX),
    ("!a:b", REQ + '<nil>: Invalid value: "a:b": name part ' + NAME_REGEX),
    ("k" * 64, REQ + f'<nil>: Invalid value: "{"k" * 64}": name part must be no more than 63 bytes'),
    (
        "x" * 254 + "/a",
        REQ + f'<nil>: Invalid value: "{"x" * 254 + "/a"}": prefix part must be no more than 253 bytes',
    ),
    ("a..b/c", REQ + '<nil>: Invalid value: "a..b/c": ' + PREFIX_REGEX),
    ('a"b', REQ + '<nil>: Invalid value: "a\\"b": name part ' + NAME_REGEX),
    # the key is checked before the operator, the values only after the requirement
    ("app:web foo", REQ + '<nil>: Invalid value: "app:web": name part ' + NAME_REGEX),
    ("app=-bad x", REQ + 'values[0][app]: Invalid value: "-bad": ' + VALUE_REGEX),
    ("ok,a:b,=", REQ + '<nil>: Invalid value: "a:b": name part ' + NAME_REGEX),
]


@pytest.mark.parametrize(("text", "message"), ERROR_CASES)
def test_error_message(text, message):
    error = parse_error(text)
    assert str(error) == message
    assert error.wrapped == f"the provided selector {go_quote(text.strip())} is not valid: {message}"


def test_error_is_a_usage_error_and_wraps_like_kubectl():
    error = parse_error("  app:web ")
    assert isinstance(error, UsageError)
    assert error.exit_code == 1
    assert error.wrapped.startswith('the provided selector "app:web" is not valid: unable to parse')
    assert error.wrap("x y") == f'the provided selector "x y" is not valid: {error}'


@pytest.mark.parametrize(
    ("text", "quoted"),
    [("a", '"a"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\x00\x7f", '"a\\x00\\x7f"'),
     ("é", '"é"'), ("\u200b", '"\\u200b"'), ("\v", '"\\v"')],
)
def test_go_quote(text, quoted):
    assert go_quote(text) == quoted


# ---------------------------------------------------------------- matching

WEB = {"app": "web", "tier": "fe"}

MATCH_CASES = [
    # §1.2 examples
    (WEB, "app=web,tier", True),
    (WEB, "app!=api", True),
    (WEB, "env notin (prod)", True),
    (WEB, "!env", True),
    (WEB, "tier in (be,db)", False),
    (WEB, "app=web,app=api", False),
    # each operator, present and absent key
    (WEB, "app==web", True),
    (WEB, "app=api", False),
    (WEB, "env=", False),
    ({"env": ""}, "env=", True),
    ({"env": ""}, "env", True),
    (WEB, "app!=web", False),
    (WEB, "env!=prod", True),
    (WEB, "env!=", True),
    ({"env": ""}, "env!=", False),
    (WEB, "app in (web,api)", True),
    (WEB, "env in (web)", False),
    (WEB, "app notin (web)", False),
    (WEB, "app notin (api,db)", True),
    (WEB, "env notin ()", True),
    (WEB, "app", True),
    (WEB, "env", False),
    (WEB, "!app", False),
    (WEB, "", True),
    ({}, "", True),
    ({}, "!a,b notin (x),c!=y", True),
    # x in () matches only ""
    ({"x": ""}, "x in ()", True),
    ({"x": "a"}, "x in ()", False),
    ({}, "x in ()", False),
    ({"x": ""}, "x in (a,,b)", True),
    ({"x": "b"}, "x in (a,,b)", True),
    ({"x": "c"}, "x in (a,,b)", False),
    ({"x": ""}, "x notin ()", False),
    ({"x": "a"}, "x notin ()", True),
    # duplicates are AND-ed
    ({"a": "1"}, "a=1,a=2", False),
    ({"a": "2"}, "a=1,a=2", False),
    ({"a": "1"}, "a=1,a==1", True),
    # gt / lt
    ({"n": "6"}, "n>5", True),
    ({"n": "5"}, "n>5", False),
    ({"n": "4"}, "n<5", True),
    ({"n": "5"}, "n<5", False),
    ({"n": "-7"}, "n<5", True),
    ({"n": "+7"}, "n>5", True),
    ({"n": "007"}, "n>5", True),
    ({}, "n>5", False),
    ({}, "n<5", False),
    ({"n": "abc"}, "n<5", False),
    ({"n": "5.5"}, "n>5", False),
    ({"n": "1e3"}, "n>5", False),
    ({"n": ""}, "n<5", False),
    ({"n": " 6"}, "n>5", False),
    ({"n": "6_0"}, "n>5", False),
    ({"n": "٦"}, "n>5", False),  # non-ASCII digit
    ({"n": "99999999999999999999"}, "n>5", False),  # beyond int64
    ({"n": "9223372036854775807"}, "n>9223372036854775806", True),
    # prefixed keys and keyword-looking identifiers
    ({"kidx.dev/gpu": "h100"}, "kidx.dev/gpu in (h100,a100)", True),
    ({"in": "notin"}, "in in (notin)", True),
]


@pytest.mark.parametrize(("labels", "text", "expected"), MATCH_CASES)
def test_matches(labels, text, expected):
    selector = LabelSelector.parse(text)
    assert selector.matches(labels) is expected
    assert all(r.matches(labels) for r in selector.requirements) is expected


def test_requirement_built_directly():
    requirement = Requirement("app", "in", ["web", "api"])
    assert requirement.values == ("web", "api")
    assert requirement.matches({"app": "api"})
    assert str(requirement) == "app in (api,web)"
    assert requirement == Requirement("app", "in", ("web", "api"))
    assert hash(requirement) == hash(Requirement("app", "in", ("web", "api")))
    assert not Requirement("n", "gt", ("x",)).matches({"n": "1"})
    with pytest.raises(ValueError):
        Requirement("app", "==", ("web",))


def test_selector_from_requirements_is_sorted_and_comparable():
    selector = LabelSelector([Requirement("b", "exists"), Requirement("a", "!")])
    assert [r.key for r in selector.requirements] == ["a", "b"]
    assert selector == LabelSelector.parse("b,!a")
    assert hash(selector) == hash(LabelSelector.parse("!a,b"))
    assert selector != LabelSelector.parse("a,b")
    assert LabelSelector().is_empty


# ---------------------------------------------------------------- round trip

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
names = st.builds(
    lambda first, middle, last: first + middle + last,
    st.sampled_from(ALNUM),
    st.text(ALNUM + "-_.", max_size=8),
    st.sampled_from(ALNUM),
) | st.sampled_from(list(ALNUM) + ["in", "notin"])
dns_labels = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?\Z")
prefixes = st.lists(dns_labels, min_size=1, max_size=3).map(".".join)
keys = st.one_of(names, st.builds(lambda p, n: f"{p}/{n}", prefixes, names))
values = st.one_of(st.just(""), names)
integers = st.integers(min_value=0, max_value=2**63 - 1).map(str)
spaces = st.sampled_from(["", " ", "  ", "\t", "\n"])


@st.composite
def requirement_texts(draw):
    key = draw(keys)
    form = draw(st.sampled_from(["exists", "!", "=", "==", "!=", "in", "notin", ">", "<"]))
    pad = draw(spaces)
    if form == "exists":
        return key
    if form == "!":
        return f"!{pad}{key}"
    if form in ("in", "notin"):
        entries = draw(st.lists(values, max_size=4))
        return f"{key} {form}{pad}({pad}{f'{pad},'.join(entries)})"
    value = draw(integers) if form in (">", "<") else draw(values)
    return f"{key}{pad}{form}{pad}{value}"


selector_texts = st.lists(requirement_texts(), max_size=5).flatmap(
    lambda parts: spaces.map(lambda pad: f"{pad},{pad}".join(parts))
)


@given(selector_texts)
def test_canonical_string_round_trips(text):
    selector = LabelSelector.parse(text)
    canonical = str(selector)
    assert LabelSelector.parse(canonical) == selector
    assert str(LabelSelector.parse(canonical)) == canonical


@given(selector_texts, st.dictionaries(keys, values, max_size=5))
def test_canonical_string_matches_the_same_labels(text, labels):
    selector = LabelSelector.parse(text)
    assert LabelSelector.parse(str(selector)).matches(labels) == selector.matches(labels)


@given(st.text(max_size=30))
def test_arbitrary_text_parses_or_raises_selector_error(text):
    try:
        LabelSelector.parse(text)
    except SelectorError as error:
        assert str(error)


# ------------------------------------------------ kidx's own forms: prefixes and version ranges


@pytest.mark.parametrize(("text", "canonical", "parts"), [
    ("liger_version=0.5.*", "liger_version=0.5.*", [("liger_version", "prefix", ("0.5.",))]),
    ("v==0.*", "v=0.*", [("v", "prefix", ("0.",))]),
    ("v=*", "v=*", [("v", "prefix", ("",))]),
    ("v>=0.5.2,v<=0.6.1", "v>=0.5.2,v<=0.6.1", [("v", "ge", ("0.5.2",)), ("v", "le", ("0.6.1",))]),
])
def test_prefix_and_version_range_forms_parse(text, canonical, parts):
    selector = LabelSelector.parse(text)
    assert [(r.key, r.operator, r.values) for r in selector.requirements] == parts
    assert str(selector) == canonical and LabelSelector.parse(str(selector)) == selector


def test_version_ranges_compare_in_version_order_and_prefixes_by_text():
    at_least = LabelSelector.parse("v>=0.5.9")
    assert [at_least.matches({"v": v}) for v in ("0.5.8", "0.5.9", "0.5.10", "0.10.0")] == [False, True, True, True]
    at_most = LabelSelector.parse("v<=0.5.9")
    assert [at_most.matches({"v": v}) for v in ("0.5.8", "0.5.9", "0.5.10")] == [True, True, False]
    assert not at_least.matches({}) and not at_most.matches({"w": "0.1"})
    prefix = LabelSelector.parse("v=0.5.*")
    assert [prefix.matches({"v": v}) for v in ("0.5.2", "0.5.10", "0.50", "0.6.0")] == [True, True, False, False]


def test_kubectl_forms_keep_their_meaning_and_errors():
    # > and < stay kubectl's integer comparisons, a * inside a value stays invalid
    assert [(r.operator, r.values) for r in LabelSelector.parse("a>5").requirements] == [("gt", ("5",))]
    with pytest.raises(SelectorError, match="the value must be an integer"):
        LabelSelector.parse("a>1.5")
    with pytest.raises(SelectorError, match=r'values\[0\]\[a\]: Invalid value: "b\.\*c"'):
        LabelSelector.parse("a=b.*c")
    with pytest.raises(SelectorError, match=r'values\[0\]\[a\]: Invalid value: "-x\*"'):
        LabelSelector.parse("a=-x*")


def test_resolved_turns_kidx_forms_into_in_over_the_store_s_values():
    from kidx.query.label_selector import resolved

    values = {"v": ["0.5.2", "0.5.10", "0.6.0", "0.10.1"]}
    selector = LabelSelector.parse("v>=0.5.3,v<=0.6.0,kernel=jsd")
    done = resolved(selector.requirements, lambda key: values.get(key, []))
    assert [(r.key, r.operator, r.values) for r in done] == [
        ("kernel", "=", ("jsd",)), ("v", "in", ("0.10.1", "0.5.10", "0.6.0")), ("v", "in", ("0.5.10", "0.5.2", "0.6.0"))]
    assert resolved(LabelSelector.parse("v=1.*").requirements, values.get)[0].values == ()


def test_a_selector_is_bounded_in_keys_and_values():
    from kidx.query.label_selector import SelectorTooLarge
    from kidx.query.selector_bounds import MAX_SELECTOR_KEYS, MAX_SELECTOR_VALUES

    assert (MAX_SELECTOR_KEYS, MAX_SELECTOR_VALUES) == (1_000, 10_000)
    at_most = LabelSelector.parse(",".join(f"v!=x{index}" for index in range(10_000)))
    assert len(at_most.requirements) == 10_000
    with pytest.raises(SelectorTooLarge) as raised:
        LabelSelector.parse(",".join(f"v!=x{index}" for index in range(10_000)) + ",v in (a,b)")
    assert str(raised.value) == ("the label selector lists 10,002 values in 10,001 requirements; a selector may list "
                                 "at most 10,000 (select a large set by a label its members share instead)")
    assert len(LabelSelector.parse(",".join(f"k{index}" for index in range(1_000))).requirements) == 1_000
    with pytest.raises(SelectorTooLarge, match=r"^the label selector names 1,001 label keys; a selector may name at "
                                               r"most 1,000$"):
        LabelSelector.parse(",".join(f"k{index}=x" for index in range(1_001)))

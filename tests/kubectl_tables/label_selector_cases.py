"""Cases of kubernetes/apimachinery ``pkg/labels/selector_test.go`` (Apache-2.0), as data.

Requirements are written (key, operator, values) with kidx's operator names: ``=``,
``!=``, ``in``, ``notin``, ``exists``, ``!``, ``gt``, ``lt``; values sorted.
"""

# TestSelectorParse: these parse, and print back without their spaces
GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]
BAD = ["x=a||y=b", "x==a==b", "!x=a", "x<a"]

# TestDeterministicParse
SAME = [("x=a,a=x", "a=x,x=a")]

# TestSelectorMatches: (selector, labels, matches)
MATCHES = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x", {"x": "z"}, True),
    ("!x", {"y": "z"}, True),
    ("x>1", {"x": "2"}, True),
    ("x<1", {"x": "0"}, True),
    ("x=z", {}, False),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("x", {"y": "z"}, False),
    ("!x", {"x": "z"}, False),
    ("x>1", {"x": "0"}, False),
    ("x<1", {"x": "2"}, False),
    ("foo=bar", {"foo": "bar", "baz": "blah"}, True),
    ("baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=bar,baz=blah", {"foo": "bar", "baz": "blah"}, True),
    ("foo=blah", {"foo": "bar", "baz": "blah"}, False),
    ("baz=bar", {"foo": "bar", "baz": "blah"}, False),
    ("foo=bar,foobar=bar,baz=blah", {"foo": "bar", "baz": "blah"}, False),
]

# TestToString: requirements -> text
TO_STRING = [
    ([("x", "in", ["abc", "def"]), ("y", "notin", ["jkl"]), ("z", "exists", [])], "x in (abc,def),y notin (jkl),z"),
    ([("x", "notin", ["abc", "def"]), ("y", "!=", ["jkl"]), ("z", "!", [])], "x notin (abc,def),y!=jkl,!z"),
    ([("x", "notin", ["abc"]), ("y", "in", ["jkl", "mno"]), ("z", "notin", [""])], "x notin (abc),y in (jkl,mno),z notin ()"),
    ([("x", "=", ["abc"]), ("y", "==", ["jkl"]), ("z", "!=", ["a"]), ("z", "exists", [])], "x=abc,y==jkl,z!=a,z"),
    ([("x", "gt", ["2"]), ("y", "lt", ["8"]), ("z", "exists", [])], "x>2,y<8,z"),
]

# TestRequirementSelectorMatching: (labels, requirements, matches)
REQUIREMENT_MATCHES = [
    ({"x": "foo", "y": "baz"}, [("x", "in", ["foo"]), ("y", "notin", ["alpha"])], True),
    ({"x": "foo", "y": "baz"}, [("x", "in", ["foo"]), ("y", "in", ["alpha"])], False),
    ({"y": ""}, [("x", "notin", [""]), ("y", "exists", [])], True),
    ({"y": ""}, [("x", "!", []), ("y", "exists", [])], True),
    ({"y": ""}, [("x", "notin", [""]), ("y", "!", [])], False),
    ({"y": "baz"}, [("x", "in", [""])], False),
    ({"z": "2"}, [("z", "gt", ["1"])], True),
    ({"z": "v2"}, [("z", "gt", ["1"])], False),
]

# TestSetSelectorParser: (text, requirements sorted by key or None, valid)
SET_PARSER = [
    ("", [], True),
    ("\rx", [("x", "exists", [])], True),
    ("this-is-a-dns.domain.com/key-with-dash", [("this-is-a-dns.domain.com/key-with-dash", "exists", [])], True),
    ("this-is-another-dns.domain.com/key-with-dash in (so,what)",
     [("this-is-another-dns.domain.com/key-with-dash", "in", ["so", "what"])], True),
    ("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
     [("0.1.2.domain/99", "notin", ["10.10.100.1", "tick.tack.clock"])], True),
    ("foo  in\t (abc)", [("foo", "in", ["abc"])], True),
    ("x notin\n (abc)", [("x", "notin", ["abc"])], True),
    ("x  notin\t\t\t(abc,def)", [("x", "notin", ["abc", "def"])], True),
    ("x in (abc,def)", [("x", "in", ["abc", "def"])], True),
    ("x in (abc,)", [("x", "in", ["", "abc"])], True),
    ("x in (abc,abc)", [("x", "in", ["abc"])], True),
    ("x in ()", [("x", "in", [""])], True),
    ("x in (a,,)", [("x", "in", ["", "a"])], True),
    ("x in (a,,,)", [("x", "in", ["", "a"])], True),
    ("x in (a,,,,,,)", [("x", "in", ["", "a"])], True),
    ("x in (a,,a,,a,,a,,)", [("x", "in", ["", "a"])], True),
    ("x notin (abc,,def),bar,z in (),w",
     [("bar", "exists", []), ("w", "exists", []), ("x", "notin", ["", "abc", "def"]), ("z", "in", [""])], True),
    ("x,y in (a)", [("x", "exists", []), ("y", "in", ["a"])], True),
    ("x=a", [("x", "=", ["a"])], True),
    ("x>1", [("x", "gt", ["1"])], True),
    ("x<7", [("x", "lt", ["7"])], True),
    ("x=a,y!=b", [("x", "=", ["a"]), ("y", "!=", ["b"])], True),
    ("x=a,y!=b,z in (h,i,j)", [("x", "=", ["a"]), ("y", "!=", ["b"]), ("z", "in", ["h", "i", "j"])], True),
    ("x=a||y=b", None, False),
    ("x,,y", None, False),
    (",x,y", None, False),
    ("x nott in (y)", None, False),
    ("x notin ( )", [("x", "notin", [""])], True),
    ("x notin (, a)", [("x", "notin", ["", "a"])], True),
    ("a in (xyz),", None, False),
    ("a in (xyz)b notin ()", None, False),
    ("a ", [("a", "exists", [])], True),
    ("a in (x,y,notin, z,in)", [("a", "in", ["in", "notin", "x", "y", "z"])], True),
    ("a in (xyz abc)", None, False),
    ("a notin(", None, False),
    ("a (", None, False),
    ("(", None, False),
]

# name -> (kidx's answer, reason)
DIVERGENCES = {
    "x=abc,y==jkl,z!=a,z": ("x=abc,y=jkl,z!=a,z",
                            "kidx keeps == as =, its one spelling of equality; both texts mean the same selector"),
}

# TestRequirementConstructor, the cases a selector text can reach: (text, valid)
REQUIREMENTS = [
    ("x3 in (foo)", True),
    ("x4 notin (foo)", True),
    ("x6", True),
    ("!x7", True),
    ("x11>1", True),
    ("x12<6", True),
    ("x14>bar", False),  # > and < need an integer
    ("x15<bar", False),
    ("a" * 254, False),  # a key longer than 253 characters
    ("x16=" + "a" * 254, False),  # a value longer than 63 characters
]

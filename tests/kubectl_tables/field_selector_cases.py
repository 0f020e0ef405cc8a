"""Cases of kubernetes/apimachinery ``pkg/fields/selector_test.go`` (Apache-2.0), as data.

kidx selects on fields of its objects (``metadata.name``, ``spec.…``), not on free names,
so the upstream field ``x`` is ``spec.x`` here and its field set is an object's spec;
the grammar, escapes and results are the upstream ones.
"""

# TestSplitTerms
SPLIT_TERMS = {
    "a": ["a"],
    "a=avalue": ["a=avalue"],
    "a=avalue,b=bvalue": ["a=avalue", "b=bvalue"],
    "a=avalue,b==bvalue,c!=cvalue": ["a=avalue", "b==bvalue", "c!=cvalue"],
    "": [],
    "a=a,": ["a=a", ""],
    ",a=a": ["", "a=a"],
    "k=\\,,k2=v2": ["k=\\,", "k2=v2"],
    "k=\\\\,k2=v2": ["k=\\\\", "k2=v2"],
    "k=\\\\\\,,k2=v2": ["k=\\\\\\,", "k2=v2"],
    "k=\\a\\b\\": ["k=\\a\\b\\"],
    "k=\\": ["k=\\"],
    "함=수,목=록": ["함=수", "목=록"],
}

# TestSplitTerm: term -> (lhs, op, rhs) or None
SPLIT_TERM = {
    "a=value": ("a", "=", "value"),
    "b==value": ("b", "==", "value"),
    "c!=value": ("c", "!=", "value"),
    "": None,
    "a": None,
    "k=\\,": ("k", "=", "\\,"),
    "k=\\=": ("k", "=", "\\="),
    "k=\\\\\\a\\b\\=\\,\\": ("k", "=", "\\\\\\a\\b\\=\\,\\"),
    "함=수": ("함", "=", "수"),
}

# TestEscapeValue: unescaped -> escaped; then values that do not unescape
ESCAPES = {"": "", "a": "a", "=": "\\=", ",": "\\,", "\\": "\\\\", "\\=\\,\\": "\\\\\\=\\\\\\,\\\\"}
INVALID_ESCAPES = ["\\", "\\\\\\", "\\a"]

# TestSelectorParse
GOOD = ["x=a,y=b,z=c", "", "x!=a,y=b", "x=a||y\\=b", "x=a\\=\\=b"]
BAD = ["x=a||y=b", "x==a==b", "x=a,b", "x in (a)", "x in (a,b,c)", "x"]

# TestDeterministicParse
SAME = [("x=a,a=x", "a=x,x=a")]

# TestSelectorMatches: (selector, fields, matches)
_FIELDS = {"foo": "bar", "baz": "blah", "complex": "=value\\,\\"}
MATCHES = [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
    ("notin=in", {"notin": "in"}, True),
    ("x=y", {"x": "z"}, False),
    ("x=y,z=w", {"x": "w", "z": "w"}, False),
    ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
    ("foo=bar", _FIELDS, True),
    ("baz=blah", _FIELDS, True),
    ("foo=bar,baz=blah", _FIELDS, True),
    ("foo=bar,baz=blah,complex=\\=value\\\\\\,\\\\", _FIELDS, True),
    ("foo=blah", _FIELDS, False),
    ("baz=bar", _FIELDS, False),
    ("foo=bar,foobar=bar,baz=blah", _FIELDS, False),
]

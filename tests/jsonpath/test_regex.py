"""The ``=~`` matcher: RE2 syntax, linear time, the same answers as a backtracking
engine wherever the two syntaxes agree."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kidx.jsonpath.regex import MAX_PROGRAM, RegexError, compile_regex

SEED_RUN = "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-"


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("H100|B200", "NVIDIA H100", True),
    ("^liger-.*rope", "liger-x-rope", True),
    (r"\d+\.rope", "a12.rope", True),
    ("(?i)h100", "nvidia-H100", True),
    ("(?i:h)100", "H100", True),
    ("a{2,3}b", "aab", True),
    ("a{2,3}b", "ab", False),
    ("^a{2}$", "aaa", False),
    (r"\bfoo\b", "a foo b", True),
    (r"\bfoo\b", "afoo", False),
    (r"\Bfoo", "afoo", True),
    ("[^a-c]x", "cx", False),
    ("[^a-c]x", "dx", True),
    ("[]a]", "]", True),
    ("[a-]", "-", True),
    (r"[\d.]+$", "v1.2", True),
    ("[[:upper:]][[:digit:]]", "H1", True),
    ("^$", "", True),
    ("(a|b)*c$", "ababc", True),
    ("(a|b)*c$", "ababcd", False),
    ("^b$", "a\nb", False),  # $ is the end of the text, as in RE2 (Python: before a final \n too)
    ("(?m)^b$", "a\nb\nc", True),
    ("a.c", "a\nc", False),
    ("(?s)a.c", "a\nc", True),
    (r"\Aab\z", "ab", True),
    ("(?:ab)+", "xababx", True),
    ("(?P<gpu>h100)", "h100", True),
    ("(?<gpu>h100)", "h100", True),
    (r"\x41\x{42}", "AB", True),
    ("a{,2}", "a{,2}", True),  # not a repetition: literal, as in RE2
    ("é+", "café", True),
    (r"\d", "٣", False),  # ASCII digits only, as in RE2
    ("x*?y", "xxy", True),
])
def test_matches(pattern, text, expected):
    assert compile_regex(pattern).search(text) is expected


@pytest.mark.parametrize(("pattern", "message"), [
    ("(?=a)", "look-around is not supported (RE2 syntax has none) at offset 0"),
    ("(?<!a)b", "look-around is not supported (RE2 syntax has none) at offset 0"),
    (r"(a)\1", "backreferences are not supported (RE2 syntax has none) at offset 3"),
    (r"\p{Greek}", r"invalid or unsupported escape sequence \p at offset 0"),
    ("a**", "invalid nested repetition operator 'a**' at offset 0"),
    ("*a", "missing argument to repetition operator '*' at offset 0"),
    ("(", "missing ) at offset 0"),
    ("a)", "unexpected ) at offset 1"),
    ("[a", "missing closing ] at offset 0"),
    ("[z-a]", "invalid character class range z-a at offset 0"),
    ("a{1001}", "invalid repeat count {1001} (at most 1000) at offset 1"),
    ("(a{1000}){1000}", f"regular expression is too large (more than {MAX_PROGRAM} steps once repetitions are expanded)"),
    ("(?x)a", "invalid or unsupported group syntax at offset 0"),
    ("(" * 101 + ")" * 101, "groups nested more than 100 levels deep at offset 100"),
])
def test_refused_patterns(pattern, message):
    with pytest.raises(RegexError) as caught:
        compile_regex(pattern)
    assert str(caught.value) == message


def test_catastrophic_pattern_is_linear():
    # Python's re needs longer than anyone waits for this; a Thompson NFA does not backtrack
    pattern = compile_regex("^([a-z0-9]+-?)+!$")
    start = time.perf_counter()
    for _ in range(1000):
        assert pattern.search(SEED_RUN) is False
    assert pattern.search(SEED_RUN.replace("bf16-", "bf16!")) is True
    nested = compile_regex("(a*)*(b*)*c{10,100}d")
    assert nested.search("a" * 100_000) is False
    assert time.perf_counter() - start < 5


# Differential: where RE2 and Python agree (ASCII text without newlines, no look-around),
# the answers must agree.
_ATOMS = st.sampled_from(["a", "b", "-", ".", "[ab]", "[^a]", r"\d", r"\w", "1", "(a|b)", "(?:ab)", "x"])
_QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?"])


@st.composite
def _patterns(draw):
    pieces = draw(st.lists(st.tuples(_ATOMS, _QUANTIFIERS), min_size=1, max_size=6))
    body = "".join(atom + quantifier for atom, quantifier in pieces)
    if draw(st.booleans()):
        body = "(" + body + ")" + draw(_QUANTIFIERS)
    if draw(st.booleans()):
        body += "|" + draw(_ATOMS)
    return draw(st.sampled_from(["", "^"])) + body + draw(st.sampled_from(["", "$"]))


@settings(max_examples=300, deadline=None)
@given(_patterns(), st.text(alphabet="ab-1x.", max_size=12))
def test_agrees_with_a_backtracking_engine(pattern, text):
    assert compile_regex(pattern).search(text) is (re.search(pattern, text) is not None)


@given(st.text(max_size=30))
def test_any_pattern_compiles_or_is_refused_cleanly(pattern):
    try:
        regex = compile_regex(pattern)
    except RegexError:
        return
    assert regex.search("liger-rope h100 ABC 123 \n é") in (True, False)

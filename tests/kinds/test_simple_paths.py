"""A printer column's simple field path (kidx.kinds.registry.simple_path_keys): read as the
pattern ``^(\\.[A-Za-z_][A-Za-z0-9_-]*)+$`` reads it, without compiling that pattern on every
cold ``get``; a table reads such a column by its keys and caches it in the catalog row."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kidx.kinds.registry import simple_path_keys

SIMPLE_PATH = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_-]*)+$")
# names and what may break them: dots, digits and dashes first, non-ASCII letters, blanks
_PIECES = st.sampled_from([".", "..", "spec", "status", "a", "Z", "_", "-", "0", "9", "é", " ", "\t", "/", "[", "*"])


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PIECES, max_size=8).map("".join))
def test_a_simple_path_is_what_the_pattern_matches(path):
    expected = path[1:].split(".") if SIMPLE_PATH.match(path) else None
    assert simple_path_keys(path) == expected


def test_simple_paths_and_others():
    assert simple_path_keys(".spec.timing.latencyNs.median") == ["spec", "timing", "latencyNs", "median"]
    assert simple_path_keys(".metadata.creationTimestamp") == ["metadata", "creationTimestamp"]
    assert simple_path_keys("._a-1.b_") == ["_a-1", "b_"]
    for other in ("", ".", "spec.status", ".spec..status", ".spec.", ".1st", ".-x", ".spec.naïve",
                  ".spec[0]", '.spec["status"]', "{.spec.status}", ".spec.status\n", ".spec.status\n.x"):
        assert simple_path_keys(other) is None, other

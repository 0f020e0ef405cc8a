"""YAML output: laid out by kidx, each distinct scalar written by ruamel.yaml once, and the
whole byte for byte what ruamel.yaml writes of the same value."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from kidx.output import serialize
from kidx.output.serialize import to_yaml


def by_ruamel(value) -> str:
    stream = io.StringIO()
    serialize._yaml_dumper().dump(serialize._sorted(value), stream)
    return stream.getvalue()


TRICKY = st.sampled_from([
    "", " ", "a: b", "a #b", "#x", "- x", "? x", "yes", "no", "on", "null", "~", "true", "1", "1.5", "1e3", "0x1f",
    "0o7", ".inf", "-.nan", "2025-01-01", "2025-01-01T00:00:00Z", "12:30", "@x", "`x", "!x", "&x", "*x", "%x",
    "{a}", "[1]", "'q'", '"q"', "tab\there", "ctrl\x07", "del\x7f", "caf\u00e9", "\u4e2d", "\U0001f680", "\ufeffbom",
    "line\nbreak", "cr\rx", "nel\x85x", "ls\u2028x", "trailing ", " leading", "a" * 150, "x" * 101, "-", ":", ",",
    "sha256:" + "ab" * 32, "<none>", "a,b", "%", "a\\b",
])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    TRICKY, st.text(max_size=12))
KEYS = st.one_of(TRICKY, st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(KEYS, inner, max_size=4)), max_leaves=40)


@given(st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), st.lists(VALUES, max_size=5), SCALARS))
def test_yaml_is_byte_for_byte_what_ruamel_writes(value):
    assert to_yaml(value) == by_ruamel(value)


def test_a_list_of_runs_is_written_by_ruamel_one_scalar_at_a_time_only_once(monkeypatch):
    """2,000 runs repeat their keys and most values: ruamel.yaml represents each distinct
    scalar once (in one list), never the runs' structure node by node."""
    from ruamel.yaml.representer import BaseRepresenter

    runs = [{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun",
             "metadata": {"name": f"run-{index % 50}", "labels": {"gpu": "h100", "provider": "liger"}},
             "spec": {"status": "passed", "timing": {"latencyNs": {"median": 1000.5 + index % 50, "min": 999}},
                      "measurements": [{"metric": "latency", "statistic": "p20", "value": 7, "unit": "ns"}]}}
             for index in range(2000)]
    document = serialize.as_list(runs)
    represented = []
    real = BaseRepresenter.represent_data

    def counting(self, data):
        represented.append(data)
        return real(self, data)

    monkeypatch.setattr(BaseRepresenter, "represent_data", counting)
    text = to_yaml(document)
    [listed] = [value for value in represented if isinstance(value, list)]  # the distinct scalars, in one list
    scalars = [value for value in represented if not isinstance(value, list)]
    assert len(scalars) == len({(type(value), value) for value in scalars}) == len(listed) < 200
    monkeypatch.setattr(BaseRepresenter, "represent_data", real)
    assert text == by_ruamel(document)

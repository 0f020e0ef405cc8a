"""The JSON importers against hostile shapes: keys repeated in one object, lone surrogate
escapes, nesting far beyond any real file, huge and tiny numbers. Each ends in a clear
error at its file and line, or in runs that apply takes; never a traceback, and nothing is
stored on an error. Record lines are found in time linear in the file's size."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

JSON_FORMATS = ("bmf", "google-benchmark", "nvbench", "pytest-benchmark")
NVBENCH_TEXT = (REPO / "tests" / "data" / "h200" / "nvbench.json").read_text()
GOOGLE_TEXT = (REPO / "tests" / "data" / "google-benchmark" / "results.json").read_text()


def refused(kidx, store, path, format_name: str = "bmf") -> str:
    result = kidx("import", format_name, str(path))
    assert (result.code, result.out) == (1, ""), result
    assert "unexpected" not in result.err and "Traceback" not in result.err
    assert not store.exists()
    return result.err


def test_a_repeated_bmf_benchmark_is_an_error_at_its_line(kidx, store, tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{\n "a": {"latency": {"value": 100}},\n "b": {"latency": {"value": 5}},\n'
                    ' "a": {"latency": {"value": 900}}\n}\n')
    assert refused(kidx, store, path) == (f'error: {path}, line 4: the key "a" appears twice in one object; '
                                          "expected one of each\n")


def test_a_repeated_bmf_value_key_is_an_error_at_its_line(kidx, store, tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"a": {"latency": {\n  "value": 100,\n  "value": 900}}}\n')
    assert refused(kidx, store, path) == (f'error: {path}, line 3: the key "value" appears twice in one object; '
                                          "expected one of each\n")


@pytest.mark.parametrize("format_name, text", [
    ("bmf", '{"ok": {"latency": {"value": 1}},\n "a\\ud800b": {"latency": {"value": 1}}}'),
    ("google-benchmark", GOOGLE_TEXT.replace('"name": "', '"name": "\\udc00', 1)),
    ("nvbench", NVBENCH_TEXT.replace('"name": "', '"name": "\\ud83d', 1)),
    ("pytorch-benchmark", '[{"metric": {"name": "ok", "benchmark_values": [1]}},\n'
                          ' {"metric": {"name": "latency_ms \\udc00", "benchmark_values": [1]}}]'),
    ("pytorch-benchmark", '{"metric": {"name": "ok", "benchmark_values": [1]}}\n'
                          '{"metric": {"name": "latency_ms \\ud800", "benchmark_values": [1]}}\n'),
])
def test_a_lone_surrogate_is_an_error_at_its_line(kidx, store, tmp_path, format_name, text):
    path = tmp_path / "in.json"
    path.write_text(text)
    line = next(number for number, content in enumerate(text.splitlines(), 1) if "\\ud" in content)
    err = refused(kidx, store, path, format_name)
    assert err.startswith(f"error: {path}, line {line}: the string ")
    assert err.endswith(" holds a lone surrogate escape (\\ud800-\\udfff without its pair): not a character, "
                        "so it cannot be stored\n")


def test_a_surrogate_pair_is_one_character(kidx, tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"rope \\ud83d\\ude80": {"latency": {"value": 1}}}')
    result = kidx("import", "bmf", str(path))
    assert result.code == 0, result.err
    assert kidx("get", "workload", "-o", "jsonpath={.items[0].spec.operation}").out == "rope \U0001f680"


@pytest.mark.parametrize("format_name", [*JSON_FORMATS, "pytorch-benchmark", "kernelbench", "tritonbench"])
def test_json_nested_100000_deep_is_an_error(kidx, store, tmp_path, format_name):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert refused(kidx, store, path, format_name).startswith(f"error: {path}, line 1: nested too deeply to read; ")


class ScanCounting(str):
    """A text that counts the characters its searches and counts pass over."""

    scanned = 0

    def find(self, sub, start=0, end=None):  # type: ignore[override]
        found = str.find(self, sub, start)
        ScanCounting.scanned += (len(self) if found < 0 else found) - start
        return found

    def count(self, sub, start=0, end=None):  # type: ignore[override]
        ScanCounting.scanned += (len(self) if end is None else end) - start
        return str.count(self, sub, start, end)


def test_record_lines_are_found_in_linear_time():
    from kidx.formats.framework import LineFinder

    for count in (100, 2000):
        text = json.dumps({"benchmarks": [{"name": f"BM_{i}", "x": {"name": "inner"}} for i in range(count)]},
                          indent=1)
        ScanCounting.scanned = 0
        lines = LineFinder(ScanCounting(text))
        for i in range(count):
            assert lines.line_of("name", f"BM_{i}") == 6 * i + 4
        assert ScanCounting.scanned <= 4 * len(text), (count, ScanCounting.scanned, len(text))


def test_tritonbench_json_lines_are_found_in_linear_time():
    """Each key's line is searched from where the last one was found, not from the file's
    start: 8,000 values cost a few passes over the text, not 8,000."""
    from kidx.formats.tritonbench import _Converter

    for count in (200, 8000):
        data = {f"tritonbench_softmax_fwd[x_{i}-triton_softmax]_latency": 0.01 + i / 1e6 for i in range(count)}
        text = json.dumps(data, indent=1)
        converter = _Converter(None, None)
        ScanCounting.scanned = 0
        converter.add("result.json", data, ScanCounting(text))
        assert (converter.read, converter.problems) == (count, [])
        assert [document.line for document in converter.runs][-1] == count + 1
        assert ScanCounting.scanned <= 4 * len(text), (count, ScanCounting.scanned, len(text))


# --- hypothesis: hostile BMF shapes end in runs or in a clear error ------------------------

KEYS = st.one_of(st.sampled_from(["latency", "value", "lower_value", "upper_value", "a", "a/b", "a-b"]),
                 st.text(max_size=6))
NUMBER_TEXT = st.one_of(
    st.sampled_from(["1e-320", "1e308", "1e309", "-0", "5e-324", "9" * 40, "NaN", "Infinity", "-1"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
)
SCALARS = st.one_of(NUMBER_TEXT, KEYS.map(json.dumps), st.sampled_from(['"\\ud800"', '"\\udfff x"', "null",
                                                                         "true", '"\\u0000"']))


def _object(children) -> st.SearchStrategy[str]:
    pairs = st.lists(st.tuples(st.one_of(KEYS.map(json.dumps), st.just('"\\ud800"')), children), max_size=4)
    return pairs.map(lambda items: "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}")


HOSTILE = st.recursive(SCALARS, lambda children: st.one_of(
    _object(children), st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")),
    max_leaves=12).map(lambda inner: inner) | st.integers(min_value=60, max_value=2000).map(
    lambda depth: '{"a": {"latency": {"value": ' + "[" * depth + "]" * depth + "}}}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=HOSTILE)
def test_hostile_bmf_ends_in_runs_or_a_clear_error(tmp_path_factory, text):
    from kidx.errors import InvalidInputError
    from kidx.formats.bmf.importer import convert_files
    from kidx.identity import canonical_json
    from kidx.manifests.values import check_json_data

    path = tmp_path_factory.mktemp("hostile") / "b.json"
    path.write_text(text, encoding="utf-8")
    try:
        conversion = convert_files([str(path)])
    except InvalidInputError as exc:
        assert exc.problems
        for problem in exc.problems:
            assert problem.location.source == str(path)
            assert problem.location.line is not None and problem.location.line >= 1
        return
    for document in conversion.documents:
        check_json_data(document.body)
        canonical_json(document.body).encode("utf-8")

"""Units are defined once, in kidx/units.py: the units a figure may be written in are the
CRD's, and no other module keeps its own table of time scales or display steps."""

from __future__ import annotations

import re

from conftest import REPO

from kidx import units
from kidx.kinds.registry import registry

# Google Benchmark's importer scales times by floats of its own (1.0 for ns), so the figures
# it writes stay floats (5.0, not 5): its runs' digests depend on it
OWN_SCALES = {"kidx/formats/google_benchmark.py"}


def test_the_units_a_figure_may_be_written_in_are_the_crds():
    spec = registry().resolve("runs").spec_schema["properties"]
    measurement = spec["measurements"]["items"]["properties"]["unit"]["enum"]
    samples = spec["samples"]["properties"]["unit"]["enum"]
    assert list(units.MEASUREMENT_UNITS) == measurement == samples
    assert set(units.TO_STORED) <= set(units.MEASUREMENT_UNITS)
    assert set(units.DIRECTION_BY_UNIT) <= set(units.MEASUREMENT_UNITS) | set(units.STORED_UNIT_OF.values())
    assert {unit for unit, direction in units.DIRECTION_BY_UNIT.items() if direction == units.LOWER} == {
        *units.TIME_UNITS, "bytes", units.BYTES}
    assert set(units.STORED_UNITS.values()) == {units.NANOSECONDS, units.BYTES}
    assert set(units.STORED_UNIT_OF) == set(units.TO_STORED) == set(units.MEASUREMENT_UNITS)


def test_scales_agree_with_each_other():
    assert dict(units.TIME_STEPS) == {"s": units.TIME_UNITS["s"], "ms": units.TIME_UNITS["ms"],
                                      "µs": units.TIME_UNITS["us"]}
    assert units.AXIS_SCALES["ns"] == (units.TIME_UNITS["ms"], "ms")
    assert units.AXIS_SCALES["B"] == (dict(units.BINARY_STEPS)["MiB"], "MiB")
    assert units.AXIS_SCALES["B/s"] == (dict(units.DECIMAL_STEPS)["G"], "GB/s")


def test_no_other_module_keeps_a_table_of_time_scales_or_display_steps():
    tables = re.compile(r'"us": 1e3|"µs"|\("MiB", |"GB/s"')
    keeping = {path.relative_to(REPO).as_posix() for path in (REPO / "kidx").rglob("*.py")
               if tables.search(path.read_text(encoding="utf-8"))}
    assert keeping - OWN_SCALES == {"kidx/units.py"}


def test_no_importer_scales_a_time_by_a_number_of_its_own():
    """Seconds and milliseconds become nanoseconds by TIME_UNITS (the same floats, so the
    same digests), not by a 1e9 or 1e6 written beside the importer's table."""
    scaling = re.compile(r'\* ?1e[369]\b|"ns", 1e[369]\b')
    keeping = {path.relative_to(REPO).as_posix() for path in (REPO / "kidx").rglob("*.py")
               if scaling.search(path.read_text(encoding="utf-8"))}
    assert keeping - OWN_SCALES == set()
    assert scaling.search('latency = round(seconds * 1e9, 3)') and scaling.search('("latency", "p25", "ns", 1e9)')


def test_the_metric_vocabulary_is_the_protocol_crds_with_one_direction_each():
    protocol = registry().resolve("protocols").spec_schema["properties"]["measurement"]["properties"]["metric"]
    assert list(units.METRICS) == protocol["enum"]
    for metric, (unit, direction) in units.METRICS.items():
        assert direction in (units.LOWER, units.HIGHER)
        assert f"{metric}: " in " ".join(protocol["description"].split()) or metric in protocol["description"]
        assert unit is None or unit in units.MEASUREMENT_UNITS
    assert {m: units.direction_of(m) for m in units.METRICS} == {
        "latency": "lower", "peak_memory": "lower", "memory_bandwidth": "higher", "throughput": "higher",
        "speedup": "higher", "accuracy": "higher"}
    # a metric outside the vocabulary takes its direction from its unit, else has none
    assert [units.direction_of("compile_time", "ns"), units.direction_of("tokens", "tokens/s"),
            units.direction_of("ratio_of_things", "ratio")] == ["lower", "higher", None]

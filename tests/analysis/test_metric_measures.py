"""A run's figure is its primary metric, whatever it is, with the direction kidx/units.py
gives it: measure_of on runs whose only figures are measurements."""

from __future__ import annotations

from kidx.analysis.measures import figure_median, measure_of
from kidx.analysis.significance import judge


def run(*measurements: tuple[str, str, str, float], samples: dict | None = None) -> dict:
    spec: dict = {"status": "passed", "measurements": [
        {"metric": metric, "statistic": statistic, "unit": unit, "value": value}
        for metric, statistic, unit, value in measurements]}
    if samples:
        spec["samples"] = samples
    return spec


def test_each_metric_is_its_runs_figure_with_its_direction():
    cases = {
        "memory_bandwidth": (run(("memory_bandwidth", "median", "bytes/s", 9.1e11)), "B/s", "higher"),
        "throughput": (run(("throughput", "median", "flop/s", 1.2e14)), "FLOP/s", "higher"),
        "tokens": (run(("throughput", "mean", "tokens/s", 1260.4)), "tokens/s", "higher"),
        "speedup": (run(("speedup", "median", "ratio", 1.516)), "x", "higher"),
        "accuracy": (run(("accuracy", "median", "ratio", 1.0)), "x", "higher"),
        "peak_memory": (run(("peak_memory", "median", "bytes", 2**30)), "B", "lower"),
        "compile_time": (run(("compile_time", "median", "ms", 12.5)), "ns", "lower"),
        "count": (run(("widgets", "median", "count", 7)), "", None),
    }
    for name, (spec, unit, direction) in cases.items():
        measure = measure_of(spec)
        assert measure is not None, name
        assert (measure.unit, measure.direction) == (unit, direction), name
    assert measure_of(cases["compile_time"][0]).value == 12.5e6  # in ns
    assert figure_median(cases["memory_bandwidth"][0]) == (9.1e11, "B/s")
    assert figure_median(cases["tokens"][0]) is None  # get's MEDIAN: no median written


def test_the_protocols_metric_is_the_figure_where_the_run_has_it_else_the_first():
    spec = run(("cpu_latency", "median", "ns", 5.0), ("memory_bandwidth", "median", "bytes/s", 2e9),
               samples={"metric": "memory_bandwidth", "unit": "bytes/s", "values": [1.9e9, 2e9, 2.1e9]})
    assert measure_of(spec).metric == "cpu_latency"
    chosen = measure_of(spec, {"measurement": {"metric": "memory_bandwidth"}})
    assert (chosen.metric, chosen.value, chosen.samples) == ("memory_bandwidth", 2e9, (1.9e9, 2e9, 2.1e9))
    assert measure_of(spec, None, "memory_bandwidth") == chosen  # compare --metric
    assert measure_of(spec, None, "throughput") is None
    latency = {"status": "passed", "timing": {"latencyNs": {"median": 100.0}}, **spec}
    assert measure_of(latency).metric == "latency"
    assert measure_of(latency, None, "memory_bandwidth").metric == "memory_bandwidth"


def test_more_is_better_is_faster_and_a_speedup_is_the_ratio_itself():
    more, less = measure_of(run(("memory_bandwidth", "median", "bytes/s", 2e9))), measure_of(
        run(("memory_bandwidth", "median", "bytes/s", 1e9)))
    judged = judge(more, less)
    assert (judged.ratio, judged.speedup, judged.direction_word) == (2.0, 2.0, "faster")
    memory = judge(measure_of(run(("peak_memory", "median", "bytes", 2e9))),
                   measure_of(run(("peak_memory", "median", "bytes", 1e9))))
    assert (memory.ratio, memory.speedup, memory.direction_word) == (2.0, 0.5, "slower")
    unknown = judge(measure_of(run(("widgets", "median", "count", 2))), measure_of(run(("widgets", "median", "count", 1))))
    assert (unknown.speedup, unknown.direction_word) == (None, "direction-unknown")

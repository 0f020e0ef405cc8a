"""kidx's drop-in triton.testing.do_bench: triton's signature, triton's return values
(computed as triton 3 computes them), its log line, the profiler trace it reads under
cupti, and the sitecustomize that installs it in a harness's process."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from stand_in_gpu import FAKE_GPU, stand_in_gpu  # noqa: F401 - the fixture fake_gpu

from kidx.errors import MeasurementFailed, UsageError
from kidx.timers import do_bench as replacement
from kidx.timers.profiler_trace import device_time_per_sample
from kidx.timers.settings import ENV_CACHE, ENV_LOG, ENV_TIMER
from kidx.timers.summaries import do_bench_result

SITE = REPO / "kidx" / "timers" / "site"


def test_the_signature_is_triton_3s():
    """triton.testing.do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
    return_mode="mean"); the retired fast_flush and device_type are taken by keyword."""
    parameters = inspect.signature(replacement.do_bench).parameters
    assert [(name, parameter.default) for name, parameter in parameters.items()
            if parameter.kind is parameter.POSITIONAL_OR_KEYWORD] == [
        ("fn", inspect.Parameter.empty), ("warmup", 25), ("rep", 100), ("grad_to_none", None), ("quantiles", None),
        ("return_mode", "mean")]
    assert {name for name, parameter in parameters.items() if parameter.kind is parameter.KEYWORD_ONLY} == {
        "fast_flush", "device_type"}


@pytest.mark.parametrize(("quantiles", "mode", "expected"), [
    ([0.5, 0.2, 0.8], "mean", [3.0, 1.8, 4.2]),
    ([0.5], "mean", 3.0),  # one quantile: a number, as triton returns it
    (None, "mean", 3.0), (None, "median", 3.0), (None, "min", 1.0), (None, "max", 5.0),
    (None, "all", [5.0, 1.0, 3.0, 2.0, 4.0]),
])
def test_what_it_returns_is_what_triton_returns(quantiles, mode, expected):
    assert do_bench_result([5.0, 1.0, 3.0, 2.0, 4.0], quantiles, mode) == pytest.approx(expected)


def test_an_even_count_has_statistics_median_not_the_lower_middle():
    assert do_bench_result([1.0, 2.0, 3.0, 4.0], None, "median") == 2.5


def test_it_times_with_the_timer_kidx_record_asked_for_and_logs_the_call(fake_gpu, tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(ENV_TIMER, "cuda_graph")
    monkeypatch.setenv(ENV_CACHE, "warm")
    monkeypatch.setenv(ENV_LOG, str(log))
    result = replacement.do_bench(lambda: fake_gpu.fake_kernel(0.5), warmup=1, rep=10, quantiles=[0.5, 0.2, 0.8])
    assert result == pytest.approx([0.5 + fake_gpu.GRAPH_LAUNCH_MS] * 3)
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert {key: entry[key] for key in ("timer", "requestedTimer", "fallback", "cache", "warmupMs", "repetitionMs",
                                        "quantiles", "returnMode", "callsPerSample", "smClockMHz")} == {
        "timer": "cuda_graph", "requestedTimer": "cuda_graph", "fallback": None, "cache": "warm", "warmupMs": 1.0,
        "repetitionMs": 10.0, "quantiles": [0.5, 0.2, 0.8], "returnMode": "mean", "callsPerSample": 1,
        "smClockMHz": 1980}
    assert entry["result"] == result and len(entry["samplesMs"]) == 19  # 10 ms / 0.503 ms a replay


@pytest.mark.parametrize(("arguments", "message"), [
    ({"return_mode": "p90"}, "do_bench return_mode 'p90': use min, max, mean, median, all"),
    ({"quantiles": [0.5, 1.5]}, "do_bench quantile 1.5: quantiles must be in the range [0, 1]"),
    ({"quantiles": "0.5"}, "do_bench quantiles '0.5': expected a list of fractions"),
    ({"rep": -1}, "do_bench rep: -1 is not a finite, non-negative number of milliseconds"),
])
def test_bad_arguments_are_refused_before_anything_is_timed(fake_gpu, arguments, message):
    calls = []
    with pytest.raises(UsageError) as raised:
        replacement.do_bench(lambda: calls.append(1), **arguments)
    assert str(raised.value) == message and calls == []


def trace(*events: dict) -> dict:
    return {"traceEvents": list(events)}


def window(number: int, start: float, end: float) -> dict:
    return {"ph": "X", "cat": "user_annotation", "name": f"kidx-sample-{number}", "ts": start, "dur": end - start}


def kernel(start: float, duration: float, category: str = "kernel") -> dict:
    return {"ph": "X", "cat": category, "name": "k", "ts": start, "dur": duration}


def test_a_sample_is_the_device_time_inside_its_range():
    found = device_time_per_sample(trace(
        window(1, 200.0, 300.0), window(0, 100.0, 150.0),
        kernel(90.0, 5.0),  # the flush, before the range
        kernel(101.0, 2.5), kernel(104.0, 1.5, "gpu_memcpy"), kernel(106.0, 1.0, "gpu_memset"),
        {"ph": "X", "cat": "gpu_user_annotation", "name": "kidx-sample-0", "ts": 100.0, "dur": 50.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 100.5, "dur": 4.0},
        kernel(210.0, 7.0)))
    assert found == pytest.approx([0.005, 0.007])  # ms, in sample order


@pytest.mark.parametrize(("events", "message"), [
    ((), "cupti: the profiler trace holds none of the timed calls' ranges"),
    ((window(0, 0.0, 10.0), window(1, 20.0, 30.0), kernel(1.0, 1.0)),
     "cupti: 1 of 2 timed calls launched no GPU work (kernel, copy or fill); there is no device time to report"),
])
def test_a_trace_without_device_work_is_an_error(events, message):
    with pytest.raises(MeasurementFailed) as raised:
        device_time_per_sample(trace(*events))
    assert str(raised.value) == message


def run_with_site(tmp_path: Path, code: str, extra_path: list[str]) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), *extra_path]),
                   "KIDX_TIMER_PACKAGE": str(REPO / "kidx")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=60)


def test_the_sitecustomize_replaces_do_bench_when_triton_testing_is_imported(tmp_path):
    done = run_with_site(tmp_path, "import sys; print('kidx' in sys.modules); import triton.testing as t; "
                                   "print(t.do_bench.__module__, 'kidx' in sys.modules)", [str(FAKE_GPU)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False\nkidx.timers.do_bench True\n"  # nothing loaded before triton.testing is


def test_the_sitecustomize_runs_the_one_it_hides(tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text("import os\nos.environ['HIDDEN_SITECUSTOMIZE_RAN'] = 'yes'\n")
    done = run_with_site(tmp_path, "import os; print(os.environ.get('HIDDEN_SITECUSTOMIZE_RAN'))", [str(hidden)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "yes\n"


def test_the_log_entry_counts_the_samples_dropped_at_a_low_clock(fake_gpu, tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv(ENV_TIMER, "cuda_events")
    monkeypatch.setenv(ENV_CACHE, "warm")
    monkeypatch.setenv(ENV_LOG, str(log))
    monkeypatch.setenv("KIDX_TIMER_DEFAULT_SM_MHZ", "1980")
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "1980,1980,1980,1980,1200,1980")  # the second batch ends low
    replacement.do_bench(lambda: fake_gpu.fake_kernel(0.5), warmup=1, rep=60)
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    dropped = entry["lowClockSamples"]
    assert dropped > 0 and len(entry["samplesMs"]) == entry["clockCheck"]["taken"] - dropped
    assert entry["clockCheck"] == {"referenceMHz": 1980, "boundMHz": 1485, "taken": entry["clockCheck"]["taken"],
                                   "allLow": False, "lowestMHz": 1200,
                                   "warning": f"{dropped} of {entry['clockCheck']['taken']} samples dropped: taken "
                                              "while the SM clock read below 1485 MHz (75% of the default 1980 MHz; "
                                              "lowest 1200 MHz)"}
    assert entry["persistingL2"].startswith(("reset", "not reset: ")) and entry["kernelWarning"] is None

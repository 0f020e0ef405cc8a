"""kidx's GPU timers on the stand-in GPU (fake_gpu/README.md): what each timer times, the
fall-back from a graph to CUPTI, sample counts, the L2 flush, and the errors."""

from __future__ import annotations

import statistics
import sys

import pytest
from stand_in_gpu import stand_in_gpu  # noqa: F401 - the fixture fake_gpu

import kidx
from kidx.errors import DeviceUnavailable, MeasurementFailed, UsageError
from kidx.timers.cuda import measure_samples
from kidx.timers.settings import MAX_PROFILED_SAMPLES, MIN_SAMPLES, TimerSettings, sample_count


def two_kernels(torch):
    """A host-bound call: two 2 µs kernels, each launch 30 µs of host time."""
    def call():
        torch.fake_kernel(0.002)
        torch.fake_kernel(0.002)
    return call


@pytest.mark.parametrize(("timer", "expected_ms"), [("cuda_events", 0.064), ("cuda_graph", 0.004), ("cupti", 0.004)])
def test_each_timer_times_what_it_says(fake_gpu, timer, expected_ms):
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings(timer, "cold", 1.0, 5.0))
    assert measured.timer == timer and measured.fallback is None
    assert statistics.median(measured.samples_ms) == pytest.approx(expected_ms)
    assert measured.sm_clock_mhz == 1980


def test_a_cold_graph_times_neither_the_flush_nor_the_launch(fake_gpu):
    """Cold: a graph of (flush, call) pairs and one of the flushes alone, in turn; the
    difference over the calls is the call's kernels (the 40 µs flush and the 3 µs launch
    cancel). A replay holds 0.2 ms of work: 5 pairs of 47 µs (the call's estimate being
    one replay, launch included)."""
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "cold", 1.0, 5.0))
    assert measured.calls_per_sample == 5
    assert {round(sample, 9) for sample in measured.samples_ms} == {0.004}
    assert len(measured.samples_ms) == int(5.0 / (2 * 5 * (0.007 + fake_gpu.FLUSH_MS)))


def test_a_warm_graph_replays_calls_back_to_back(fake_gpu):
    """Warm: one replay holds enough calls for 0.2 ms of work (29 calls of 7 µs, one
    replay's estimate), a sample is its time over its calls (the launch shared by them),
    and nothing is flushed."""
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "warm", 1.0, 10.0))
    assert measured.calls_per_sample == 29
    assert statistics.median(measured.samples_ms) == pytest.approx((fake_gpu.GRAPH_LAUNCH_MS + 29 * 0.004) / 29)
    assert len(measured.samples_ms) == int(10.0 / (29 * 0.007))


def test_a_call_a_graph_cannot_capture_is_timed_with_cupti_and_says_so(fake_gpu):
    def backward():
        fake_gpu.fake_kernel(0.010)
        fake_gpu.fake_uncapturable()

    measured = measure_samples(backward, TimerSettings("cuda_graph", "cold", 1.0, 5.0))
    assert measured.timer == "cupti"
    assert measured.fallback == ("the call could not be captured in a CUDA graph: "
                                 "operation not permitted when stream is capturing")
    assert statistics.median(measured.samples_ms) == pytest.approx(0.012)


def test_cupti_refuses_a_call_that_launches_no_gpu_work(fake_gpu):
    with pytest.raises(MeasurementFailed, match=r"cupti: \d+ of \d+ timed calls launched no GPU work"):
        measure_samples(lambda: None, TimerSettings("cupti", "cold", 1.0, 1.0))


def test_grad_to_none_is_cleared_before_each_call(fake_gpu):
    class Tensor:
        grad = "stale"

    seen = []
    tensor = Tensor()

    def call():
        seen.append(tensor.grad)
        tensor.grad = "accumulated"
        fake_gpu.fake_kernel(0.05)

    measure_samples(call, TimerSettings("cuda_events", "warm", 0.0, 1.0), grad_to_none=[tensor])
    # the first call (before the estimate) finds what was there; every later one a cleared gradient
    # calls: 1 first, 5 for the estimate (80 µs each), 1 warm-up, 1 ms / 80 µs = 12 samples
    assert seen[0] == "stale" and set(seen[1:]) == {None} and len(seen) == 1 + 5 + 1 + 12


@pytest.mark.parametrize(("budget", "estimate", "most", "expected"), [
    (100.0, 0.005, 10_000, 10_000), (100.0, 1.0, 10_000, 100), (10.0, 5.0, 10_000, MIN_SAMPLES),
    (100.0, 0.0, MAX_PROFILED_SAMPLES, MAX_PROFILED_SAMPLES)])
def test_sample_counts(budget, estimate, most, expected):
    assert sample_count(budget, estimate, most) == expected


def test_without_a_cuda_device_the_error_says_so(fake_gpu):
    fake_gpu.cuda.available = False
    with pytest.raises(DeviceUnavailable) as raised:
        kidx.measure(lambda: None)
    assert str(raised.value) == ("the GPU timers need a CUDA device, and torch.cuda.is_available() is False "
                                 "(no GPU, or a CPU-only build of PyTorch)")


def test_without_torch_the_error_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(DeviceUnavailable, match="^the GPU timers need PyTorch with CUDA, and this Python has no torch$"):
        kidx.measure(lambda: None)


@pytest.mark.parametrize(("arguments", "message"), [
    ({"timer": "wall"}, 'timer "wall": use cuda_graph, cupti, cuda_events'),
    ({"cache": "hot"}, 'cache "hot": use cold, warm'),
    ({"rep_ms": -1}, "rep_ms: -1 is not a finite, non-negative number of milliseconds"),
    ({"warmup_ms": "25"}, "warmup_ms: '25' is not a finite, non-negative number of milliseconds"),
])
def test_measure_refuses_bad_settings_before_touching_a_device(arguments, message):
    with pytest.raises(UsageError) as raised:
        kidx.measure(lambda: None, **arguments)
    assert str(raised.value) == message


def test_measure_gives_timings_that_record_run_takes(fake_gpu):
    timings = kidx.measure(two_kernels(fake_gpu), timer="cuda_graph", cache="cold", warmup_ms=1, rep_ms=5)
    assert timings.statistics["median"] == pytest.approx(4000.0)
    assert timings.protocol == {"harness": {"name": "kidx.measure"}, "measurement": {
        "metric": "latency", "timer": "cuda_graph", "primaryStatistic": "median", "cache": "cold",
        "warmupMs": 1.0, "repetitionMs": 5.0,
        "method": "the call captured once in a CUDA graph; each sample one replay, timed with CUDA events; "
                  "L2 cache cold: a buffer twice the size of the GPU's L2 cache written before each sample, "
                  "outside the timed region"}}
    recording = kidx.record_run(implementation={"library": "demo", "operation": "two"},
                                workload={"operation": "two", "parameters": {"n": 1}}, environment={
                                    "hardware": {"product": "Stand-in GPU"}}, timings=timings)
    assert recording.run["spec"]["samples"]["values"][0] == pytest.approx(4000.0)
    assert recording.protocol["spec"]["measurement"]["timer"] == "cuda_graph"


def test_measure_says_when_it_fell_back(fake_gpu):
    timings = kidx.measure(fake_gpu.fake_uncapturable, rep_ms=1)
    assert timings.protocol["measurement"]["timer"] == "cupti"
    assert timings.details == {"timerFallback": "cuda_graph asked for, cupti measured: the call could not be "
                                                "captured in a CUDA graph: operation not permitted when stream "
                                                "is capturing"}

"""Adaptive stopping (``max_noise``): samples until the relative standard error of their
median is under the target, or a time limit, as NVBench's noise criterion
(docs/measuring.md, "Adaptive stopping")."""

from __future__ import annotations

import math
import statistics

import pytest
from stand_in_gpu import stand_in_gpu  # noqa: F401 - the fixture fake_gpu

from kidx.errors import UsageError
from kidx.timers import cuda
from kidx.timers.cuda import measure_samples, sampled
from kidx.timers.settings import (
    ENV_MAX_NOISE,
    ENV_MAX_TIME,
    MIN_SAMPLES,
    TimerSettings,
    measurement_spec,
    settings,
    stopping_from_environment,
)
from kidx.timers.summaries import relative_standard_error


def test_the_relative_standard_error_is_the_median_s_from_its_spread():
    samples = [1.0, 1.1, 0.9, 1.0, 1.2, 0.8, 1.0]
    deviation = statistics.median(abs(v - 1.0) for v in samples)  # 0.1
    assert deviation == pytest.approx(0.1)
    expected = 1.4826 * 0.1 * math.sqrt(math.pi / 2) / math.sqrt(7) / 1.0
    assert relative_standard_error(samples) == pytest.approx(expected)
    assert relative_standard_error([5.0] * 10) == 0.0  # a quantised timer's exact repeats
    assert relative_standard_error([1.0]) == math.inf and relative_standard_error([0.0, 0.0]) == math.inf


def test_without_a_target_the_budget_s_count_is_taken():
    asked = []

    def take(n):
        asked.append(n)
        return [1.0] * n

    samples, stopped = sampled(take, TimerSettings(), 37)
    assert (len(samples), stopped, asked) == (37, None, [37])


def test_sampling_stops_once_the_median_is_precise_enough():
    values = iter([1.0, 1.2] * 10_000)
    asked = []

    def take(n):
        asked.append(n)
        return [next(values) for _ in range(n)]

    # half at 1.0, half at 1.2: a MAD of 0.1 about a median of 1.1, so 0.169 / sqrt(n): 1.05 % at
    # 160 samples, 0.94 % at 320; each round takes as many again
    samples, stopped = sampled(take, TimerSettings(max_noise=0.01, max_time_ms=60_000), 5)
    assert stopped == "noise"
    assert asked == [MIN_SAMPLES, 10, 20, 40, 80, 160] and len(samples) == 320
    assert relative_standard_error(samples) < 0.01 <= relative_standard_error(samples[:160])


def test_sampling_stops_at_the_time_limit(monkeypatch):
    clock = iter(range(0, 10_000, 1))  # each look at the clock: one more second
    monkeypatch.setattr(cuda.time, "perf_counter", lambda: float(next(clock)))
    values = iter([1.0, 2.0] * 10_000)
    samples, stopped = sampled(lambda n: [next(values) for _ in range(n)],
                               TimerSettings(max_noise=0.0001, max_time_ms=2500.0), 5)
    assert stopped == "time" and len(samples) == 40  # 10, then 20, 40 by 1 s and 2 s; past 2.5 s at 3 s


def test_sampling_stops_at_the_most_samples():
    values = iter([1.0, 2.0] * 10_000)
    samples, stopped = sampled(lambda n: [next(values) for _ in range(n)],
                               TimerSettings(max_noise=0.0001, max_time_ms=1e9), 5, most=50)
    assert (stopped, len(samples)) == ("samples", 50)


def test_the_stand_in_gpu_stops_at_its_first_samples_and_says_so(fake_gpu):
    """The stand-in's kernels take exactly their time: the first ten samples have no spread."""
    def call():
        fake_gpu.fake_kernel(0.002)

    for timer in ("cuda_graph", "cuda_events", "cupti"):
        measured = measure_samples(call, TimerSettings(timer, "cold", 1.0, 5.0, max_noise=0.005))
        assert (len(measured.samples_ms), measured.stopped_by, measured.noise) == (MIN_SAMPLES, "noise", 0.0)
    budget = measure_samples(call, TimerSettings("cuda_graph", "cold", 1.0, 5.0))
    assert budget.stopped_by is None and len(budget.samples_ms) > MIN_SAMPLES


def test_the_protocol_records_the_target_and_the_limit():
    spec = measurement_spec("cuda_graph", "cold", 25.0, 100.0, max_noise=0.005, max_time_ms=2000.0)
    assert (spec["maxNoise"], spec["maxTimeMs"]) == (0.005, 2000.0)
    assert spec["method"].endswith("; samples taken until the relative standard error of their median is under "
                                   "0.005 or 2000 ms of sampling have passed")
    assert "maxNoise" not in measurement_spec("cuda_graph", "cold", 25.0, 100.0)


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.1"])
def test_a_target_outside_0_to_1_is_refused(bad):
    with pytest.raises(UsageError, match="max_noise: .* is not a fraction between 0 and 1"):
        settings(max_noise=bad)


@pytest.mark.parametrize("bad", [0, 0.0, -5, math.inf, math.nan, True])
def test_a_time_limit_that_is_not_positive_is_refused(bad):
    """At 0 ms the limit would stop sampling before it began: kidx.measure refuses it as it
    refuses any bad setting, naming max_time_ms, before anything is timed."""
    import kidx

    with pytest.raises(UsageError, match=r"^max_time_ms: .* is not a finite, positive number of milliseconds$"):
        kidx.measure(lambda: None, max_noise=0.01, max_time_ms=bad)
    with pytest.raises(UsageError, match=r"^max_time_ms: .* is not a finite, positive number of milliseconds$"):
        settings(max_noise=0.01, max_time_ms=bad)


@pytest.mark.parametrize("bad", ["0", "0.0", "-1", "inf"])
def test_a_time_limit_from_the_environment_that_is_not_positive_is_refused(bad):
    """The harness's do_bench reads kidx record's limit from KIDX_TIMER_MAX_TIME_MS: 0 there
    is refused as --max-time 0 is, not taken as a limit that stops at once."""
    with pytest.raises(UsageError, match=rf"^{ENV_MAX_TIME}: .* is not a finite, positive number of milliseconds$"):
        stopping_from_environment({ENV_MAX_NOISE: "0.01", ENV_MAX_TIME: bad})
    assert stopping_from_environment({ENV_MAX_NOISE: "0.01", ENV_MAX_TIME: "250.0"}) == (0.01, 250.0)
    assert stopping_from_environment({ENV_MAX_NOISE: "0.01", ENV_MAX_TIME: ""}) == (0.01, 1000.0)


# --- the least time a call is sampled (kidx record --min-time) ---------------------------------

def test_a_least_time_raises_the_budget_and_keeps_adaptive_stopping_going(fake_gpu, monkeypatch):
    """A GEMM-heavy call's clock steps down while it is sampled (tests/data/h100-warmup): with
    min_time_ms the budget's samples fill that time, and a precise median stops no sooner."""
    def call():
        fake_gpu.fake_kernel(0.002)

    budget = measure_samples(call, TimerSettings("cuda_events", "warm", 1.0, 5.0))
    longer = measure_samples(call, TimerSettings("cuda_events", "warm", 1.0, 5.0, min_time_ms=50.0))
    assert len(longer.samples_ms) > 5 * len(budget.samples_ms)
    assert TimerSettings(rep_ms=100.0, min_time_ms=1000.0).budget_ms == 1000.0
    assert TimerSettings(rep_ms=100.0).budget_ms == 100.0

    clock = iter(range(0, 10_000, 1))  # each look at the clock: one more second
    monkeypatch.setattr(cuda.time, "perf_counter", lambda: float(next(clock)))
    exact = sampled(lambda n: [1.0] * n, TimerSettings(max_noise=0.01, max_time_ms=1000.0, min_time_ms=3500.0), 5)
    assert (len(exact[0]), exact[1]) == (80, "noise")  # 10, 20, 40, 80: at 1, 2, 3 s still sampling; 4 s > 3.5 s
    assert sampled(lambda n: [1.0] * n, TimerSettings(max_noise=0.01, max_time_ms=1000.0), 5)[1] == "noise"


def test_the_protocol_records_the_least_time():
    spec = measurement_spec("cuda_graph", "cold", 25.0, 100.0, min_time_ms=1000.0)
    assert spec["minTimeMs"] == 1000.0 and spec["repetitionMs"] == 100.0
    assert spec["method"].endswith("; each call sampled for at least 1000 ms")
    assert "minTimeMs" not in measurement_spec("cuda_graph", "cold", 25.0, 100.0)


def test_measure_takes_a_least_time_and_its_protocol_records_it(fake_gpu):
    """kidx.measure(..., min_time_ms=…) samples as kidx record --min-time does, and says so."""
    import kidx

    def call():
        fake_gpu.fake_kernel(0.002)

    budget = kidx.measure(call, timer="cuda_events", cache="warm", warmup_ms=1.0, rep_ms=5.0)
    longer = kidx.measure(call, timer="cuda_events", cache="warm", warmup_ms=1.0, rep_ms=5.0, min_time_ms=50.0)
    assert len(longer.samples) > 5 * len(budget.samples)
    assert longer.protocol["measurement"]["minTimeMs"] == 50.0
    assert "minTimeMs" not in budget.protocol["measurement"]
    with pytest.raises(UsageError, match=r"^min_time_ms: -1 is not a finite, non-negative number of milliseconds$"):
        kidx.measure(call, timer="cuda_events", min_time_ms=-1)

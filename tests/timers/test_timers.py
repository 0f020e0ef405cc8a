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


# --- the SM clock around batches of samples, the persisting L2, cupti's kernel counts ----------

from kidx.timers import cuda as cuda_timers  # noqa: E402 - the section's own imports
from kidx.timers.cuda import CLOCK_BATCH_MS, reset_persisting_l2  # noqa: E402


def clock_schedule(fake_gpu, monkeypatch, readings: list[int]) -> None:
    """The SM clock reads ``readings`` in turn (the first when the timer starts, then one
    before and one after each batch), then 1980 MHz; the default clock is 1980 MHz."""
    pending = iter(readings)
    monkeypatch.setattr(fake_gpu.cuda, "clock_rate", lambda: next(pending, 1980))
    monkeypatch.setenv("KIDX_TIMER_DEFAULT_SM_MHZ", "1980")


def test_a_batch_read_below_75_percent_of_the_default_clock_is_dropped(fake_gpu, monkeypatch):
    """Events samples of 0.1 ms (30 µs of host, 70 µs of kernel): batches of 10 ms hold 100
    samples; the second batch ends at 1400 MHz (below 1485, 75 % of 1980) and is dropped."""
    clock_schedule(fake_gpu, monkeypatch, [1980, 1980, 1980, 1980, 1400])
    measured = measure_samples(lambda: fake_gpu.fake_kernel(0.07), TimerSettings("cuda_events", "warm", 0.0, 50.0))
    taken, size = measured.clock.taken, measured.clock.dropped
    assert size in (int(CLOCK_BATCH_MS / 0.1) - 1, int(CLOCK_BATCH_MS / 0.1))  # 0.1 ms is inexact in binary
    assert taken in (sample_count(50.0, 0.1) - 1, sample_count(50.0, 0.1))
    assert measured.clock == cuda_timers.ClockCheck(1980, 1485, size, taken, False, 1400)
    assert len(measured.samples_ms) == taken - size
    assert measured.clock.warning() == (f"{size} of {taken} samples dropped: taken while the SM clock read below "
                                        "1485 MHz (75% of the default 1980 MHz; lowest 1400 MHz)")


@pytest.mark.parametrize(("timer", "cache"), [("cuda_graph", "warm"), ("cuda_graph", "cold"), ("cupti", "cold")])
def test_every_timer_drops_a_low_batch(fake_gpu, monkeypatch, timer, cache):
    clock_schedule(fake_gpu, monkeypatch, [1980, 1980, 1100])  # the first batch ends low
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings(timer, cache, 1.0, 40.0))
    assert measured.clock is not None and measured.clock.dropped > 0 and not measured.clock.all_low
    assert len(measured.samples_ms) == measured.clock.taken - measured.clock.dropped
    assert measured.timer == timer


def test_when_every_batch_is_low_the_samples_are_kept_and_said_to_be(fake_gpu, monkeypatch):
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "1000")
    monkeypatch.setenv("KIDX_TIMER_DEFAULT_SM_MHZ", "1980")
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "cold", 1.0, 5.0))
    assert measured.clock is not None and measured.clock.all_low and measured.clock.dropped == 0
    assert len(measured.samples_ms) == measured.clock.taken
    assert measured.clock.warning() == ("every sample was taken while the SM clock read below 1485 MHz (75% of the "
                                        "default 1980 MHz; lowest 1000 MHz): they are kept, as nothing else was "
                                        "measured")


def test_without_a_default_clock_or_nvml_nothing_is_checked_or_batched(fake_gpu, monkeypatch):
    monkeypatch.delenv("KIDX_TIMER_DEFAULT_SM_MHZ", raising=False)
    monkeypatch.setattr(cuda_timers, "_nvml_reference_clock", lambda uuid: None)
    assert measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "cold", 1.0, 5.0)).clock is None
    monkeypatch.setenv("KIDX_TIMER_DEFAULT_SM_MHZ", "1980")
    monkeypatch.setenv("FAKE_GPU_SM_CLOCK", "no-nvml")  # nvidia-smi is too slow to ask between batches
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "cold", 1.0, 5.0))
    assert measured.clock is None
    assert len(measured.samples_ms) == int(5.0 / (2 * 5 * (0.007 + fake_gpu.FLUSH_MS)))  # as before


def test_the_default_clock_comes_from_nvml_by_the_devices_uuid(fake_gpu, monkeypatch):
    asked = []

    class Nvml:
        NVML_CLOCK_SM = 1

        @staticmethod
        def nvmlInit():
            pass

        @staticmethod
        def nvmlShutdown():
            pass

        @staticmethod
        def nvmlDeviceGetHandleByUUID(uuid):
            asked.append(uuid)
            return "handle"

        @staticmethod
        def nvmlDeviceGetDefaultApplicationsClock(handle, clock):
            raise RuntimeError("Not Supported")

        @staticmethod
        def nvmlDeviceGetMaxClockInfo(handle, clock):
            return 1755

    monkeypatch.delenv("KIDX_TIMER_DEFAULT_SM_MHZ", raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", Nvml)
    monkeypatch.setattr(cuda_timers, "_REFERENCE_CLOCKS", {})
    assert cuda_timers.reference_sm_clock(fake_gpu) == 1755  # no default applications clock: the maximum
    assert asked == ["GPU-0b8f2d4e-1111-2222-3333-444455556666"]


def test_the_cold_flush_is_twice_the_devices_l2(fake_gpu):
    assert cuda_timers._flush_buffer(fake_gpu).size == 2 * fake_gpu.cuda.get_device_properties(0).L2_cache_size


class Library:
    def __init__(self, result):
        self.result = result

    def cuCtxResetPersistingL2Cache(self):  # noqa: N802 - the driver's name
        return self.result


def test_the_persisting_l2_is_reset_through_the_driver_and_the_result_says_so(fake_gpu, monkeypatch):
    loaded = []
    monkeypatch.setattr(cuda_timers, "_load_library", lambda name: loaded.append(name) or Library(0))
    assert measure_samples(two_kernels(fake_gpu), TimerSettings("cuda_graph", "cold", 1.0, 5.0)).persisting_l2 == (
        "reset")
    assert loaded == ["libcuda.so.1"]


def test_a_persisting_l2_that_cannot_be_reset_never_fails_the_measurement(fake_gpu, monkeypatch):
    def load(name):
        if name == "libcuda.so.1":
            return Library(201)
        raise OSError(f"{name}: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(cuda_timers, "_load_library", load)
    assert reset_persisting_l2(fake_gpu) == (
        "not reset: cuCtxResetPersistingL2Cache returned error 201; cudaCtxResetPersistingL2Cache: libcudart.so: "
        "cannot open shared object file: No such file or directory")
    measured = measure_samples(two_kernels(fake_gpu), TimerSettings("cupti", "cold", 1.0, 5.0))
    assert measured.persisting_l2.startswith("not reset: ") and measured.samples_ms


def test_cupti_reports_timed_calls_with_fewer_kernels_than_the_untimed_one(fake_gpu):
    """The untimed call, profiled first, launches two kernels; every timed call one (as
    when CUPTI loses a kernel's record): the timed time is reported as incomplete."""
    from torch import profiler

    def call():
        fake_gpu.fake_kernel(0.003)
        if not profiler._ranges:  # before the untimed call's range has closed
            fake_gpu.fake_kernel(0.002)

    measured = measure_samples(call, TimerSettings("cupti", "cold", 1.0, 1.0))
    count = len(measured.samples_ms)
    assert measured.kernel_warning == (
        f"cupti: {count} of {count} timed calls launched another number of kernels, copies and fills (1) than the "
        f"untimed call (2); in {count} of them work missing from the capture was not timed")


def test_cupti_says_nothing_when_every_call_launches_the_same_kernels(fake_gpu):
    assert measure_samples(two_kernels(fake_gpu), TimerSettings("cupti", "cold", 1.0, 1.0)).kernel_warning is None

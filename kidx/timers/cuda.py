"""The GPU timers, on PyTorch's CUDA API (imported only when a timer runs).

Each returns samples in milliseconds, one per timed call, after do_bench's warm-up:

- ``cuda_events``: CUDA events around each call, as ``triton.testing.do_bench`` records
  them: the host's Python, autograd and launch latency inside the call are timed too
  whenever the GPU waits for them;
- ``cuda_graph``: the call captured in a CUDA graph (after three calls on a side stream,
  as PyTorch's documentation asks), replays timed with CUDA events. One replay holds
  enough calls (at least ``WARM_REPLAY_MS`` of work) that the host queues the next while
  the GPU runs it, so no host time is timed and a graph's launch is shared by its calls.
  Warm: the calls back to back, a sample the replay's time over its calls. Cold: each
  call preceded by the L2 flush, and a second graph of the flushes alone replayed in turn
  with it; a sample is the difference over the calls. ``grad_to_none`` is honoured before
  the capture only: a replay writes the same gradient buffers each time;
- ``cupti``: the device time of every kernel, copy and fill the call launched, from
  CUPTI activity records through ``torch.profiler``, summed per call
  (``kidx.timers.profiler_trace``); for what a graph cannot capture.

A call that cannot be captured (a retained autograd graph's backward, code that
synchronises the host) is timed with ``cupti`` instead, and the result says so.

Around the samples (``ClockWatch``): where the GPU's default SM clock is known and the
clock can be read cheaply (NVML, through ``torch.cuda.clock_rate``), the samples are
taken in batches of about ``CLOCK_BATCH_MS`` of device time, the SM clock read just
before and just after each; a batch either reading puts below ``LOW_CLOCK_SHARE`` of the
default clock is dropped, and the count is kept. Before timing, the device's persisting
L2 lines are reset (``reset_persisting_l2``, through the driver's
``cuCtxResetPersistingL2Cache``; never an error, and the result says whether it was
done). Under ``cupti`` one untimed call is profiled first, and a timed call whose count
of kernels, copies and fills differs from it is reported (``kernel_warning``): a kernel
missing from a capture is never silently untimed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from kidx.errors import DeviceUnavailable, MeasurementFailed
from kidx.records import NamedTuple
from kidx.timers.profiler_trace import REFERENCE_RANGE, SAMPLE_PREFIX, device_time_per_sample, kernel_count_warning
from kidx.timers.settings import (
    ENV_REFERENCE_SM,
    MAX_PROFILED_SAMPLES,
    MAX_SAMPLES,
    MIN_SAMPLES,
    TimerSettings,
    sample_count,
)
from kidx.timers.summaries import relative_standard_error

#: the least work one warm graph replay holds, so the host stays ahead of the GPU
WARM_REPLAY_MS = 0.2
#: the most calls captured in one warm graph
MAX_CALLS_PER_REPLAY = 1000
#: calls that estimate a call's time before the budgets are turned into counts
ESTIMATE_CALLS = 5
#: the flush buffer when the device does not say its L2 size
DEFAULT_FLUSH_BYTES = 256 * 2**20
#: how long nvidia-smi may take to say the SM clock when NVML's Python binding is missing
SMI_TIMEOUT_S = 10
#: a batch of samples with an SM clock reading below this share of the default clock is dropped
LOW_CLOCK_SHARE = 0.75
#: the device time of one batch of samples between two readings of the SM clock
CLOCK_BATCH_MS = 10.0
#: where the driver's persisting-L2 reset is looked for: (library, function), in turn
PERSISTING_L2_RESETS = (("libcuda.so.1", "cuCtxResetPersistingL2Cache"),
                        ("libcudart.so", "cudaCtxResetPersistingL2Cache"))


class Measured(NamedTuple):
    """Samples (ms) and how they were taken."""

    samples_ms: list[float]
    timer: str  # the timer that measured: cupti where a cuda_graph capture failed
    fallback: str | None  # why the timer differs from the one asked for
    calls_per_sample: int
    sm_clock_mhz: int | None  # the SM clock just after timing, where NVML or nvidia-smi can say
    clock: ClockCheck | None = None  # the samples held to the default SM clock; None: not checked
    persisting_l2: str | None = None  # "reset", or why the persisting L2 lines were not reset
    kernel_warning: str | None = None  # cupti: timed calls whose kernel count differs from the untimed call's
    noise: float | None = None  # the relative standard error of the samples' median
    stopped_by: str | None = None  # with max_noise: "noise", "time" or "samples" (what ended the sampling)


class ClockCheck(NamedTuple):
    """What the batches' SM clock readings did to the samples."""

    reference_mhz: int  # the default SM clock
    bound_mhz: int  # LOW_CLOCK_SHARE of it
    dropped: int  # samples dropped, their batch read below the bound
    taken: int  # samples taken, dropped ones included
    all_low: bool  # every batch read below the bound: the samples were kept (nothing else was measured)
    lowest_mhz: int | None  # the lowest reading

    def warning(self) -> str | None:
        if self.all_low:
            return (f"every sample was taken while the SM clock read below {self.bound_mhz} MHz "
                    f"({LOW_CLOCK_SHARE:.0%} of the default {self.reference_mhz} MHz; lowest {self.lowest_mhz} MHz): "
                    "they are kept, as nothing else was measured")
        if self.dropped:
            return (f"{self.dropped} of {self.taken} samples dropped: taken while the SM clock read below "
                    f"{self.bound_mhz} MHz ({LOW_CLOCK_SHARE:.0%} of the default {self.reference_mhz} MHz; "
                    f"lowest {self.lowest_mhz} MHz)")
        return None


class ClockWatch:
    """The SM clock read before and after each batch of samples (``in_batches``, or ``mark``
    and ``kept`` where the caller loops itself); inactive, nothing is read and the samples
    are taken at once, where ``read`` or the default clock is unknown. It also carries
    back what the cupti timer found of the calls' kernel counts."""

    def __init__(self, read: Callable[[], int | None] | None, reference_mhz: int | None):
        try:
            first = read() if read is not None and reference_mhz else None
        except Exception:  # no NVML binding: the clock is not checked between batches
            first = None
        self.read = read if first is not None else None
        self.reference_mhz = reference_mhz
        self.bound = int(LOW_CLOCK_SHARE * reference_mhz) if self.read is not None and reference_mhz else 0
        self.readings: list[int | None] = []
        self.check: ClockCheck | None = None
        self.kernel_warning: str | None = None  # what the cupti timer found of the calls' kernel counts

    @property
    def active(self) -> bool:
        return self.read is not None

    def batch_size(self, sample_ms: float) -> int:
        return max(1, int(CLOCK_BATCH_MS / sample_ms)) if sample_ms > 0 else MAX_CALLS_PER_REPLAY

    def mark(self) -> None:
        try:
            self.readings.append(self.read() if self.read is not None else None)
        except Exception:  # a reading that fails is unknown, never low
            self.readings.append(None)

    def in_batches(self, torch: Any, count: int, sample_ms: float, take: Callable[[int], list],
                lead: Callable[[], None] = lambda: None) -> list:
        """``count`` samples from ``take(n)`` (which synchronises), in batches of about
        CLOCK_BATCH_MS; ``lead`` runs untimed before each batch, so that the host is
        ahead of the GPU again after the synchronisation."""
        if not self.active:
            return take(count)
        size = self.batch_size(sample_ms)
        self.readings = []
        samples: list = []
        while len(samples) < count:
            torch.cuda.synchronize()
            self.mark()
            lead()
            samples.extend(take(min(size, count - len(samples))))
            self.mark()
        return self.kept(samples, size, paired=True)

    def kept(self, samples: list, size: int, paired: bool = False) -> list:
        """The samples of the batches (``size`` each) whose readings are not low:
        ``readings`` holds a reading before and after each batch (``paired``), else one
        between each two batches and one after the last."""
        if not self.active or self.reference_mhz is None:
            return samples
        keep, dropped = [], 0
        for batch, start in enumerate(range(0, len(samples), size)):
            readings = self.readings[2 * batch:2 * batch + 2] if paired else self.readings[batch:batch + 2]
            if any(reading is not None and reading < self.bound for reading in readings):
                dropped += len(samples[start:start + size])
            else:
                keep.extend(samples[start:start + size])
        known = [reading for reading in self.readings if reading is not None]
        all_low = not keep
        check = ClockCheck(self.reference_mhz, self.bound, 0 if all_low else dropped, len(samples), all_low,
                           min(known) if known else None)
        if self.check is not None:  # an earlier round of the same call (adaptive stopping): the two summed
            lowest = [mhz for mhz in (self.check.lowest_mhz, check.lowest_mhz) if mhz is not None]
            check = check._replace(dropped=self.check.dropped + check.dropped, taken=self.check.taken + check.taken,
                                   all_low=self.check.all_low and check.all_low,
                                   lowest_mhz=min(lowest) if lowest else None)
        self.check = check
        return samples if all_low else keep


class _CaptureFailed(Exception):
    pass


def cuda_torch() -> Any:
    """PyTorch, with a CUDA device; DeviceUnavailable otherwise."""
    try:
        import torch
    except ImportError:
        raise DeviceUnavailable("the GPU timers need PyTorch with CUDA, and this Python has no torch") from None
    if not torch.cuda.is_available():
        raise DeviceUnavailable("the GPU timers need a CUDA device, and torch.cuda.is_available() is False "
                                "(no GPU, or a CPU-only build of PyTorch)")
    return torch


_FLUSH_BUFFERS: dict[int, Any] = {}


def _flush_buffer(torch: Any) -> Any:
    """A buffer twice the size of the current device's L2 cache, made once per device."""
    device = torch.cuda.current_device()
    buffer = _FLUSH_BUFFERS.get(device)
    if buffer is None:
        l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
        size = 2 * l2_bytes if l2_bytes > 0 else DEFAULT_FLUSH_BYTES
        buffer = _FLUSH_BUFFERS[device] = torch.empty(size, dtype=torch.int8, device="cuda")
    return buffer


def _clear(grad_to_none: Sequence[Any] | None) -> None:
    for tensor in grad_to_none or ():
        tensor.grad = None


def _event(torch: Any) -> Any:
    return torch.cuda.Event(enable_timing=True)


def _estimate_ms(torch: Any, call: Callable[[], Any], before: Callable[[], None]) -> float:
    """The time of one call (with what runs before it), from a few calls after a first."""
    call()
    torch.cuda.synchronize()
    start, end = _event(torch), _event(torch)
    start.record()
    for _ in range(ESTIMATE_CALLS):
        before()
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / ESTIMATE_CALLS


def _warm_up(call: Callable[[], Any], before: Callable[[], None], warmup_ms: float, estimate_ms: float) -> None:
    for _ in range(max(1, int(warmup_ms / estimate_ms)) if estimate_ms > 0 else 1):
        before()
        call()


def _events_around(torch: Any, call: Callable[[], Any], before: Callable[[], None], count: int) -> list[float]:
    starts = [_event(torch) for _ in range(count)]
    ends = [_event(torch) for _ in range(count)]
    for start, end in zip(starts, ends):
        before()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in zip(starts, ends)]


def _preparation(torch: Any, settings: TimerSettings, grad_to_none: Sequence[Any] | None) -> Callable[[], None]:
    """What runs before each sample: gradients cleared, the L2 flushed when cold."""
    flush = _flush_buffer(torch) if settings.cache == "cold" else None

    def before() -> None:
        _clear(grad_to_none)
        if flush is not None:
            flush.zero_()

    return before


def sampled(take: Callable[[int], list[float]], settings: TimerSettings, count: int,
            most: int = MAX_SAMPLES) -> tuple[list[float], str | None]:
    """The samples, ``take(n)`` giving n more: ``count`` of them (do_bench's budget), or with
    ``settings.max_noise`` (adaptive stopping, as NVBench's noise criterion) MIN_SAMPLES
    first, then as many again each round, until the relative standard error of their
    median is under the target, ``max_time_ms`` of sampling has passed, or ``most`` are
    taken, never stopping for the noise before ``settings.min_time_ms`` has passed; the
    second value says which ended it (None: the budget)."""
    if settings.max_noise is None:
        return take(count), None
    started = time.perf_counter()
    samples = take(min(MIN_SAMPLES, most))
    while True:
        elapsed_ms = (time.perf_counter() - started) * 1000
        if relative_standard_error(samples) < settings.max_noise and elapsed_ms >= settings.min_time_ms:
            return samples, "noise"
        if len(samples) >= most:
            return samples, "samples"
        if elapsed_ms >= max(settings.max_time_ms, settings.min_time_ms):
            return samples, "time"
        samples += take(min(max(len(samples), MIN_SAMPLES), most - len(samples)))


def time_with_events(torch: Any, fn: Callable[[], Any], settings: TimerSettings,
                     grad_to_none: Sequence[Any] | None,
                     watch: ClockWatch | None = None) -> tuple[list[float], int, str | None]:
    before = _preparation(torch, settings, grad_to_none)
    estimate = _estimate_ms(torch, fn, before)
    _warm_up(fn, before, settings.warmup_ms, estimate)
    watch = watch or ClockWatch(None, None)
    samples, stopped_by = sampled(
        lambda count: watch.in_batches(torch, count, estimate, lambda n: _events_around(torch, fn, before, n)),
        settings, sample_count(settings.budget_ms, estimate))
    return samples, 1, stopped_by


def _captured(torch: Any, fn: Callable[[], Any], grad_to_none: Sequence[Any] | None, calls: int) -> Any:
    """A CUDA graph of ``calls`` calls of ``fn``; _CaptureFailed when it cannot be made."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                _clear(grad_to_none)
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        _clear(grad_to_none)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        torch.cuda.synchronize()
        return graph
    except Exception as exc:  # whatever the capture raised: the call is timed another way
        reason = " ".join(str(exc).split()) or type(exc).__name__
        _recover_from_failed_capture(torch, reason)
        raise _CaptureFailed(reason[:300]) from None


def _recover_from_failed_capture(torch: Any, reason: str) -> None:
    """A capture that failed leaves the CUDA random generator in capture mode (its next use
    outside a graph raises "Offset increment outside graph capture"); a capture that
    succeeds takes it out again, so one of a single fill is made and dropped."""
    try:
        torch.cuda.synchronize()
        scratch = torch.zeros(1, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            scratch.add_(1)
        torch.cuda.synchronize()
    except Exception as after:
        raise MeasurementFailed(f"cuda_graph: the capture failed ({reason}) and left the device unusable "
                                f"({' '.join(str(after).split())})") from None


def _replay_times(torch: Any, graphs: Sequence[Any], count: int) -> list[list[float]]:
    """``count`` timed replays of each graph, the graphs alternating."""
    events = [[(_event(torch), _event(torch)) for _ in range(count)] for _ in graphs]
    for index in range(count):
        for graph, timed in zip(graphs, events):
            start, end = timed[index]
            start.record()
            graph.replay()
            end.record()
    torch.cuda.synchronize()
    return [[start.elapsed_time(end) for start, end in timed] for timed in events]


def time_with_graph(torch: Any, fn: Callable[[], Any], settings: TimerSettings,
                    grad_to_none: Sequence[Any] | None,
                    watch: ClockWatch | None = None) -> tuple[list[float], int, str | None]:
    """Warm: a graph of enough calls to keep the host ahead, each sample its replay over
    its calls. Cold: a graph of that many (flush, call) pairs and one of the flushes alone,
    replayed in turn; a sample is the difference over the calls, so neither the flush nor
    the graph's launch is timed."""
    single = _captured(torch, fn, grad_to_none, 1)  # also proves that the call can be captured
    estimate = _estimate_ms(torch, single.replay, lambda: None)
    graphs = [single]
    if settings.cache == "cold":
        flush = _flush_buffer(torch)
        per_call = estimate + _estimate_ms(torch, flush.zero_, lambda: None)
        calls = _calls_per_replay(per_call)

        def flushed_call() -> None:
            flush.zero_()
            fn()

        graphs = [_captured(torch, flush.zero_, None, calls), _captured(torch, flushed_call, grad_to_none, calls)]
    else:
        per_call = estimate
        calls = _calls_per_replay(per_call)
        if calls > 1:
            graphs = [_captured(torch, fn, grad_to_none, calls)]
    replay_ms = per_call * calls * len(graphs)
    for _ in range(max(1, int(settings.warmup_ms / replay_ms)) if replay_ms > 0 else 1):
        for graph in graphs:
            graph.replay()
    def lead() -> None:  # the GPU busy again before a batch's first timed replay is queued
        for graph in graphs:
            graph.replay()

    watch = watch or ClockWatch(None, None)

    def take(count: int) -> list[float]:
        per_sample = watch.in_batches(torch, count, replay_ms, lambda n: list(zip(*_replay_times(torch, graphs, n))),
                                   lead)
        times = [list(column) for column in zip(*per_sample)]
        if not times:  # every sample dropped
            return []
        if len(times) == 1:
            return [total / calls for total in times[0]]
        flushes, both = times
        return [max(0.0, (total - alone) / calls) for alone, total in zip(flushes, both)]

    samples, stopped_by = sampled(take, settings, sample_count(settings.budget_ms, replay_ms))
    return samples, calls, stopped_by


def _calls_per_replay(per_call_ms: float) -> int:
    if per_call_ms <= 0:
        return MAX_CALLS_PER_REPLAY
    return max(1, min(MAX_CALLS_PER_REPLAY, math.ceil(WARM_REPLAY_MS / per_call_ms)))


def time_with_cupti(torch: Any, fn: Callable[[], Any], settings: TimerSettings,
                    grad_to_none: Sequence[Any] | None,
                    watch: ClockWatch | None = None) -> tuple[list[float], int, str | None]:
    """Each sample the device time of one call; in each profile one untimed call is
    profiled first (its range ``REFERENCE_RANGE``), and ``watch.kernel_warning`` says which
    timed calls launched another number of kernels, copies and fills than it."""
    before = _preparation(torch, settings, grad_to_none)
    estimate = _estimate_ms(torch, fn, before)
    _warm_up(fn, before, settings.warmup_ms, estimate)
    watch = watch or ClockWatch(None, None)
    samples, stopped_by = sampled(lambda count: _profiled(torch, fn, before, count, watch, estimate), settings,
                                  sample_count(settings.budget_ms, estimate, MAX_PROFILED_SAMPLES),
                                  MAX_PROFILED_SAMPLES)
    return samples, 1, stopped_by


def _profiled(torch: Any, fn: Callable[[], Any], before: Callable[[], None], count: int, watch: ClockWatch,
              estimate: float) -> list[float]:
    """``count`` calls traced by torch.profiler after one untimed call: each one's device time."""
    from torch.profiler import ProfilerActivity, profile, record_function

    size = watch.batch_size(estimate)
    watch.readings = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        before()
        torch.cuda.synchronize()
        with record_function(REFERENCE_RANGE):
            fn()
            torch.cuda.synchronize()
        for number in range(count):
            before()
            torch.cuda.synchronize()
            if watch.active and number % size == 0:
                watch.mark()
            with record_function(f"{SAMPLE_PREFIX}{number}"):
                fn()
                torch.cuda.synchronize()
        if watch.active:
            watch.mark()
    with tempfile.TemporaryDirectory(prefix="kidx-cupti-") as folder:
        path = os.path.join(folder, "trace.json")
        profiler.export_chrome_trace(path)
        with open(path, encoding="utf-8") as handle:
            trace = json.load(handle)
    samples = device_time_per_sample(trace)
    watch.kernel_warning = watch.kernel_warning or kernel_count_warning(trace)
    return watch.kept(samples, size)


def _sm_clock(torch: Any) -> int | None:
    """The current device's SM clock (MHz): through NVML's Python binding where PyTorch finds
    it, else from nvidia-smi; None where neither can say (never an error)."""
    try:
        return int(torch.cuda.clock_rate())
    except Exception:  # the binding is missing or refused: ask nvidia-smi
        return _sm_clock_from_nvidia_smi(torch)


def _sm_clock_from_nvidia_smi(torch: Any) -> int | None:
    program = shutil.which("nvidia-smi")
    try:
        uuid = torch.cuda.get_device_properties(torch.cuda.current_device()).uuid
    except Exception:  # no UUID: nvidia-smi's numbering may not be PyTorch's, so say nothing
        return None
    if program is None or uuid is None:
        return None
    name = str(uuid)
    if not name.startswith(("GPU-", "MIG-")):
        name = f"GPU-{name}"
    try:
        done = subprocess.run([program, f"--id={name}", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=SMI_TIMEOUT_S)
        return int(done.stdout.split()[0]) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def _clock_reader(torch: Any) -> Callable[[], int | None]:
    """The current device's SM clock through NVML (``torch.cuda.clock_rate``): cheap enough
    to read between batches of samples (nvidia-smi is not; it is never asked here)."""
    def read() -> int | None:
        return int(torch.cuda.clock_rate())
    return read


_REFERENCE_CLOCKS: dict[str, int | None] = {}


def reference_sm_clock(torch: Any, environ: dict[str, str] | None = None) -> int | None:
    """The current device's default SM clock (MHz): what kidx record read (``KIDX_TIMER_DEFAULT_SM_MHZ``),
    else NVML's default applications clock, else its maximum; None where none can say."""
    named = (os.environ if environ is None else environ).get(ENV_REFERENCE_SM, "")
    if named.isascii() and named.isdigit() and int(named) > 0:
        return int(named)
    try:
        uuid = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
    except Exception:
        return None
    if uuid not in _REFERENCE_CLOCKS:
        _REFERENCE_CLOCKS[uuid] = _nvml_reference_clock(uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}")
    return _REFERENCE_CLOCKS[uuid]


def _nvml_reference_clock(uuid: str) -> int | None:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # no binding, no driver: unknown
        return None
    try:
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
        for call in (pynvml.nvmlDeviceGetDefaultApplicationsClock, pynvml.nvmlDeviceGetMaxClockInfo):
            try:
                value = int(call(handle, pynvml.NVML_CLOCK_SM))
            except Exception:
                continue
            if value > 0:
                return value
        return None
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _load_library(name: str) -> Any:
    import ctypes

    return ctypes.CDLL(name)


def reset_persisting_l2(torch: Any) -> str:
    """Reset the current context's persisting L2 lines to normal ones (what an earlier
    ``cudaAccessPolicyWindow`` left persisting would otherwise stay in L2 between
    samples): ``"reset"``, or why it was not done. PyTorch has no API for it, so the
    driver's ``cuCtxResetPersistingL2Cache`` (else the runtime's) is called through
    ctypes. Never an error: the measurement goes on either way, and says which."""
    try:
        torch.cuda.synchronize()  # the device's context is made and current
    except Exception as exc:
        return f"not reset: {' '.join(str(exc).split()) or type(exc).__name__}"
    reasons = []
    for library, function in PERSISTING_L2_RESETS:
        try:
            result = int(getattr(_load_library(library), function)())
        except Exception as exc:  # no such library or function here
            reasons.append(f"{function}: {' '.join(str(exc).split()) or type(exc).__name__}")
            continue
        if result == 0:
            return "reset"
        reasons.append(f"{function} returned error {result}")
    return "not reset: " + "; ".join(reasons)


def measure_samples(fn: Callable[[], Any], settings: TimerSettings,
                    grad_to_none: Sequence[Any] | None = None) -> Measured:
    """Time ``fn`` with ``settings``; the result names the timer that measured."""
    if not callable(fn):
        raise MeasurementFailed(f"expected a callable to time, got {type(fn).__name__}")
    torch = cuda_torch()
    persisting_l2 = reset_persisting_l2(torch)
    watch = ClockWatch(_clock_reader(torch), reference_sm_clock(torch))
    timer, fallback = settings.timer, None
    if timer == "cuda_events":
        samples, calls, stopped_by = time_with_events(torch, fn, settings, grad_to_none, watch)
    elif timer == "cuda_graph":
        try:
            samples, calls, stopped_by = time_with_graph(torch, fn, settings, grad_to_none, watch)
        except _CaptureFailed as failed:
            timer, fallback = "cupti", f"the call could not be captured in a CUDA graph: {failed}"
            samples, calls, stopped_by = time_with_cupti(torch, fn, settings, grad_to_none, watch)
    else:
        samples, calls, stopped_by = time_with_cupti(torch, fn, settings, grad_to_none, watch)
    noise = relative_standard_error(samples)
    return Measured(samples, timer, fallback, calls, _sm_clock(torch), watch.check, persisting_l2,
                    watch.kernel_warning, noise if math.isfinite(noise) else None, stopped_by)

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
from kidx.timers.profiler_trace import SAMPLE_PREFIX, device_time_per_sample
from kidx.timers.settings import (
    MAX_PROFILED_SAMPLES,
    MAX_SAMPLES,
    MIN_SAMPLES,
    TimerSettings,
    relative_standard_error,
    sample_count,
)

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


class Measured(NamedTuple):
    """Samples (ms) and how they were taken."""

    samples_ms: list[float]
    timer: str  # the timer that measured: cupti where a cuda_graph capture failed
    fallback: str | None  # why the timer differs from the one asked for
    calls_per_sample: int
    sm_clock_mhz: int | None  # the SM clock just after timing, where NVML or nvidia-smi can say
    noise: float | None = None  # the relative standard error of the samples' median
    stopped_by: str | None = None  # with max_noise: "noise", "time" or "samples" (what ended the sampling)


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
    taken; the second value says which ended it (None: the budget)."""
    if settings.max_noise is None:
        return take(count), None
    started = time.perf_counter()
    samples = take(min(MIN_SAMPLES, most))
    while True:
        if relative_standard_error(samples) < settings.max_noise:
            return samples, "noise"
        if len(samples) >= most:
            return samples, "samples"
        if (time.perf_counter() - started) * 1000 >= settings.max_time_ms:
            return samples, "time"
        samples += take(min(len(samples), most - len(samples)))


def time_with_events(torch: Any, fn: Callable[[], Any], settings: TimerSettings,
                     grad_to_none: Sequence[Any] | None) -> tuple[list[float], int, str | None]:
    before = _preparation(torch, settings, grad_to_none)
    estimate = _estimate_ms(torch, fn, before)
    _warm_up(fn, before, settings.warmup_ms, estimate)
    samples, stopped_by = sampled(lambda n: _events_around(torch, fn, before, n), settings,
                                  sample_count(settings.rep_ms, estimate))
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
                    grad_to_none: Sequence[Any] | None) -> tuple[list[float], int, str | None]:
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

    def take(count: int) -> list[float]:
        times = _replay_times(torch, graphs, count)
        if len(times) == 1:
            return [total / calls for total in times[0]]
        flushes, both = times
        return [max(0.0, (total - alone) / calls) for alone, total in zip(flushes, both)]

    samples, stopped_by = sampled(take, settings, sample_count(settings.rep_ms, replay_ms))
    return samples, calls, stopped_by


def _calls_per_replay(per_call_ms: float) -> int:
    if per_call_ms <= 0:
        return MAX_CALLS_PER_REPLAY
    return max(1, min(MAX_CALLS_PER_REPLAY, math.ceil(WARM_REPLAY_MS / per_call_ms)))


def time_with_cupti(torch: Any, fn: Callable[[], Any], settings: TimerSettings,
                    grad_to_none: Sequence[Any] | None) -> tuple[list[float], int, str | None]:
    before = _preparation(torch, settings, grad_to_none)
    estimate = _estimate_ms(torch, fn, before)
    _warm_up(fn, before, settings.warmup_ms, estimate)
    samples, stopped_by = sampled(lambda count: _profiled(torch, fn, before, count), settings,
                                  sample_count(settings.rep_ms, estimate, MAX_PROFILED_SAMPLES), MAX_PROFILED_SAMPLES)
    return samples, 1, stopped_by


def _profiled(torch: Any, fn: Callable[[], Any], before: Callable[[], None], count: int) -> list[float]:
    """``count`` calls traced by torch.profiler: each one's device time."""
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
        for number in range(count):
            before()
            torch.cuda.synchronize()
            with record_function(f"{SAMPLE_PREFIX}{number}"):
                fn()
                torch.cuda.synchronize()
    with tempfile.TemporaryDirectory(prefix="kidx-cupti-") as folder:
        path = os.path.join(folder, "trace.json")
        profiler.export_chrome_trace(path)
        with open(path, encoding="utf-8") as handle:
            trace = json.load(handle)
    return device_time_per_sample(trace)


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


def measure_samples(fn: Callable[[], Any], settings: TimerSettings,
                    grad_to_none: Sequence[Any] | None = None) -> Measured:
    """Time ``fn`` with ``settings``; the result names the timer that measured."""
    if not callable(fn):
        raise MeasurementFailed(f"expected a callable to time, got {type(fn).__name__}")
    torch = cuda_torch()
    timer, fallback = settings.timer, None
    if timer == "cuda_events":
        samples, calls, stopped_by = time_with_events(torch, fn, settings, grad_to_none)
    elif timer == "cuda_graph":
        try:
            samples, calls, stopped_by = time_with_graph(torch, fn, settings, grad_to_none)
        except _CaptureFailed as failed:
            timer, fallback = "cupti", f"the call could not be captured in a CUDA graph: {failed}"
            samples, calls, stopped_by = time_with_cupti(torch, fn, settings, grad_to_none)
    else:
        samples, calls, stopped_by = time_with_cupti(torch, fn, settings, grad_to_none)
    noise = relative_standard_error(samples)
    return Measured(samples, timer, fallback, calls, _sm_clock(torch), noise if math.isfinite(noise) else None,
                    stopped_by)

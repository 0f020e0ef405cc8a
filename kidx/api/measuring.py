"""``kidx.measure``: time a callable on the GPU with one of kidx's timers
(``kidx.timers``), as ``Timings`` that ``record_run`` takes with their protocol."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kidx.api.recording import Timings
from kidx.timers.settings import (
    DEFAULT_CACHE,
    DEFAULT_MAX_TIME_MS,
    DEFAULT_REP_MS,
    DEFAULT_TIMER,
    DEFAULT_WARMUP_MS,
    measurement_spec,
    settings,
)

SOURCE = "kidx.measure"


def measure(fn: Callable[[], Any], *, timer: str = DEFAULT_TIMER, cache: str = DEFAULT_CACHE,
            warmup_ms: float = DEFAULT_WARMUP_MS, rep_ms: float = DEFAULT_REP_MS,
            grad_to_none: Sequence[Any] | None = None, max_noise: float | None = None,
            max_time_ms: float = DEFAULT_MAX_TIME_MS, min_time_ms: float = 0.0) -> Timings:
    """Time ``fn`` (called with no arguments) on the current CUDA device.

    ``timer``: ``cuda_graph`` (the call captured in a CUDA graph, each sample one replay
    between CUDA events), ``cupti`` (the device time of the kernels it launched, from
    CUPTI through torch.profiler) or ``cuda_events`` (events around each call, as
    ``triton.testing.do_bench``: launch and host latency included). A call that cannot
    be captured in a graph is timed with ``cupti``, and the timings' protocol says so.
    ``cache``: ``cold`` flushes the L2 before each sample, ``warm`` does not.
    ``warmup_ms`` and ``rep_ms`` are do_bench's budgets: untimed calls for ``warmup_ms``,
    then samples for ``rep_ms`` (at least 10, at most 10,000; cupti at most 1,000).
    ``grad_to_none``: tensors whose ``.grad`` is cleared before each call (before the
    capture, for a graph). ``max_noise`` (a fraction: 0.005 is 0.5 %) stops sampling as
    soon as the relative standard error of the samples' median is under it, or after
    ``max_time_ms`` of sampling (above 0), in place of the ``rep_ms`` budget; the
    protocol records both, and ``native`` the noise reached (``relativeStandardError``).
    ``min_time_ms``: the least time spent taking samples (the budget is raised to it,
    and ``max_noise`` stops no sooner; ``kidx record --min-time``), recorded as the
    protocol's ``minTimeMs``.

    The ``Timings`` hold the samples in nanoseconds and a protocol naming the timer that
    measured, the cache state and the budgets. Where NVML can say the SM clock, samples
    taken in a batch read below 75 % of the GPU's default SM clock are dropped: their count
    is the native ``lowClockSamples``, and the details say so (``lowClockSamples``), as
    they say a cupti call whose kernel count differs from an untimed call's
    (``kernelCountWarning``; docs/measuring.md). Without PyTorch or a CUDA device:
    ``kidx.errors.DeviceUnavailable``; a call that launches no GPU work under cupti:
    ``kidx.errors.MeasurementFailed``.
    """
    from kidx.timers.cuda import measure_samples

    chosen = settings(timer, cache, warmup_ms, rep_ms, max_noise, max_time_ms, min_time_ms)
    measured = measure_samples(fn, chosen, grad_to_none)
    protocol = {"harness": {"name": SOURCE},
                "measurement": measurement_spec(measured.timer, chosen.cache, chosen.warmup_ms, chosen.rep_ms,
                                                max_noise=chosen.max_noise, max_time_ms=chosen.max_time_ms,
                                                min_time_ms=chosen.min_time_ms)}
    timings = Timings.from_samples(measured.samples_ms, unit="ms", protocol=protocol)
    timings.source = SOURCE
    timings.native = {"callsPerSample": float(measured.calls_per_sample)}
    if measured.noise is not None:
        timings.native["relativeStandardError"] = float(measured.noise)
    if measured.sm_clock_mhz is not None:
        timings.native["smClockMHz"] = float(measured.sm_clock_mhz)
    if measured.clock is not None:
        timings.native["lowClockSamples"] = float(measured.clock.dropped)
    details = {}
    if measured.fallback:
        details["timerFallback"] = f"{chosen.timer} asked for, {measured.timer} measured: {measured.fallback}"
    low_clock = measured.clock.warning() if measured.clock is not None else None
    if low_clock:
        details["lowClockSamples"] = low_clock
    if measured.kernel_warning:
        details["kernelCountWarning"] = measured.kernel_warning
    if details:
        timings.details = details
    return timings

"""A drop-in ``triton.testing.do_bench`` that times with a kidx timer.

``kidx record --timer`` puts ``site/sitecustomize.py`` on the harness's ``PYTHONPATH``;
it swaps this function in for ``triton.testing.do_bench`` as soon as the harness imports
``triton.testing``, so the harness runs unmodified and writes its usual output with the
kernel's time in it. The arguments are triton's (``warmup`` and ``rep`` in milliseconds,
``grad_to_none``, ``quantiles``, ``return_mode``; the retired ``fast_flush`` and
``device_type`` are accepted and ignored) and so is the return value
(``kidx.timers.summaries``). The timer and cache state come from ``KIDX_TIMER`` and
``KIDX_TIMER_CACHE``. Each call appends one JSON line to the file ``KIDX_TIMER_LOG``
names: the timer that measured (cupti where a graph capture failed, and why), the
settings, the value returned and the samples, which kidx record matches to the
harness's rows by value, the noise reached and the wall time the call took
(``elapsedMs``: warm-up, capture and sampling), and what ``clock_fields`` adds: samples
dropped for a low SM clock, whether the persisting L2 lines were reset, cupti's
kernel-count warning.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from kidx.timers.settings import (
    ENV_LOG,
    TimerSettings,
    checked_budget,
    min_time_from_environment,
    settings_from_environment,
    stopping_from_environment,
)
from kidx.timers.summaries import checked_request, do_bench_result


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100,
             grad_to_none: Sequence[Any] | None = None, quantiles: Sequence[float] | None = None,
             return_mode: str = "mean", *, fast_flush: bool = True, device_type: str = "cuda") -> Any:
    """Time ``fn`` as triton.testing.do_bench would, with the timer kidx record asked for."""
    from kidx.timers.cuda import measure_samples

    asked, mode = checked_request(quantiles, return_mode)
    timer, cache = settings_from_environment()
    max_noise, max_time_ms = stopping_from_environment()
    min_time_ms = min_time_from_environment()
    settings = TimerSettings(timer, cache, checked_budget(warmup, "do_bench warmup"),
                             checked_budget(rep, "do_bench rep"), max_noise, max_time_ms, min_time_ms)
    started = time.perf_counter()
    measured = measure_samples(fn, settings, grad_to_none)
    elapsed_ms = (time.perf_counter() - started) * 1000
    result = do_bench_result(measured.samples_ms, asked, mode)
    log = os.environ.get(ENV_LOG)
    if log:
        append_entry(log, {
            "timer": measured.timer, "requestedTimer": timer, "fallback": measured.fallback, "cache": cache,
            "warmupMs": settings.warmup_ms, "repetitionMs": settings.rep_ms,
            "quantiles": None if asked is None else list(asked), "returnMode": mode, "result": result,
            "callsPerSample": measured.calls_per_sample, "smClockMHz": measured.sm_clock_mhz,
            "maxNoise": max_noise, "maxTimeMs": max_time_ms if max_noise is not None else None,
            "minTimeMs": min_time_ms or None,
            "noise": measured.noise, "stoppedBy": measured.stopped_by, "elapsedMs": round(elapsed_ms, 3),
            "samplesMs": measured.samples_ms, **clock_fields(measured),
        })
    return result


def clock_fields(measured: Any) -> dict:
    """The log entry's account of the clock, the cache and the kernel counts: the samples
    dropped for a low SM clock (``lowClockSamples``; null where the clock was not checked)
    and how (``clockCheck``), whether the persisting L2 lines were reset, and the cupti
    timer's kernel-count warning."""
    check = measured.clock
    return {
        "lowClockSamples": None if check is None else check.dropped,
        "clockCheck": None if check is None else {
            "referenceMHz": check.reference_mhz, "boundMHz": check.bound_mhz, "taken": check.taken,
            "allLow": check.all_low, "lowestMHz": check.lowest_mhz, "warning": check.warning()},
        "persistingL2": measured.persisting_l2, "kernelWarning": measured.kernel_warning,
    }


def append_entry(path: str, entry: dict) -> None:
    """One JSON line, written with one append (whole lines even if processes share the file)."""
    line = (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8")
    handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(handle, line)
    finally:
        os.close(handle)

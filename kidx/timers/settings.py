"""The timers and cache states kidx measures with, a timer's settings, and the
``spec.measurement`` of the BenchmarkProtocol they make (identity: runs of different
timers or settings are different protocols, docs/measuring.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from kidx.errors import UsageError
from kidx.records import NamedTuple

#: timer name -> what a sample is; the first is the default
TIMERS = {
    "cuda_graph": "the call captured once in a CUDA graph; each sample one replay, timed with CUDA events",
    "cupti": "the device time of the kernels the call launched, from CUPTI activity records "
             "(torch.profiler), summed per call",
    "cuda_events": "CUDA events recorded around each call, as triton.testing.do_bench times it "
                   "(host and launch latency inside the call included)",
}
#: cache state -> what happens before each sample; the first is the default
CACHES = {
    "cold": "a buffer twice the size of the GPU's L2 cache written before each sample, outside the timed region",
    "warm": "nothing flushed between samples",
}
#: the defaults, for the API, the command line and the harness's process alike: the first of each
DEFAULT_TIMER = next(iter(TIMERS))
DEFAULT_CACHE = next(iter(CACHES))
#: do_bench's defaults (milliseconds): warm-up and repetition budgets
DEFAULT_WARMUP_MS = 25.0
DEFAULT_REP_MS = 100.0
#: the fewest and most samples a timer takes, whatever the budget
MIN_SAMPLES = 10
MAX_SAMPLES = 10_000
#: cupti keeps a trace of every call: fewer samples
MAX_PROFILED_SAMPLES = 1_000

#: adaptive stopping (max_noise): the most time spent taking samples of one call, unless given (ms)
DEFAULT_MAX_TIME_MS = 1000.0

#: the variables kidx record sets for the replacement do_bench in the harness's process
ENV_MAX_NOISE = "KIDX_TIMER_MAX_NOISE"
ENV_MAX_TIME = "KIDX_TIMER_MAX_TIME_MS"
ENV_MIN_TIME = "KIDX_TIMER_MIN_TIME_MS"
ENV_TIMER = "KIDX_TIMER"
ENV_CACHE = "KIDX_TIMER_CACHE"
ENV_LOG = "KIDX_TIMER_LOG"
ENV_PACKAGE = "KIDX_TIMER_PACKAGE"
#: the GPU's default SM clock (MHz) as kidx record read it: samples below 75 % of it are dropped
ENV_REFERENCE_SM = "KIDX_TIMER_DEFAULT_SM_MHZ"


class TimerSettings(NamedTuple):
    """How a call is timed: the timer, the L2 state, and do_bench's budgets (ms). With
    ``max_noise`` (a fraction) the samples are taken until the relative standard error of
    their median is under it, or ``max_time_ms`` of sampling has passed, in place of the
    ``rep_ms`` budget (``adaptive_count``). ``min_time_ms``: the least time spent taking
    samples of one call: the budget is raised to it, and adaptive stopping stops no sooner."""

    timer: str = DEFAULT_TIMER
    cache: str = DEFAULT_CACHE
    warmup_ms: float = DEFAULT_WARMUP_MS
    rep_ms: float = DEFAULT_REP_MS
    max_noise: float | None = None
    max_time_ms: float = DEFAULT_MAX_TIME_MS
    min_time_ms: float = 0.0

    @property
    def budget_ms(self) -> float:
        """The time the samples of one call fill without adaptive stopping."""
        return max(self.rep_ms, self.min_time_ms)


class Sampling(NamedTuple):
    """How kidx record asks the replacement do_bench to sample, beyond the harness's
    budget: adaptive stopping (``max_noise``, a fraction, and ``max_time_ms``), and the
    least time spent sampling one call (``min_time_ms``); None: not asked."""

    max_noise: float | None = None
    max_time_ms: float | None = None
    min_time_ms: float | None = None


def checked_timer(timer: str, option: str = "timer") -> str:
    if timer not in TIMERS:
        raise UsageError(f'{option} "{timer}": use {", ".join(TIMERS)}')
    return timer


def checked_cache(cache: str, option: str = "cache") -> str:
    if cache not in CACHES:
        raise UsageError(f'{option} "{cache}": use {", ".join(CACHES)}')
    return cache


def checked_budget(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise UsageError(f"{what}: {value!r} is not a finite, non-negative number of milliseconds")
    return float(value)


def checked_limit(value: object, what: str) -> float:
    """A time limit (ms) to stop sampling at: finite and above 0 (at 0 nothing could be sampled)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise UsageError(f"{what}: {value!r} is not a finite, positive number of milliseconds")
    return float(value)


def checked_noise(value: object, what: str) -> float:
    """A relative standard error to stop at: a fraction above 0 and below 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise UsageError(f"{what}: {value!r} is not a fraction between 0 and 1 (0.005 is 0.5 %)")
    return float(value)


def settings(timer: str = DEFAULT_TIMER, cache: str = DEFAULT_CACHE, warmup_ms: object = DEFAULT_WARMUP_MS,
             rep_ms: object = DEFAULT_REP_MS, max_noise: object = None,
             max_time_ms: object = DEFAULT_MAX_TIME_MS, min_time_ms: object = 0.0) -> TimerSettings:
    """Checked settings; a UsageError names the bad one."""
    return TimerSettings(checked_timer(timer), checked_cache(cache), checked_budget(warmup_ms, "warmup_ms"),
                         checked_budget(rep_ms, "rep_ms"),
                         None if max_noise is None else checked_noise(max_noise, "max_noise"),
                         checked_limit(max_time_ms, "max_time_ms"), checked_budget(min_time_ms, "min_time_ms"))


def sample_count(budget_ms: float, estimate_ms: float, most: int = MAX_SAMPLES) -> int:
    """Samples that fill ``budget_ms`` at ``estimate_ms`` each, as do_bench counts them,
    but never fewer than MIN_SAMPLES nor more than ``most``."""
    count = int(budget_ms / estimate_ms) if estimate_ms > 0 else most
    return max(MIN_SAMPLES, min(most, count))


def measurement_spec(timer: str, cache: str, warmup_ms: float, rep_ms: float, *,
                     replaces_do_bench: bool = False, statistic: str = "median", max_noise: float | None = None,
                     max_time_ms: float | None = None, min_time_ms: float | None = None) -> dict:
    """The protocol's ``spec.measurement`` for runs timed this way (with adaptive stopping,
    its target and time limit: ``maxNoise``, ``maxTimeMs``; with a least sampling time,
    ``minTimeMs``)."""
    method = f"{TIMERS[timer]}; L2 cache {cache}: {CACHES[cache]}"
    if replaces_do_bench:
        method = "kidx's timer in place of the harness's triton.testing.do_bench: " + method
    spec: dict = {"metric": "latency", "timer": timer, "primaryStatistic": statistic, "cache": cache,
                  "warmupMs": float(warmup_ms), "repetitionMs": float(rep_ms), "method": method}
    if replaces_do_bench:
        spec["replacesDoBench"] = True
    if max_noise is not None:
        spec["maxNoise"] = float(max_noise)
        spec["maxTimeMs"] = float(DEFAULT_MAX_TIME_MS if max_time_ms is None else max_time_ms)
        spec["method"] += (f"; samples taken until the relative standard error of their median is under "
                           f"{max_noise:.4g} or {spec['maxTimeMs']:g} ms of sampling have passed")
    if min_time_ms:
        spec["minTimeMs"] = float(min_time_ms)
        spec["method"] += f"; each call sampled for at least {min_time_ms:g} ms"
    return spec


def settings_from_environment(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(timer, cache) that kidx record asked for, read in the harness's process."""
    environ = os.environ if environ is None else environ
    return (checked_timer(environ.get(ENV_TIMER, DEFAULT_TIMER), ENV_TIMER),
            checked_cache(environ.get(ENV_CACHE, DEFAULT_CACHE), ENV_CACHE))


def stopping_from_environment(environ: Mapping[str, str] | None = None) -> tuple[float | None, float]:
    """(max_noise, max_time_ms) that kidx record --max-noise asked for (None: do_bench's budget)."""
    environ = os.environ if environ is None else environ
    noise, limit = environ.get(ENV_MAX_NOISE), environ.get(ENV_MAX_TIME)
    try:
        return (None if not noise else checked_noise(float(noise), ENV_MAX_NOISE),
                DEFAULT_MAX_TIME_MS if not limit else checked_limit(float(limit), ENV_MAX_TIME))
    except ValueError:
        raise UsageError(f"{ENV_MAX_NOISE}={noise!r}, {ENV_MAX_TIME}={limit!r}: not numbers") from None


def min_time_from_environment(environ: Mapping[str, str] | None = None) -> float:
    """The least time (ms) kidx record --min-time asked the samples of one call to take (0: none)."""
    environ = os.environ if environ is None else environ
    least = environ.get(ENV_MIN_TIME)
    try:
        return 0.0 if not least else checked_budget(float(least), ENV_MIN_TIME)
    except ValueError:
        raise UsageError(f"{ENV_MIN_TIME}={least!r}: not a number") from None

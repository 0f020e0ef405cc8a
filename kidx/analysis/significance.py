"""When is a difference between two figures real? One rule, stated in every output.

The unit of evidence is the **run**: between two processes a small kernel's median can
move far outside one run's own p20-p80 band, so only the spread *between* runs can say
whether a change is real.

- **Between runs** (the verdict): where the arms hold repeated runs, or the store holds
  other runs of the same series (conbench's lookback), the between-run spread is
  estimated from the log of each run's statistic (pooled within arms and within the
  history's segments between change points) and a two-sided t-test on the logs decides:
  ``faster``/``slower`` when p < ALPHA, |t| >= MIN_T (the noise has heavy tails), the
  change exceeds the threshold and runs of both sides confirm it; ``same`` when the
  confidence interval of the ratio lies inside ±threshold *and* a change of the
  threshold's size would have been called (the detectable change, at POWER, is no
  larger); ``inconclusive`` otherwise, with the runs a side that would decide.
- **The threshold follows the evidence** unless one is given: a change counts from
  EVIDENCE_FLOOR (0.5 %) once the runs show it beyond their noise, so the timers'
  precision (0.03-0.3 % between processes for a kernel timer) is what limits a verdict,
  not a fixed 5 %; ``same`` then says within how much (the larger of the floor and the
  detectable change), and only up to SAME_LIMIT (5 %): noisier evidence is
  ``inconclusive``. A given threshold keeps its meaning: the smallest change that counts,
  and the ± of ``same``.
- **Within one run** (samples or bands only): a two-sided Mann–Whitney U test on raw
  samples (as asv uses; the smallest p the sample sizes can reach is checked first, and
  below ALPHA means ``inconclusive``), else the p20-p80 bands (apart, and beyond the
  threshold; bands too wide to show a change of the threshold either way are
  ``inconclusive``), else the threshold alone. Such evidence gives at most ``unconfirmed``,
  with what it shows beside it.
- **Floors** (a kernel timer's runs with samples): under a power cap the SM clock steps
  within a run and a GEMM's median moves with the share of its samples taken at the lower
  clock, while its fastest sample (the run's floor, at the highest clock) barely moves.
  Where the floors' spread between runs is under FLOOR_SHARE of the statistics' (both
  estimated with at least FLOOR_DF degrees of freedom), the between-run rule above runs
  on the floors instead: ratio, interval, detectable change and confirmation all of the
  floors, and the verdict says so; a change the statistics confirm by themselves stands
  (a version that draws more power spends more of its run at the lower clock: its median
  slows while its floor does not).

Confidence intervals of the ratio: from the t-test (between runs) or Hodges–Lehmann on
the samples' logs (within a run); both deterministic.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from typing import NamedTuple

from kidx.analysis.defaults import ALPHA as ALPHA
from kidx.analysis.defaults import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from kidx.analysis.measures import Measure
from kidx.units import LOWER

# ALPHA, the significance level, and DEFAULT_THRESHOLD, --threshold's default (None: the
# threshold follows the evidence), are defined in kidx.analysis.defaults, which the command
# line and the Python API share without loading this module

# Between processes, small kernels' medians jump by 7-17% in one run of series otherwise
# steady within 0.5% (tests/data/h200-aa): the noise has heavy tails, and a t-test at
# ALPHA alone called 5.3% of that recording's A/A pairs faster or slower. A change must
# also stand MIN_T standard errors clear (conbench's default z threshold), which brought
# it under 1% (bench/bench_verdicts.py, docs/analysis.md).
MIN_T = 5.0
# A kernel timer's runs (cuda_graph, cupti: the device's own time, no host in it) have lighter
# tails: on the H200 calibration recordings (tests/data/h200-timers), 3 runs a side, |t| >= 5,
# 4 and 3 called 0.5 %, 0.8 % and 1.0 % of cuda_graph's A/A comparisons and found 92.2 %, 96.4 %
# and 99.2 % of its 2 % slowdowns; 4 is the smallest that keeps cuda_graph under 1 % (cupti:
# 1.3 %) (bench/reports/bench_verdicts-20261207-091950.txt, docs/analysis.md). Others keep MIN_T.
MIN_T_KERNEL = 4.0
# One process can run far off an otherwise steady series (single eager runs 16-71% off,
# tests/data/h200-aa): one run is no evidence of a change. A faster or slower between runs
# is confirmed only by CONFIRM_RUNS runs a side that agree on it: more than half of the
# pairs of runs (one from each side) differ beyond the threshold in its direction. Else it
# is unconfirmed, its direction beside it, and a --fail-on-regression gate passes it until
# a second run confirms it (bench/bench_verdicts.py, docs/analysis.md). 1 turns it off.
CONFIRM_RUNS = 2
# Floors (the module's docstring): on the H100, geglu forward's run medians sampled for a second
# stay 0.85 % apart between processes while their fastest samples stay 0.26 % apart; a
# memory-bound kernel's fastest sample is the noisier one (softmax forward sampled for 0.3 s:
# 0.47 % against its medians' 0.23 %; bench/reports/bench_spread-20261207-191856.txt). The floors
# judge where their spread is under FLOOR_SHARE of the statistics', each estimated with FLOOR_DF
# degrees of freedom or more, so that a choice between two spreads is not made on two runs a
# side alone; how FLOOR_SHARE was chosen on the calibration recordings and what it does on the
# others: docs/analysis.md ("Floors: a power-capped GEMM", bench/bench_verdicts.py's reports).
FLOOR_SHARE = 0.5
FLOOR_DF = 4
FLOORS, STATISTICS = "floors", "statistics"  # what a between-run verdict was judged on
# following the evidence: the smallest change that counts (a real 0.3 % change is real, but a
# systematic drift between two arms of a few tenths of a percent is common enough that it
# should not fail a gate), and the widest ± a "same" may claim before it is inconclusive
EVIDENCE_FLOOR = 0.005
# ... for a kernel timer's runs; runs timed with the host in them (CUDA events around a call, a
# harness's own timer) move by several percent between processes, and keep the earlier 5 %, so
# that their false calls stay what they were (the eager A/A of tests/data/h200-aa: 2.7 %, 0.3 %
# and 0.0 % at 2, 3 and 5 runs a side, bench/reports/bench_verdicts-20261207-091541.txt)
HOST_FLOOR = 0.05
SAME_LIMIT = 0.05
# the chance at which "detectable" changes are called: a change of the detectable size is
# called in 95 % of comparisons of the same runs' spread
POWER = 0.95
# with within-run evidence only (at most unconfirmed) and no threshold given
WITHIN_RUN_THRESHOLD = 0.05
EXACT_LIMIT = 400  # n1 * n2 up to which the exact U distribution is counted
HL_LIMIT = 400  # samples per side kept (evenly spaced quantiles) for the Hodges–Lehmann interval

FASTER, SLOWER, SAME = "faster", "slower", "same"
INCONCLUSIVE, UNCONFIRMED, UNKNOWN_DIRECTION = "inconclusive", "unconfirmed", "direction-unknown"
BASELINE = "baseline"  # not a verdict: what a compared table's baseline row says in its place
# every verdict, in the order --only's help and refusal list them
VERDICTS = (FASTER, SLOWER, SAME, INCONCLUSIVE, UNCONFIRMED, UNKNOWN_DIRECTION)
# worst first: how a list of changes is read; direction-unknown last, as it says nothing of
# better or worse (tests/analysis/test_verdict_words.py holds each order to VERDICTS)
SEVERITY = (SLOWER, UNCONFIRMED, INCONCLUSIVE, SAME, FASTER, UNKNOWN_DIRECTION)
# the summary line's order, each counted even when 0: the regression first, the other
# outcomes of a judged change, then those that are not one; direction-unknown, which only a
# figure without a better direction gets, follows only where counted (the summary's "others")
SUMMARY_ORDER = (SLOWER, FASTER, SAME, INCONCLUSIVE, UNCONFIRMED)
# the gates: --fail-on-regression fails on a regression, --fail-on-inconclusive on a
# verdict that could not decide
REGRESSIONS = frozenset({SLOWER})
UNDECIDED = frozenset({INCONCLUSIVE, UNCONFIRMED, UNKNOWN_DIRECTION})
BETWEEN_RUNS, WITHIN_RUN = "between-runs", "within-run"


def least_change(kernel_timer: bool) -> float:
    """The smallest change that counts when the threshold follows the evidence: EVIDENCE_FLOOR
    for a kernel timer's runs, else HOST_FLOOR."""
    return EVIDENCE_FLOOR if kernel_timer else HOST_FLOOR


def least_t(kernel_timer: bool) -> float:
    """The |t| a change needs by default: MIN_T_KERNEL for a kernel timer's runs, else MIN_T."""
    return MIN_T_KERNEL if kernel_timer else MIN_T


def percent(fraction: float) -> str:
    """A relative change in words: two significant digits, ``0.63%``, ``5%``, ``12%``."""
    return f"{fraction * 100:.2g}%"


def counted_change(threshold: float | None) -> float:
    """The smallest change that counts: the threshold given, else EVIDENCE_FLOOR."""
    return EVIDENCE_FLOOR if threshold is None else threshold


def threshold_text(threshold: float | None) -> str:
    """The threshold in words: ``5%``, or ``following the evidence (from 0.5%)``."""
    if threshold is None:
        return f"following the evidence (from {EVIDENCE_FLOOR * 100:g}%)"
    return f"{threshold * 100:g}%"


class Judgement(NamedTuple):
    ratio: float  # value / baseline
    speedup: float | None  # how many times better than the baseline; None when the direction is unknown
    significant: bool  # by the test that decided
    test: str  # "t-test", "mann-whitney", "bands" or "threshold"
    p_value: float | None = None
    ci: tuple[float, float] | None = None  # confidence interval of the ratio, at 1 - ALPHA
    evidence: str = WITHIN_RUN  # what the verdict rests on: between-runs or within-run
    within: str | None = None  # unconfirmed: what the evidence shows (faster, slower, same)
    reason: str | None = None  # why inconclusive or unconfirmed
    conclusive: bool = True  # False when the test could not reach ALPHA or the noise is too wide
    detectable: float | None = None  # between runs: the smallest relative change this evidence calls at POWER
    runs_needed: int | None = None  # between runs: runs a side with which a change of ``runs_needed_for`` shows
    runs_needed_for: float | None = None  # the change ``runs_needed`` is for (the threshold, or SAME_LIMIT)
    threshold: float | None = None  # the smallest change that counted (given, or EVIDENCE_FLOOR)
    bound: float | None = None  # between runs: the ± a "same" claims (the threshold, or the evidence's resolution)
    judged_on: str | None = None  # between runs: STATISTICS (the runs' own) or FLOORS (their fastest samples)

    @property
    def verdict(self) -> str:
        if not self.conclusive:
            return INCONCLUSIVE
        if self.within is not None:  # within-run evidence only, or a change not confirmed by a second run
            return UNCONFIRMED
        return self.direction_word

    @property
    def direction_word(self) -> str:
        """faster, slower or same by the deciding test alone."""
        if not self.significant:
            return SAME
        if self.speedup is None:
            return UNKNOWN_DIRECTION
        return FASTER if self.speedup > 1 else SLOWER

    def unconfirmed(self, reason: str) -> Judgement:
        """At most ``unconfirmed``: within-run evidence, or a change no second run confirms."""
        if not self.conclusive:
            return self
        return self._replace(within=self.direction_word, reason=reason)


def bounded_exp(x: float) -> float:
    """e**x, infinite where it overflows a float (the ratio of latencies 1e300 and 1e-300
    ns): a figure too large to hold, never an OverflowError."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def bounded_expm1(x: float) -> float:
    """e**x - 1, as ``bounded_exp``."""
    try:
        return math.expm1(x)
    except OverflowError:
        return math.inf


def _ratio_and_speedup(value: Measure, baseline: Measure) -> tuple[float, float | None]:
    ratio = value.value / baseline.value if baseline.value else math.inf
    if value.direction is None:
        return ratio, None
    if value.lower_is_better:
        return ratio, (baseline.value / value.value if value.value else math.inf)
    return ratio, ratio


def judge(value: Measure, baseline: Measure, threshold: float = WITHIN_RUN_THRESHOLD,
          alpha: float = ALPHA) -> Judgement:
    """The within-run rule: samples (Mann–Whitney U), else bands, else the threshold."""
    ratio, speedup = _ratio_and_speedup(value, baseline)
    beyond = abs(ratio - 1) > threshold
    if value.samples and baseline.samples:
        n1, n2 = len(value.samples), len(baseline.samples)
        ci = hodges_lehmann_ratio(value.samples, baseline.samples, alpha)
        if smallest_p(n1, n2) >= alpha:
            return Judgement(ratio, speedup, False, "mann-whitney", None, ci, conclusive=False,
                             reason=f"{n1} and {n2} samples cannot reach p < {alpha:g}")
        p = mann_whitney_u(value.samples, baseline.samples)
        return Judgement(ratio, speedup, beyond and p < alpha, "mann-whitney", p, ci)
    if value.low is not None and value.high is not None and baseline.low is not None and baseline.high is not None:
        apart = value.low > baseline.high or value.high < baseline.low
        if not (beyond and apart) and not bands_show(value, baseline, threshold):
            return Judgement(ratio, speedup, False, "bands", conclusive=False,
                             reason=f"p20-p80 bands too wide to show a {threshold * 100:g}% change")
        return Judgement(ratio, speedup, beyond and apart, "bands")
    return Judgement(ratio, speedup, beyond, "threshold")


def bands_show(value: Measure, baseline: Measure, threshold: float) -> bool:
    """Whether the two arms' bands are narrow enough that a change of the threshold's size
    would have set them apart, either way: the value's band moved to the baseline's figure
    times (1 ± threshold) clears the baseline's band. Only then is a change within the
    threshold ``same``; otherwise the bands cannot tell, and it is ``inconclusive``."""
    if not value.value or not baseline.value or value.low is None or value.high is None:
        return False
    if baseline.low is None or baseline.high is None:
        return False
    low, high = value.low / value.value, value.high / value.value
    base_low, base_high = baseline.low / baseline.value, baseline.high / baseline.value
    return low * (1 + threshold) > base_high and high * (1 - threshold) < base_low


class Noise(NamedTuple):
    """Between-run spread of log run statistics: a sum of squares and its degrees of freedom."""

    squares: float
    df: int

    def __add__(self, other) -> Noise:
        return Noise(self.squares + other.squares, self.df + other.df)

    @property
    def sigma(self) -> float | None:
        return math.sqrt(self.squares / self.df) if self.df > 0 else None


NO_NOISE = Noise(0.0, 0)


class Floors(NamedTuple):
    """The runs' floors beside their statistics (``judge_runs``): each arm's, the series'
    history's spread of them, and the confirming runs' (value side, baseline side)."""

    value_runs: Sequence[float]
    baseline_runs: Sequence[float]
    history: Noise = NO_NOISE
    confirming: tuple[Sequence[float], Sequence[float]] | None = None


def floor_of(measure: Measure | None) -> float | None:
    """A run's floor: its fastest sample (the smallest positive, finite latency sample); None
    without one, and for any other metric (a memory's smallest sample is no clock's doing)."""
    if measure is None or not measure.samples or measure.metric != "latency" or measure.direction != LOWER:
        return None
    positive = [sample for sample in measure.samples if 0 < sample < math.inf]
    return min(positive) if positive else None


def floors_of(measures: Sequence[Measure | None]) -> list[float] | None:
    """Every run's floor, or None where one run has none (all or nothing: a spread of some
    runs' floors beside all runs' statistics would not compare like with like)."""
    floors = [floor for floor in map(floor_of, measures) if floor is not None]
    return floors if len(floors) == len(measures) else None


def spread_of(values: Sequence[float]) -> Noise:
    """The sum of squares of logs about their mean, with n - 1 degrees of freedom."""
    if len(values) < 2:
        return NO_NOISE
    logs = [math.log(v) for v in values]
    mean = sum(logs) / len(logs)
    return Noise(sum((x - mean) ** 2 for x in logs), len(logs) - 1)


def judge_runs(value: Measure, baseline: Measure, value_runs: Sequence[float], baseline_runs: Sequence[float],
               history: Noise = NO_NOISE, threshold: float | None = DEFAULT_THRESHOLD, alpha: float = ALPHA,
               min_t: float = MIN_T, confirm_runs: int = CONFIRM_RUNS,
               confirming: tuple[Sequence[float], Sequence[float]] | None = None,
               floor: float = EVIDENCE_FLOOR, floors: Floors | None = None,
               floor_share: float = FLOOR_SHARE) -> Judgement:
    """The verdict of an arm against the baseline arm (``value`` and ``baseline`` their
    pooled figures, ``*_runs`` their runs' statistics): between runs where the arms'
    repeats or the series' history give a spread, else the within-run rule, unconfirmed.
    A change between runs must be confirmed (``unconfirmed_because``) by the arms' runs,
    or by ``confirming`` (value side, baseline side) where a series' neighbours do it.
    ``threshold`` None: it follows the evidence (the module's docstring), from ``floor``
    (``least_change``: by the runs' timer). ``floors``: the runs' floors, judged on in
    their place where their spread is under ``floor_share`` of the statistics' (0: never)."""
    noise = spread_of(value_runs) + spread_of(baseline_runs) + history
    if floors is not None and floor_share > 0:
        floor_noise = spread_of(floors.value_runs) + spread_of(floors.baseline_runs) + floors.history
        # floors that never move (a clamp, one glitch sample in every run) are no evidence
        if (min(noise.df, floor_noise.df) >= FLOOR_DF and noise.sigma and floor_noise.sigma
                and floor_noise.sigma < floor_share * noise.sigma):
            on_statistics = judge_runs(value, baseline, value_runs, baseline_runs, history, threshold, alpha, min_t,
                                       confirm_runs, confirming, floor)
            if on_statistics.verdict in (FASTER, SLOWER):
                return on_statistics  # a change the statistics confirm stands, whatever the floors say
            return _on_floors(value, baseline, floors, noise, floor_noise, threshold, alpha, min_t, confirm_runs, floor)
    if noise.df < 1:
        within = judge(value, baseline, WITHIN_RUN_THRESHOLD if threshold is None else threshold, alpha)
        return within.unconfirmed("only within-run evidence: no repeated runs or history of the series")
    counts = floor if threshold is None else threshold
    target = SAME_LIMIT if threshold is None else threshold
    ratio, speedup = _ratio_and_speedup(value, baseline)
    a = [math.log(v) for v in value_runs]
    b = [math.log(v) for v in baseline_runs]
    difference = sum(a) / len(a) - sum(b) / len(b)
    sigma = noise.sigma or 0.0
    se = sigma * math.sqrt(1 / len(a) + 1 / len(b))
    if se == 0:
        p = 1.0 if difference == 0 else 0.0
        t = 0.0 if difference == 0 else math.inf
        ci = (bounded_exp(difference), bounded_exp(difference))
    else:
        t = difference / se
        p = t_two_sided_p(t, noise.df)
        half = t_quantile(1 - alpha / 2, noise.df) * se
        ci = (bounded_exp(difference - half), bounded_exp(difference + half))
    significant = abs(ratio - 1) > counts and p < alpha and abs(t) >= min_t
    detectable = detectable_change(sigma, noise.df, len(a), len(b), alpha, min_t)
    needed = runs_needed(sigma, noise.df, target, alpha, min_t, confirm_runs)
    bound = target if threshold is not None else max(counts, detectable or 0.0)
    judgement = Judgement(ratio, speedup, significant, "t-test", p, ci, BETWEEN_RUNS, detectable=detectable,
                          runs_needed=needed, runs_needed_for=target, threshold=counts, bound=bound,
                          judged_on=STATISTICS)
    if significant:
        sides = confirming if confirming is not None else (value_runs, baseline_runs)
        why_not = unconfirmed_because(sides[0], sides[1], ratio, counts, confirm_runs)
        return judgement if why_not is None else judgement.unconfirmed(why_not)
    shows = detectable is not None and detectable <= target
    if shows and 1 - bound <= ci[0] and ci[1] <= 1 + bound:
        return judgement._replace(reason=f"within ±{percent(bound)}: a change of {percent(detectable or 0.0)} or "
                                         f"more would have been called ({POWER * 100:g}% of the time)")
    if not shows:
        why = (f"noise between runs (±{sigma * 100:.1f}%) lets only a change of {(detectable or 0) * 100:.1f}% or more "
               f"show, not {target * 100:g}%")
    else:
        why = f"the interval reaches past ±{percent(bound)}"
    why += f"; {needed_text(needed, len(a), len(b), target)}"
    return judgement._replace(conclusive=False, reason=why)


def _on_floors(value: Measure, baseline: Measure, floors: Floors, noise: Noise, floor_noise: Noise,
               threshold: float | None, alpha: float, min_t: float, confirm_runs: int, floor: float) -> Judgement:
    """``judge_runs`` on the runs' floors: each arm's figure the median of its floors, and
    the reason saying so, with both spreads."""
    judgement = judge_runs(value._replace(value=statistics.median(floors.value_runs)),
                           baseline._replace(value=statistics.median(floors.baseline_runs)),
                           floors.value_runs, floors.baseline_runs, floors.history, threshold, alpha, min_t,
                           confirm_runs, floors.confirming, floor, floors=None)
    why = (f"judged on the runs' floors (fastest samples), {percent(floor_noise.sigma or 0.0)} apart between runs "
           f"where their {value.statistic}s are {percent(noise.sigma or 0.0)} apart")
    return judgement._replace(judged_on=FLOORS,
                              reason=why if judgement.reason is None else f"{why}; {judgement.reason}")


def unconfirmed_because(value_runs: Sequence[float], baseline_runs: Sequence[float], ratio: float,
                        threshold: float = EVIDENCE_FLOOR, confirm_runs: int = CONFIRM_RUNS) -> str | None:
    """Why a change between runs (``ratio``: value / baseline) is not confirmed, or None:
    it needs ``confirm_runs`` runs a side, and more than half of the pairs of runs (one
    from each side) beyond the threshold in its direction, so that one run far off its
    series, on either side, is not taken for a change."""
    if confirm_runs <= 1:
        return None
    fewest = min(len(value_runs), len(baseline_runs))
    if fewest < confirm_runs:
        runs = "one run" if fewest == 1 else f"{fewest} runs"
        return f"{runs} a side: a change needs {confirm_runs} runs a side that agree on it"
    pairs = [v / b for v in value_runs for b in baseline_runs if b > 0]
    agree = sum(1 for r in pairs if abs(r - 1) > threshold and (r > 1) == (ratio > 1))
    if 2 * agree <= len(pairs):
        return (f"only {agree} of {len(pairs)} pairs of runs differ by more than {threshold * 100:g}% that way: "
                "a run off its series is not a change")
    return None


RUNS_NEEDED_LIMIT = 1000  # runs a side beyond which runs_needed gives up (None)


def critical_t(df: float, alpha: float = ALPHA, min_t: float = MIN_T) -> float:
    """The |t| a change needs under the between-run rule: p < alpha and |t| >= min_t."""
    if df < 1:
        return math.inf
    if _quantile_below(1 - alpha / 2, df, min_t):
        return min_t  # what max() below gives: the quantile is smaller, so it is not looked for
    return max(min_t, t_quantile(1 - alpha / 2, df))


@functools.lru_cache(maxsize=4096)
def _quantile_below(q: float, df: float, t: float) -> bool:
    """Whether ``t_quantile(q, df)`` is certainly below ``t``: |T| reaches a hair under ``t``
    with a probability under 2 (1 - q), ``t_quantile``'s target. One tail probability instead
    of a bisection (``runs_needed`` asks about a thousand degrees of freedom); the margin of
    1e-9 of ``t`` is far beyond the bisection's last digit, so ``critical_t`` is unchanged."""
    return t > 0 and t_two_sided_p(t * (1 - 1e-9), df) < 2 * (1 - q)


def detectable_change(sigma: float | None, df: int, n_value: int, n_baseline: int, alpha: float = ALPHA,
                      min_t: float = MIN_T, power: float = POWER) -> float | None:
    """The smallest relative change (a slowdown: value / baseline - 1) that ``judge_runs``
    would call in a share ``power`` of comparisons with this between-run spread (``sigma``
    of logs, ``df`` degrees of freedom) and these numbers of runs: the difference of mean
    logs at which t stands the critical value (p < alpha and |t| >= min_t) plus the
    ``power`` quantile of t above it. None without a spread; 0.0 when the spread is nil.
    The threshold plays no part: it is what the evidence can detect."""
    if sigma is None or df < 1 or not n_value or not n_baseline:
        return None
    se = sigma * math.sqrt(1 / n_value + 1 / n_baseline)
    return bounded_expm1((critical_t(df, alpha, min_t) + t_quantile(power, df)) * se)


def runs_needed(sigma: float | None, df: int, change: float = SAME_LIMIT, alpha: float = ALPHA,
                min_t: float = MIN_T, least: int = CONFIRM_RUNS) -> int | None:
    """The fewest runs a side with which a change of ``change`` would be detectable
    (``detectable_change``, at POWER), the spread staying what it is (its degrees of
    freedom growing with the runs added), and never fewer than ``least`` (the
    confirmation rule's runs a side); None without a spread, or beyond RUNS_NEEDED_LIMIT."""
    if sigma is None or df < 1:
        return None
    if sigma == 0:
        return max(1, least)
    target = math.log1p(change)

    def enough(n: int) -> bool:
        degrees = max(df, 2 * (n - 1))
        return (critical_t(degrees, alpha, min_t) + t_quantile(POWER, degrees)) * sigma * math.sqrt(2 / n) <= target

    # the detectable change only shrinks as runs are added: bisect for the first n that is enough
    if not enough(RUNS_NEEDED_LIMIT):
        return None
    low, high = 0, RUNS_NEEDED_LIMIT  # not enough at low (0: none yet), enough at high
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return max(high, least)


def needed_text(needed: int | None, n_value: int, n_baseline: int, change: float = SAME_LIMIT) -> str:
    """What would decide an inconclusive comparison: ``needs 6 runs a side to show 5%``."""
    if needed is None:
        return f"needs more than {RUNS_NEEDED_LIMIT} runs a side to show {change * 100:g}%"
    if needed <= min(n_value, n_baseline):
        return "more runs a side would narrow the interval"
    return f"needs {needed} runs a side to show {change * 100:g}%"


def rule_text(threshold: float | None, alpha: float = ALPHA, min_t: float | None = None,
              confirm_runs: int = CONFIRM_RUNS, floor_share: float = FLOOR_SHARE) -> str:
    """The rule in words; ``threshold`` None: it follows the evidence; ``min_t`` None: by the
    timer (MIN_T_KERNEL for a kernel timer's runs); ``floor_share`` 0: never on floors."""
    if threshold is None:
        counts = f"{EVIDENCE_FLOOR * 100:g}% (a kernel timer's runs; {HOST_FLOOR * 100:g}% for others)"
        head = "the threshold follows the evidence: a change counts when it exceeds "
    else:
        counts = f"{threshold * 100:g}%"
        head = "a change counts when it exceeds "
    least = (f"{min_t:g}" if min_t is not None else
             f"{MIN_T_KERNEL:g} ({MIN_T:g} for others)" if threshold is None else
             f"{MIN_T_KERNEL:g} for a kernel timer's runs ({MIN_T:g} for others)")
    that = "that" if threshold is None else counts
    confirm = (f"; a change is confirmed by {confirm_runs} runs a side, more than half of the pairs of runs beyond "
               f"{that} its way, else unconfirmed" if confirm_runs > 1 else "")
    floors = (f"; a kernel timer's runs with samples are judged on their floors (fastest samples) instead where the "
              f"floors' spread between runs is under {floor_share:g} times the statistics' (each from {FLOOR_DF} "
              "degrees of freedom or more), unless the statistics confirm a change themselves"
              if floor_share > 0 else "")
    if threshold is None:
        same = (f"same when the {(1 - alpha) * 100:g}% interval of the ratio lies within the larger of that and the "
                f"change the runs would detect {POWER * 100:g}% of the time, at most {SAME_LIMIT * 100:g}%")
        within = f"else a {WITHIN_RUN_THRESHOLD * 100:g}% threshold"
    else:
        same = (f"same when the {(1 - alpha) * 100:g}% interval of the ratio lies within {counts} and the runs would "
                f"detect a change of {counts} {POWER * 100:g}% of the time")
        within = "else the threshold"
    return (f"{head}{counts} and a two-sided t-test on the logs of the runs' statistics gives p < {alpha:g} and "
            f"|t| >= {least}, with the spread between runs from repeated runs or the series' history{floors}{confirm}; "
            f"{same}; with only within-run evidence (Mann-Whitney U on samples, else p20-p80 bands apart, {within}) "
            f"at most unconfirmed")


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value Mann–Whitney U can give for these sample sizes."""
    if not n1 or not n2:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def mann_whitney_u(a, b) -> float:
    """Two-sided p-value of the Mann–Whitney U test of samples ``a`` and ``b``."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    ranks = _ranks(list(a) + list(b))
    r1 = sum(ranks[:n1])
    u1 = r1 - n1 * (n1 + 1) / 2
    u = min(u1, n1 * n2 - u1)
    tied = len(set(a) | set(b)) < n1 + n2
    if not tied and n1 * n2 <= EXACT_LIMIT:
        return min(1.0, 2 * _exact_cdf(int(round(u)), n1, n2))
    n = n1 + n2
    counts: dict = {}
    for x in list(a) + list(b):
        counts[x] = counts.get(x, 0) + 1
    tie_term = sum(t ** 3 - t for t in counts.values())
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / math.sqrt(variance)  # continuity correction
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def hodges_lehmann_ratio(a, b, alpha: float = ALPHA) -> tuple[float, float] | None:
    """The distribution-free interval of the ratio a / b: the order statistics of the
    pairwise differences of logs that bound the (1 - alpha) interval of the shift
    (normal approximation of U's distribution for the rank)."""
    x, y = _thinned(a), _thinned(b)
    if not x or not y or min(x) <= 0 or min(y) <= 0:
        return None
    n1, n2 = len(x), len(y)
    differences = sorted(math.log(u) - math.log(v) for u in x for v in y)
    z = normal_quantile(1 - alpha / 2)
    k = int(math.floor(n1 * n2 / 2 - z * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)))
    if k < 0:
        return None
    return bounded_exp(differences[k]), bounded_exp(differences[n1 * n2 - 1 - k])


def _thinned(values) -> list[float]:
    ordered = sorted(values)
    if len(ordered) <= HL_LIMIT:
        return ordered
    step = (len(ordered) - 1) / (HL_LIMIT - 1)
    return [ordered[round(i * step)] for i in range(HL_LIMIT)]


def normal_quantile(q: float) -> float:
    """The standard normal quantile, by bisection on erfc (exact to 1e-12)."""
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        if 0.5 * math.erfc(-middle / math.sqrt(2)) < q:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return min(1.0, _incomplete_beta(df / 2, 0.5, df / (df + t * t)))


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The q-quantile (q > 0.5) of Student's t, by bisection."""
    target = 2 * (1 - q)
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > target:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        if t_two_sided_p(middle, df) > target:
            if low == middle:
                break  # a step that changes nothing: every later step would do the same
            low = middle
        else:
            if high == middle:
                break
            high = middle
    return (low + high) / 2


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    # the two terms of each step written out (no tuple, no abs() call): the same operations in
    # the same order as a loop over them, so the same floats
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if d > tiny or d < -tiny else tiny)
    h = d
    for m in range(1, 500):
        numerator = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m))
        d = 1 + numerator * d
        d = 1 / (d if d > tiny or d < -tiny else tiny)
        c = 1 + numerator / c
        c = c if c > tiny or c < -tiny else tiny
        h *= d * c
        numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))
        d = 1 + numerator * d
        d = 1 / (d if d > tiny or d < -tiny else tiny)
        c = 1 + numerator / c
        c = c if c > tiny or c < -tiny else tiny
        h *= d * c
        step = d * c - 1
        if -1e-15 < step < 1e-15:
            break
    return h


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share the mean rank
        i = j + 1
    return ranks


def _exact_cdf(u: int, n1: int, n2: int) -> float:
    """P(U <= u) under the null hypothesis, by counting the arrangements (no ties)."""
    # counts[i][j][k]: arrangements of i and j items with U = k, rolled over one dimension
    previous = [[1] + [0] * (n1 * n2) for _ in range(n2 + 1)]
    for _ in range(1, n1 + 1):
        current = [[0] * (n1 * n2 + 1) for _ in range(n2 + 1)]
        current[0][0] = 1
        for j in range(1, n2 + 1):
            for k in range(n1 * n2 + 1):
                # the largest item is from the first sample (it beats all j) or from the second
                total = current[j - 1][k]
                if k >= j:
                    total += previous[j][k - j]
                current[j][k] = total
        previous = current
    counts = previous[n2]
    return sum(counts[: u + 1]) / math.comb(n1 + n2, n1)

"""How much of a series' history an analysis reads: the most recent runs, never all of them.

A team that records every nightly run grows each series without end; a verdict's noise,
and the host evidence beside it, are read from a window of the most recently applied
runs, as conbench's lookback z-score reads its distribution from the last
``DISTRIBUTION_COMMITS`` (default 100) commits. Memory and time then follow what a
command shows, not the store's size (docs/analysis.md, "How much history").

Why 100: the between-run spread is estimated from the logs of the runs' statistics, and
the relative standard error of a standard deviation from n runs is about
1 / sqrt(2 (n - 1)): 7% at 100 runs, 5% at 200. More runs sharpen it little, while the
older ones describe older code and machines. Every series that bench/bench_verdicts.py
and the tests' recordings hold is shorter than the window (at most 11 runs), so their
verdicts are those of the whole history.
"""

HISTORY_WINDOW = 100  # runs of one series (and of one twin or sweep group) read, the most recently applied

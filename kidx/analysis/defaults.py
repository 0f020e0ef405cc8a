"""The verdict rule's defaults, defined once for every face that offers them.

The command line (``--alpha``, ``--threshold``), the Python API (``Store.compare``,
``compare_request`` …) and the operations' requests all take their defaults from here;
``kidx.analysis.significance`` states the rule they belong to and re-exports them. This
module imports nothing, so a signature can name a default without loading the statistics
(``import kidx; kidx.open_store`` stays cheap: tests/api/test_api_surface.py).
tests/analysis/test_defaults.py holds every signature to these names.
"""

# the significance level of the tests; the confidence intervals are at 1 - ALPHA
ALPHA = 0.05
# --threshold's default: None, the threshold follows the evidence (calibrated on the H200
# recordings of tests/data/h200-timers, tested on the H100 recording of tests/data/h100-steps
# by bench/bench_verdicts.py; docs/analysis.md). None reads the same in percent (the command
# line, the API) and as a fraction (the operations' requests).
DEFAULT_THRESHOLD: float | None = None

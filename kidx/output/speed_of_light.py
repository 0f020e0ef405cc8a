"""Speed-of-light columns and fields: achieved bandwidth and FLOP/s and the share of the
GPU's peak, for tables (``get runs -o wide``, compare, series) and for -o json.

A run whose cost or peak is unknown shows nothing in the column that needs it (``<none>``
in a table, the field left out in json): never a guess. In ``get runs -o wide`` each
column appears only when at least one run listed has a value for it, so a listing of runs
without any known cost prints exactly as before (docs/speed-of-light.md); ``-o csv|tsv``
always has all four, empty where unknown.
"""

from __future__ import annotations

from kidx.speed_of_light.achieved import Achieved, achieved
from kidx.units import DECIMAL_STEPS, NANOSECONDS

NONE = "<none>"


def _four_digits(value: float) -> str:
    text = f"{value:.4g}"
    return f"{value:.0f}" if "e" in text else text


def _decimal(value: float | None, unit: str) -> str:
    if value is None:
        return NONE
    for prefix, scale in DECIMAL_STEPS:
        if value >= scale:
            return _four_digits(value / scale) + prefix + unit
    return _four_digits(value) + unit


def bandwidth(value: float | None) -> str:
    """Bytes per second in decimal units, as datasheets print them: ``1.326TB/s``."""
    return _decimal(value, "B/s")


def flop_rate(value: float | None) -> str:
    """FLOP/s in decimal units: ``554.1TFLOP/s``."""
    return _decimal(value, "FLOP/s")


def percent(fraction: float | None) -> str:
    """A fraction as a percentage with one decimal: ``0.39582`` → ``39.6%``."""
    return NONE if fraction is None else f"{fraction * 100:.1f}%"


# header, the figure a run has for it (None: none), and how a table shows it
RUN_COLUMNS = (
    ("BANDWIDTH", lambda a: a.bytes_per_second, bandwidth),
    ("FLOPS", lambda a: a.flops_per_second, flop_rate),
    ("SOL", lambda a: a.peak.sol if a.peak else None, percent),
    ("SOL-MEASURED", lambda a: a.measured.sol if a.measured else None, percent),
)


def run_columns(figures: list[Achieved | None], raw: bool = False) -> tuple[list[str], list[list[str]]]:
    """The headers and per-run cells of the columns at least one run has a value for;
    ``raw`` for -o csv/tsv: every column, whatever the runs (a script's schema does not
    depend on which runs matched), rates in bytes/s and FLOP/s and shares as fractions, in
    their shortest round-trip form, and nothing for a missing value."""
    values = [[None if a is None else figure(a) for _, figure, _ in RUN_COLUMNS] for a in figures]
    kept = [i for i in range(len(RUN_COLUMNS)) if raw or any(row[i] is not None for row in values)]
    headers = [RUN_COLUMNS[i][0] for i in kept]
    if raw:
        return headers, [["" if row[i] is None else repr(row[i]) for i in kept] for row in values]
    return headers, [[RUN_COLUMNS[i][2](row[i]) for i in kept] for row in values]


def run_achieved(run, measure=None) -> Achieved | None:
    """The figures of an analysed run (compare's and series' rows), from ``measure`` (an
    arm's pooled figure) or the run's own; None unless the figure is a latency."""
    measure = measure if measure is not None else run.measure
    if measure is None or measure.metric != "latency" or measure.unit != NANOSECONDS:
        return None
    environment = None
    if run.environment.spec is not None:
        environment = {"spec": run.environment.spec, "metadata": {"annotations": run.environment.annotations or {}}}
    return achieved(run.manifest.get("spec") or {}, run.workload.spec, environment, measure.value)


# -o csv/tsv of compare and series: the figures raw, one field each, empty where unknown
CSV_FIELDS = ("bytesPerSecond", "flopsPerSecond", "sol", "solMeasured")


def record(figures: Achieved | None) -> dict | None:
    """The ``speedOfLight`` field of a json/yaml record: None where unknown."""
    return None if figures is None else figures.as_dict()


def csv_values(figures: Achieved | None) -> dict:
    if figures is None:
        return dict.fromkeys(CSV_FIELDS)
    return {
        "bytesPerSecond": figures.bytes_per_second,
        "flopsPerSecond": figures.flops_per_second,
        "sol": figures.peak.sol if figures.peak else None,
        "solMeasured": figures.measured.sol if figures.measured else None,
    }


def with_columns(headers: list[str], rows: list[list[str]], figures: list[Achieved | None]):
    """A table's headers and rows with the columns at least one row has a value for appended."""
    extra, cells = run_columns(figures)
    return [*headers, *extra], [[*row, *more] for row, more in zip(rows, cells, strict=True)]

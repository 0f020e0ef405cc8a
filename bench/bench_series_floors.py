#!/usr/bin/env python3
"""How often does `kidx series` cry wolf on floors? Counts of verdicts, not timings.

`bench/bench_verdicts.py` measures compare's verdicts (two arms of runs). A series judges
each step between two single runs, with the spread of the series' other runs, and since
floors it judges a kernel timer's runs on their fastest samples where those are the steadier
figure (kidx.analysis.significance). Here each H100 kernel-timer recording in tests/data is
restored into a store of its own and every series (one configuration's runs, one a process,
in the order observed) is built by kidx.operations.analyse.series with floors off
(``floor_share`` 0) and on (the default). No run changed between processes, so every step
is an A/A comparison: a ``faster`` or ``slower`` is a false call. The report goes to
bench/reports/ (text and JSON, which docs/performance.md does not render).

    .venv/bin/python bench/bench_series_floors.py
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench_store import code_version, columns_text, save_table_report  # noqa: E402
from bench_verdicts import (  # noqa: E402
    AA16_FIXTURE,
    CALIBRATION_H100_FIXTURE,
    GEGLU_MIN_TIME_FIXTURE,
    MIN_TIME_FIXTURE,
    STEPS_FIXTURE,
    STEPS_MIN_TIME_FIXTURE,
)

from kidx.analysis.significance import FASTER, FLOOR_SHARE, FLOORS, SLOWER  # noqa: E402
from kidx.cli.app import run as kidx  # noqa: E402
from kidx.kinds.registry import registry  # noqa: E402
from kidx.operations.analyse.series import SeriesRequest, build_series  # noqa: E402
from kidx.store.store import Store  # noqa: E402

RECORDINGS = (("h100-steps (do_bench's budget, 10 processes)", STEPS_FIXTURE),
              ("h100-aa16 (16 processes)", AA16_FIXTURE),
              ("h100-min-time (--min-time 1, 6 processes)", MIN_TIME_FIXTURE),
              ("h100-steps-min-time (--min-time 0.3, 19 processes)", STEPS_MIN_TIME_FIXTURE),
              ("h100-geglu-min-time (--min-time 1, 20 processes)", GEGLU_MIN_TIME_FIXTURE),
              ("h100-calibration (12 processes)", CALIBRATION_H100_FIXTURE))
SHARES = (("floors off", 0.0), ("floors (default)", FLOOR_SHARE))


def restored(bundle: Path, folder: Path) -> Store:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = kidx(["import", "bundle", str(bundle), "--store", str(folder)])
    if code != 0:
        raise SystemExit(f"kidx import bundle {bundle} exited {code}")
    return Store(folder)


def counted(store: Store, share: float) -> dict[str, int]:
    """Steps judged, false calls among them, and how many were judged on floors."""
    result = build_series(store, registry(), SeriesRequest(names=[], floor_share=share))
    steps = [point for series in result.series for point in series.points if point.change is not None]
    return {"steps": len(steps),
            "false calls": sum(point.verdict in (FASTER, SLOWER) for point in steps),
            "on floors": sum(point.change.judged_on == FLOORS for point in steps)}


def table() -> list[list[str]]:
    """The report's rows: per recording (those present) and rule, as main's header says."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="kidx-bench-series-") as work:
        for index, (name, bundle) in enumerate(RECORDINGS):
            if not bundle.is_file():
                continue
            store = restored(bundle, Path(work) / str(index))
            for variant, share in SHARES:
                found = counted(store, share)
                rows.append([name, variant, str(found["steps"]),
                             f"{100 * found['false calls'] / max(found['steps'], 1):.1f}% "
                             f"({found['false calls']}/{found['steps']})", str(found["on floors"])])
    return rows


def main() -> int:
    started = time.perf_counter()
    rows = table()
    header = ["recording", "rule", "steps judged", "A/A steps called faster/slower", "judged on floors"]
    lines = [f"Series A/A on the H100 kernel-timer recordings, floors off and on, code at "
             f"{code_version(('kidx', 'bench', 'tests/data'))}",
             "each series: one configuration's runs (one a process) in the order observed; each step one run "
             "against the one before it, with the spread of the series' other runs; nothing changed between "
             "processes, so a faster or slower is a false call", "",
             *columns_text(header, rows), "", f"took {time.perf_counter() - started:.0f} s"]
    text = "\n".join(lines)
    print(text)
    save_table_report("bench_series_floors", text, header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

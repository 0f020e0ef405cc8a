"""Printing series: a table per series (oldest point first), or json/yaml/csv."""

from __future__ import annotations

from kidx.output.columns import raw_text
from kidx.output.comparison import band_text, quantity, statistic_header
from kidx.output.table import render_table


def percent(value) -> str:
    return "" if value is None else f"{value * 100:+.1f}%"


def series_heading(series) -> str:
    return (f"protocol {series.protocol.label}, workload {series.workload.label}, "
            f"environment {series.environment.label}, implementation {series.implementation.label}")


def render_series_table(result) -> str:
    blocks = []
    for series in result.series:
        first = series.points[0].run.measure
        headers = ["OBSERVED"]
        if result.label_key:
            headers.append(result.label_key.rsplit("/", 1)[-1].upper())
        headers += [statistic_header(first), "P20-P80", "CHANGE", "VERDICT"]
        if result.baseline:
            gain = "REDUCTION" if first.metric == "peak_memory" else "SPEEDUP"
            headers += [f"{gain}-VS-{result.baseline}".upper(), f"{gain}-CHANGE"]
        headers.append("RUN")
        rows = []
        for point in series.points:
            measure = point.run.measure
            cells = [point.run.observed or "<none>"]
            if result.label_key:
                cells.append(point.label or "<none>")
            cells += [quantity(measure.value, measure.unit), band_text(measure),
                      percent(point.change.ratio - 1) if point.change else "", point.verdict or ""]
            if result.baseline:
                cells += ["<none>" if point.speedup is None else f"{point.speedup:.2f}x", percent(point.speedup_change)]
            cells.append(point.run.name)
            rows.append(cells)
        blocks.append(series_heading(series) + "\n" + render_table(headers, rows))
    if not blocks:
        return ""
    return "\n".join(blocks) + f"\nrule: {result.rule}\n"


def series_notes(result) -> list[str]:
    notes = []
    if result.single:
        notes.append(f"{result.single} series with a single point: nothing to follow")
    if result.unmeasured:
        notes.append(f"{len(result.unmeasured)} runs left out: not passed, or no figure to compare")
    return notes


def point_record(point) -> dict:
    measure, change = point.run.measure, point.change
    return {
        "run": point.run.name,
        "observedAt": point.run.observed or None,
        "label": point.label,
        "statistic": measure.statistic,
        "value": measure.value,
        "unit": measure.unit,
        "low": measure.low,
        "high": measure.high,
        "samples": len(measure.samples) if measure.samples else None,
        "change": None if change is None else change.ratio - 1,
        "verdict": point.verdict,
        "test": change.test if change else None,
        "pValue": change.p_value if change else None,
        "baselineRun": point.baseline.name if point.baseline else None,
        "baselineValue": point.baseline.measure.value if point.baseline else None,
        "speedup": point.speedup,
        "speedupChange": point.speedup_change,
    }


def series_document(result) -> dict:
    return {
        "rule": result.rule,
        "threshold": result.threshold,
        "label": result.label_key,
        "baseline": result.baseline,
        "series": [
            {
                "protocol": s.protocol.name,
                "workload": s.workload.name,
                "environment": s.environment.name,
                "implementation": s.implementation.name,
                "points": [point_record(p) for p in s.points],
            }
            for s in result.series
        ],
        "regressions": len(result.regressions),
        "singlePointSeries": result.single,
    }


CSV_FIELDS = ("protocol", "workload", "environment", "implementation", "run", "observedAt", "label", "statistic",
              "value", "unit", "low", "high", "samples", "change", "verdict", "test", "pValue", "baselineRun",
              "baselineValue", "speedup", "speedupChange")


def series_rows(result) -> list[list[str]]:
    rows = []
    for s in result.series:
        for point in s.points:
            record = point_record(point)
            record.update(protocol=s.protocol.name, workload=s.workload.name, environment=s.environment.name,
                          implementation=s.implementation.name)
            rows.append(["" if record[f] is None else raw_text(record[f]) for f in CSV_FIELDS])
    return rows

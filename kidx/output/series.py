"""Printing series: a table per series (oldest point first), or json/yaml/csv."""

from __future__ import annotations

from kidx.analysis.significance import SUMMARY_ORDER
from kidx.output import speed_of_light
from kidx.output.analysis_printing import AnalysisPrinter
from kidx.output.columns import label_column_header, raw_text
from kidx.output.comparison import (
    band_text,
    gain_header,
    inputs_record,
    judgement_fields,
    markdown_table,
    markdown_text,
    measure_fields,
    parameters_record,
    statistic_header,
    summary_text,
    verdict_cell,
    with_rule,
)
from kidx.output.table import render_table
from kidx.output.terminal import escape_control
from kidx.output.units import quantity
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.operations.analyse.series import Point, Series, SeriesChange, SeriesResult


def percent(value) -> str:
    return "" if value is None else f"{value * 100:+.1f}%"


def series_heading(series: Series) -> str:
    environments = series.environments
    environment = " → ".join(e.label for e in environments) if len(environments) > 1 else series.environment.label
    return (f"protocol {series.protocol.label}, workload {series.workload.label}, "
            f"environment {environment}, implementation {series.implementation.label}")


def change_text(change: SeriesChange) -> str:
    point = change.point
    return (f"change point at {change.run.name} (position {point.position}): {percent(point.change)}, "
            f"p={point.p_value:.2g}; cause: {'; '.join(escape_control(cause) for cause in change.cause)}")


def series_summary(result: SeriesResult) -> str:
    """The verdicts counted and the change points, and why none could be found where no
    series is long enough to hold one."""
    from kidx.analysis.changepoints import MIN_POINTS

    changes = sum(len(s.changes) for s in result.series)
    text = f"{summary_text(result.counts())}; {changes} change point{'' if changes == 1 else 's'}"
    if result.series and all(s.points_read < MIN_POINTS for s in result.series):
        text += f": no series has the {MIN_POINTS} points one needs"
    return text


def series_table(result: SeriesResult, series: Series) -> tuple[list[str], list[list[str]]]:
    """A series' headers and a row of cells per point, as the table prints them."""
    first = series.points[0].run.known_measure
    headers = ["OBSERVED"]
    if result.label_key:
        headers.append(label_column_header(result.label_key))
    headers += [statistic_header(first), "P20-P80", "CHANGE", "VERDICT"]
    if result.baseline:
        gain = gain_header(first)
        headers += [f"{gain}-VS-{result.baseline}".upper(), f"{gain}-CHANGE"]
    headers.append("RUN")
    rows = []
    for point in series.points:
        measure = point.run.known_measure
        cells = [point.run.observed or "<none>"]
        if result.label_key:
            cells.append(point.label or "<none>")
        cells += [quantity(measure.value, measure.unit), band_text(measure),
                  percent(point.change.ratio - 1) if point.change else "",
                  verdict_cell(point.verdict, point.change)]
        if result.baseline:
            cells += ["<none>" if point.speedup is None else f"{point.speedup:.2f}x", percent(point.speedup_change)]
        cells.append(point.run.name)
        rows.append(cells)
    return headers, rows


def render_series_table(result: SeriesResult, wide: bool = False) -> str:
    """``wide``: with the speed-of-light columns each series has values for (-o wide)."""
    blocks = []
    for series in result.series:
        headers, rows = series_table(result, series)
        if wide:
            figures = [speed_of_light.run_achieved(point.run) for point in series.points]
            headers, rows = speed_of_light.with_columns(headers, rows, figures)
        changes = "".join(change_text(change) + "\n" for change in series.changes)
        blocks.append(series_heading(series) + "\n" + render_table(headers, rows) + changes)
    text = with_rule(blocks, result.rule)
    return text + f"summary: {series_summary(result)}\n" if text else ""


def render_series_markdown(result: SeriesResult) -> str:
    """A one-line summary, then each series as the table prints it: its heading, a
    GitHub-flavoured table with the table's columns and its change points; the rule last."""
    lines = [f"**{series_summary(result)}**", ""]
    for series in result.series:
        headers, rows = series_table(result, series)
        lines += [markdown_text(series_heading(series)), "", *markdown_table(headers, rows), ""]
        if series.changes:
            lines += [f"- {markdown_text(change_text(change))}" for change in series.changes] + [""]
    lines.append(f"rule: {markdown_text(result.rule)}")
    lines += [f"- {markdown_text(problem)}" for problem in result.problems]
    return "\n".join(lines) + "\n"


def series_notes(result: SeriesResult) -> list[str]:
    notes = []
    if result.single:
        notes.append(f"{result.single} series with a single point: nothing to follow")
    if result.unmeasured:
        notes.append(f"{len(result.unmeasured)} runs left out: not passed, or no figure to compare")
    notes.extend(result.problems)
    return notes


def series_notices(result: SeriesResult, text: str) -> list[str]:
    """stderr lines under the table (``text``): the notes, and why nothing was shown."""
    return [*series_notes(result), *([] if text else ["No series of two or more points found"])]


def point_record(point: Point) -> dict:
    measure, change = point.run.known_measure, point.change
    return {
        "run": point.run.name,
        "observedAt": point.run.observed or None,
        "label": point.label,
        **measure_fields(measure),
        "change": None if change is None else change.ratio - 1,
        "verdict": point.verdict,
        **judgement_fields(change),
        "baselineRun": point.baseline.name if point.baseline else None,
        "baselineValue": point.baseline.known_measure.value if point.baseline else None,
        "speedup": point.speedup,
        "speedupChange": point.speedup_change,
        "speedOfLight": speed_of_light.record(speed_of_light.run_achieved(point.run)),
    }


def change_record(change: SeriesChange) -> dict:
    point = change.point
    return {"run": change.run.name, "position": point.position, "change": point.change, "pValue": point.p_value,
            "score": point.score, "before": change.before.name, "cause": change.cause}


def series_document(result: SeriesResult) -> dict:
    counts = result.counts()
    return {
        "rule": result.rule,
        "threshold": result.threshold,
        "parameters": parameters_record(result, "none: each point is one run"),
        "label": result.label_key,
        "baseline": result.baseline,
        "series": [
            {
                "protocol": s.protocol.name,
                "workload": s.workload.name,
                "environment": s.environment.name,
                "implementation": s.implementation.name,
                "environments": [e.name for e in s.environments],
                "points": [point_record(p) for p in s.points],
                "changePoints": [change_record(c) for c in s.changes],
            }
            for s in result.series
        ],
        "regressions": len(result.regressions),
        "summary": {verdict: counts.get(verdict, 0) for verdict in SUMMARY_ORDER}
        | {k: v for k, v in counts.items() if k not in SUMMARY_ORDER},
        "singlePointSeries": result.single,
        "problems": list(result.problems),
        "inputs": inputs_record(result.inputs),
    }


CSV_FIELDS = ("protocol", "workload", "environment", "implementation", "run", "observedAt", "label", "statistic",
              "value", "unit", "low", "high", "samples", "change", "verdict", "test", "pValue", "baselineRun",
              "baselineValue", "speedup", "speedupChange", "ciLow", "ciHigh", "evidence", "withinRun", "judgedOn",
              "changePoint", *speed_of_light.CSV_FIELDS)


def series_rows(result: SeriesResult) -> list[list[str]]:
    rows = []
    for s in result.series:
        starts = {change.point.position for change in s.changes}
        for index, point in enumerate(s.points):
            record = point_record(point)
            record.update(protocol=s.protocol.name, workload=s.workload.name, environment=point.run.environment.name,
                          implementation=s.implementation.name, changePoint=index in starts)
            record.update(speed_of_light.csv_values(speed_of_light.run_achieved(point.run)))
            rows.append(["" if record[f] is None else raw_text(record[f]) for f in CSV_FIELDS])
    return rows


SERIES = AnalysisPrinter(render_series_table, series_notices, series_document, CSV_FIELDS, series_rows,
                         render_series_markdown)

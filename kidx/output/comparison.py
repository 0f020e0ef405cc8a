"""Printing what compare found: a table per comparable group, or json/yaml/csv.

The table is for reading: each group under a line naming its protocol, workload and
environment, the rows' figures in readable units, the rule last. json, yaml and csv
carry raw numbers (nanoseconds, bytes) for scripts and CI gates.
"""

from __future__ import annotations

from kidx.output.columns import label_column_header, raw_text
from kidx.output.table import render_table
from kidx.output.units import byte_size, nanoseconds

NOTE_LIST_LIMIT = 5  # groups with nothing compared are listed one by one up to this many


def quantity(value, unit: str) -> str:
    if value is None:
        return "<none>"
    return byte_size(value) if unit == "B" else nanoseconds(value)


def band_text(measure) -> str:
    """The run's band; one that is not p20-p80 (pytest-benchmark's quartiles) says which it is."""
    if measure.low is None:
        return "<none>"
    text = f"{quantity(measure.low, measure.unit)}-{quantity(measure.high, measure.unit)}"
    return text if measure.band in (None, "p20-p80") else f"{text} ({measure.band})"


def statistic_header(measure) -> str:
    prefix = "PEAK-" if measure.metric == "peak_memory" else ""
    return prefix + measure.statistic.upper()


def gain_header(measure) -> str:
    return "REDUCTION" if measure.metric == "peak_memory" else "SPEEDUP"


def with_rule(blocks: list[str], rule: str) -> str:
    """The tables one after another, the significance rule under them; "" without any."""
    if not blocks:
        return ""
    return "\n".join(blocks) + f"\nrule: {rule}\n"


def measure_fields(measure) -> dict:
    """A measure's figures for json, yaml and csv records: raw numbers."""
    return {
        "statistic": measure.statistic,
        "value": measure.value,
        "unit": measure.unit,
        "low": measure.low,
        "high": measure.high,
        "samples": len(measure.samples) if measure.samples else None,
    }


def group_heading(group) -> str:
    parts = [f"protocol {group.protocol.label}", f"workload {group.workload.label}",
             f"environment {group.environment.label}"]
    if group.implementation is not None:
        parts.append(f"implementation {group.implementation.label}")
    return ", ".join(parts)


def render_comparison_table(comparison) -> str:
    blocks = []
    for group in comparison.groups:
        if not group.compared:
            continue
        first = group.rows[0].measure
        by = label_column_header(comparison.label_key) if comparison.label_key else "IMPLEMENTATION"
        headers = [by, statistic_header(first), "P20-P80", "RATIO", gain_header(first), "VERDICT", "RUN"]
        if group.forced:
            headers.insert(6, "NOTE")
        rows = []
        for row in group.rows:
            judgement = row.judgement
            cells = [
                row.label if comparison.label_key else row.run.implementation.label,
                quantity(row.measure.value, row.measure.unit),
                band_text(row.measure),
                "1.000" if judgement is None else f"{judgement.ratio:.3f}",
                "1.00x" if judgement is None else f"{judgement.speedup:.2f}x",
                row.verdict or "",
                row.run.name,
            ]
            if group.forced:
                cells.insert(6, group.forced)
            rows.append(cells)
        blocks.append(group_heading(group) + "\n" + render_table(headers, rows))
    return with_rule(blocks, comparison.rule)


def comparison_notes(comparison) -> list[str]:
    """stderr lines: groups where nothing was compared, runs left out, and why."""
    notes = []
    by_reason: dict[str, list] = {}
    for group in comparison.groups:
        if not group.compared:
            by_reason.setdefault(group.note, []).append(group)
    for reason, groups in by_reason.items():
        noun = "group" if len(groups) == 1 else "groups"
        notes.append(f"{len(groups)} comparable {noun} with {reason}")
        if len(groups) <= NOTE_LIST_LIMIT:
            notes.extend(f"  {group_heading(group)}" for group in groups)
    if comparison.unmeasured:
        notes.append(f"{len(comparison.unmeasured)} runs left out: not passed, or no figure to compare")
    if comparison.unlabelled:
        notes.append(f"{len(comparison.unlabelled)} runs left out: no label {comparison.label_key}")
    return notes


def row_record(row, group) -> dict:
    measure, judgement = row.measure, row.judgement
    baseline_row = row.verdict == "baseline"
    return {
        "run": row.run.name,
        "implementation": row.run.implementation.name,
        "label": row.label,
        "observedAt": row.run.observed or None,
        **measure_fields(measure),
        "ratio": 1.0 if baseline_row else (judgement.ratio if judgement else None),
        "speedup": 1.0 if baseline_row else (judgement.speedup if judgement else None),
        "verdict": row.verdict,
        "test": judgement.test if judgement else None,
        "pValue": judgement.p_value if judgement else None,
        "forced": group.forced is not None,
    }


def comparison_document(comparison) -> dict:
    groups = []
    for group in comparison.groups:
        groups.append({
            "protocol": group.protocol.name,
            "workload": group.workload.name,
            "environment": group.environment.name,
            "implementation": group.implementation.name if group.implementation else None,
            "note": group.note,
            "forced": group.forced,
            "rows": [row_record(row, group) for row in group.rows],
        })
    return {
        "by": f"label={comparison.label_key}" if comparison.label_key else "implementation",
        "rule": comparison.rule,
        "threshold": comparison.threshold,
        "groups": groups,
        "regressions": len(comparison.regressions),
        "leftOut": {"unmeasured": comparison.unmeasured, "unlabelled": comparison.unlabelled},
    }


CSV_FIELDS = ("protocol", "workload", "environment", "implementation", "label", "run", "observedAt", "statistic",
              "value", "unit", "low", "high", "samples", "ratio", "speedup", "verdict", "test", "pValue", "note")


def comparison_rows(comparison) -> list[list[str]]:
    rows = []
    for group in comparison.groups:
        for row in group.rows:
            record = row_record(row, group)
            record.update(protocol=group.protocol.name, workload=group.workload.name,
                          environment=group.environment.name, note=group.note or group.forced)
            rows.append(["" if record[f] is None else raw_text(record[f]) for f in CSV_FIELDS])
    return rows

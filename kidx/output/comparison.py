"""Printing what compare found: a table per comparable group, or json/yaml/csv.

The table is for reading: each group under a line naming its protocol, workload and
environment, the rows' figures in readable units, the rule last. json, yaml and csv
carry raw numbers (nanoseconds, bytes) for scripts and CI gates.
"""

from __future__ import annotations

from collections.abc import Sequence

from kidx.analysis.significance import BASELINE, FLOORS, SUMMARY_ORDER, UNCONFIRMED
from kidx.output import speed_of_light
from kidx.output.analysis_printing import AnalysisPrinter
from kidx.output.columns import label_column_header, raw_text
from kidx.output.table import render_table
from kidx.output.units import quantity, spread_text
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.analysis.hostbound import HostEvidence
    from kidx.analysis.measures import Measure
    from kidx.analysis.significance import Judgement
    from kidx.operations.analyse.compare import Arm, ComparedGroup, ComparedRow, Comparison
    from kidx.operations.select.analysed_runs import AnalysedRun

NOTE_LIST_LIMIT = 5  # groups with nothing compared are listed one by one up to this many


def band_text(measure: Measure) -> str:
    """The run's band; one that is not p20-p80 (pytest-benchmark's quartiles) says which it is."""
    text = spread_text(measure.low, measure.high, measure.unit)
    return text if measure.low is None or measure.band in (None, "p20-p80") else f"{text} ({measure.band})"


def statistic_header(measure: Measure) -> str:
    prefix = "PEAK-" if measure.metric == "peak_memory" else ""
    return prefix + measure.statistic.upper()


def gain_header(measure: Measure) -> str:
    return "REDUCTION" if measure.metric == "peak_memory" else "SPEEDUP"


def with_rule(blocks: list[str], rule: str) -> str:
    """The tables one after another, the significance rule under them; "" without any."""
    if not blocks:
        return ""
    return "\n".join(blocks) + f"\nrule: {rule}\n"


def measure_fields(measure: Measure) -> dict:
    """A measure's figures for json, yaml and csv records: raw numbers."""
    return {
        "statistic": measure.statistic,
        "value": measure.value,
        "unit": measure.unit,
        "low": measure.low,
        "high": measure.high,
        "samples": len(measure.samples) if measure.samples else None,
    }


def group_heading(group: ComparedGroup) -> str:
    parts = [f"protocol {group.protocol.label}", f"workload {group.workload.label}",
             f"environment {group.environment.label}"]
    if group.implementation is not None:
        parts.append(f"implementation {group.implementation.label}")
    return ", ".join(parts)


def summary_text(counts: dict[str, int]) -> str:
    """Every verdict counted: ``2 slower, 5 faster, 10 same, 1 inconclusive, 0 unconfirmed``."""
    words = [f"{counts.get(verdict, 0)} {verdict}" for verdict in SUMMARY_ORDER]
    words += [f"{n} {verdict}" for verdict, n in sorted(counts.items()) if verdict not in SUMMARY_ORDER]
    return ", ".join(words)


def verdict_text(verdict: str | None, judgement) -> str:
    if verdict == UNCONFIRMED and judgement is not None and judgement.within:
        return f"unconfirmed ({judgement.within})"
    return verdict or ""


def verdict_cell(verdict: str | None, judgement) -> str:
    """The verdict as a table shows it: ``on floors`` after one judged on the runs' fastest
    samples (``verdict_text`` alone is the word pages and counts key on)."""
    on = " on floors" if judgement is not None and judgement.judged_on == FLOORS else ""
    return verdict_text(verdict, judgement) + on


def interval_text(judgement: Judgement | None) -> str:
    if judgement is None or judgement.ci is None:
        return ""
    low, high = judgement.ci
    return f"{low:.3f}-{high:.3f}"


def runs_text(arm: Arm) -> str:
    spread = arm.spread
    return str(len(arm.runs)) if spread is None else f"{len(arm.runs)} ±{spread * 100:.1f}%"


def comparison_cells(comparison: Comparison, group: ComparedGroup, row: ComparedRow) -> list[str]:
    judgement = row.judgement
    cells: list = [
        row.label if comparison.label_key else row.run.implementation.label,
        quantity(row.measure.value, row.measure.unit),
        band_text(row.measure),
        runs_text(row.arm),
        "1.000" if judgement is None else f"{judgement.ratio:.3f}",
        interval_text(judgement),
        "1.00x" if judgement is None else ("?" if judgement.speedup is None else f"{judgement.speedup:.2f}x"),
        verdict_cell(row.verdict, judgement) + (" (shown as a baseline)" if row.context else ""),
        row.run.name,
    ]
    if group.forced:
        cells.insert(8, group.forced)
    return cells


def comparison_headers(comparison: Comparison, group: ComparedGroup) -> list[str]:
    first = group.rows[0].measure
    by = label_column_header(comparison.label_key) if comparison.label_key else "IMPLEMENTATION"
    headers = [by, statistic_header(first), "P20-P80", "RUNS", "RATIO", "RATIO-CI", gain_header(first), "VERDICT",
               "RUN"]
    if group.forced:
        headers.insert(8, "NOTE")
    return headers


def render_comparison_table(comparison: Comparison, wide: bool = False) -> str:
    """``wide``: with the speed-of-light columns each group has values for (-o wide)."""
    blocks = []
    for group in comparison.groups:
        if not group.compared:
            continue
        headers = comparison_headers(comparison, group)
        rows = [comparison_cells(comparison, group, row) for row in group.rows]
        if wide:
            figures = [speed_of_light.run_achieved(row.run, row.measure) for row in group.rows]
            headers, rows = speed_of_light.with_columns(headers, rows, figures)
            headers, rows = _with_evidence_columns(headers, rows, group.rows)
        blocks.append(group_heading(group) + "\n" + render_table(headers, rows))
    text = with_rule(blocks, comparison.rule)
    return text + f"summary: {summary_text(comparison.counts())}\n" if text else ""


def detectable_text(judgement: Judgement | None) -> str:
    """The smallest change the evidence could have called, with the runs a side a change of
    the threshold needs where the arms have fewer: ``>12.3% (needs 6 a side)``."""
    if judgement is None or judgement.detectable is None:
        return "<none>"
    return f">{judgement.detectable * 100:.1f}%"


def host_text(host: HostEvidence | None) -> str:
    """The launch overhead with its flag, or the reason the data suggests a host-bound timing."""
    if host is None:
        return "<none>"
    if host.overhead is not None:
        return f"{host.overhead:.2f}x host-bound" if host.host_bound else f"{host.overhead:.2f}x"
    return "likely host-bound (" + "; ".join(host.reasons) + ")"


def _with_evidence_columns(headers: list[str], rows: list[list[str]], compared) -> tuple[list[str], list[list[str]]]:
    """-o wide's DETECTABLE (judged rows) and LAUNCH-OVERHEAD (where any row has evidence) columns."""
    if any(row.judgement is not None for row in compared):
        headers = [*headers, "DETECTABLE"]
        rows = [[*cells, "" if row.judgement is None else detectable_text(row.judgement)]
                for cells, row in zip(rows, compared, strict=True)]
    if any(row.host is not None for row in compared):
        headers = [*headers, "LAUNCH-OVERHEAD"]
        rows = [[*cells, host_text(row.host)] for cells, row in zip(rows, compared, strict=True)]
    return headers, rows


def render_comparison_markdown(comparison: Comparison) -> str:
    """A one-line summary, then each compared group as the table prints it: its heading
    and a GitHub-flavoured table with the table's columns (a forced group's NOTE too),
    the rule and the problems last."""
    lines = [f"**{summary_text(comparison.counts())}**", ""]
    for group in comparison.groups:
        if group.compared:
            headers = comparison_headers(comparison, group)
            rows = [comparison_cells(comparison, group, row) for row in group.rows]
            lines += [markdown_text(group_heading(group)), "", *markdown_table(headers, rows), ""]
    lines += [f"rule: {markdown_text(comparison.rule)}"]
    lines += [f"- {markdown_text(problem)}" for problem in comparison.problems]
    lines += [f"- {markdown_text(note)}" for note in comparison.unmatched if note not in comparison.problems]
    return "\n".join(lines) + "\n"


def markdown_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a GitHub-flavoured table, every cell inert."""
    return [markdown_row(headers), markdown_row(["---"] * len(headers)), *(markdown_row(cells) for cells in rows)]


_MARKDOWN_SPECIAL = {ord(c): "\\" + c for c in "\\`*_[]<>|#!~&"}
_MARKDOWN_SPECIAL[ord("@")] = "@\u2060"  # a word joiner after it: no @mention, and it reads the same
_MARKDOWN_SPECIAL.update({code: " " for code in [*range(0x20), 0x7f, *range(0x80, 0xa0), 0x2028, 0x2029]})


def markdown_text(value) -> str:
    """A value as one line of inert GitHub markdown: control characters and line breaks
    become spaces, and every character that could start markup (a link, an image, HTML,
    emphasis, code, a heading, a table cell, an @mention) is escaped."""
    return str(value).translate(_MARKDOWN_SPECIAL)


def markdown_row(cells) -> str:
    return "| " + " | ".join(markdown_text(cell) for cell in cells) + " |"


def comparison_notes(comparison: Comparison) -> list[str]:
    """stderr lines: groups where nothing was compared, runs left out, and why."""
    notes = []
    by_reason: dict[str | None, list] = {}
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
    notes.extend(note for note in comparison.unmatched if note not in comparison.problems)
    notes.extend(problem for problem in comparison.problems if not problem.startswith("nothing compared"))
    return notes


def comparison_notices(comparison: Comparison, text: str) -> list[str]:
    """stderr lines under the table (``text``): the notes, and why nothing was shown."""
    nothing = "No runs found" if not comparison.inputs else None if text else "Nothing compared"
    judged = [verdict for verdict in comparison.verdicts if verdict not in (None, BASELINE)]
    if nothing == "Nothing compared" and judged:  # --only kept none of the rows compared
        counted: dict[str, int] = {}
        for verdict in judged:
            counted[verdict] = counted.get(verdict, 0) + 1
        rows = "row" if len(judged) == 1 else "rows"
        nothing = f"No row has the verdicts --only asks for; the {len(judged)} {rows} compared: {summary_text(counted)}"
    return [*comparison_notes(comparison), *([nothing] if nothing else [])]


def judgement_fields(judgement: Judgement | None) -> dict:
    """What a verdict rests on, for json, yaml and csv."""
    return {
        "test": judgement.test if judgement else None,
        "pValue": judgement.p_value if judgement else None,
        "ciLow": judgement.ci[0] if judgement and judgement.ci else None,
        "ciHigh": judgement.ci[1] if judgement and judgement.ci else None,
        "evidence": judgement.evidence if judgement else None,
        "withinRun": judgement.within if judgement else None,
        "reason": judgement.reason if judgement else None,
        "detectableChange": judgement.detectable if judgement else None,
        "runsNeeded": judgement.runs_needed if judgement else None,
        "runsNeededFor": judgement.runs_needed_for if judgement else None,
        "threshold": judgement.threshold if judgement else None,
        "judgedOn": judgement.judged_on if judgement else None,
    }


#: ``shownAs`` of a row ``--only`` did not keep, shown as the baseline of a row it kept
#: (``--baseline previous``; ComparedRow.context): not counted
SHOWN_AS_BASELINE = "baseline"


def row_record(row: ComparedRow, group: ComparedGroup) -> dict:
    """A row for json, yaml and csv: the metric compared and which way is better
    (``direction``: lower, higher, or None), its figures and its verdict; ``shownAs`` only
    on a row shown as a kept row's baseline."""
    measure, judgement = row.measure, row.judgement
    baseline_row = row.verdict == BASELINE
    record = {
        "run": row.run.name,
        "implementation": row.run.implementation.name,
        "label": row.label,
        "observedAt": row.run.observed or None,
        "metric": measure.metric,
        "direction": measure.direction,
        **measure_fields(measure),
        "runs": [run.name for run in row.arm.runs],
        "spread": row.arm.spread,
        "ratio": 1.0 if baseline_row else (judgement.ratio if judgement else None),
        "speedup": 1.0 if baseline_row else (judgement.speedup if judgement else None),
        "verdict": row.verdict,
        **judgement_fields(judgement),
        "forced": group.forced is not None,
        "speedOfLight": speed_of_light.record(speed_of_light.run_achieved(row.run, measure)),
        **host_fields(row.host),
    }
    if row.context:
        record["shownAs"] = SHOWN_AS_BASELINE
    return record


def host_fields(host: HostEvidence | None) -> dict:
    """The launch overhead (events time / kernel time, with a kernel-timer twin) and whether
    the figure is host-bound; without a twin, whether the data suggests it and why."""
    return {
        "launchOverhead": host.overhead if host is not None else None,
        "kernelTime": host.kernel_ns if host is not None else None,
        "kernelTimer": host.kernel_timer if host is not None else None,
        "hostBound": host.host_bound if host is not None else None,
        "likelyHostBound": host.likely if host is not None else False,
        "hostBoundReasons": list(host.reasons) if host is not None else [],
    }


def parameters_record(result, pooling: str) -> dict:
    """The rule's parameters, so that a verdict can be re-derived: ``threshold`` and ``minT``
    null where they follow the evidence and the timer (``byTimer`` then says what they are)."""
    from kidx.analysis.changepoints import CHANGE_ALPHA
    from kidx.analysis.significance import POWER, SAME_LIMIT, least_change, least_t

    return {
        "test": "t-test on the logs of the runs' statistics (between runs); within a run: mann-whitney, bands, "
                "threshold",
        "threshold": result.threshold,
        "alpha": result.alpha,
        "minT": result.min_t,
        "byTimer": {timer: {"threshold": least_change(kernel) if result.threshold is None else result.threshold,
                            "minT": least_t(kernel) if result.min_t is None else result.min_t}
                    for timer, kernel in (("kernelTimer", True), ("other", False))},
        "sameLimit": SAME_LIMIT if result.threshold is None else result.threshold,
        "power": POWER,
        "confidence": 1 - result.alpha,
        "interval": "t (between runs); hodges-lehmann (samples)",
        "noise": "pooled within arms and within the series' segments between change points (store history)",
        "changePoints": {"method": "e-divisive means, t-test", "alpha": CHANGE_ALPHA},
        "pooling": pooling,
    }


def inputs_record(runs: Sequence[AnalysedRun]) -> list[dict]:
    return [{"run": run.name, "digest": run.digest} for run in sorted(runs, key=lambda run: run.name)]


def comparison_document(comparison: Comparison) -> dict:
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
        "parameters": parameters_record(comparison, "an arm pools its runs: the median of their statistics, "
                                                    "samples combined; the test uses each run's statistic"),
        "groups": groups,
        "regressions": len(comparison.regressions),
        "summary": {verdict: comparison.counts().get(verdict, 0) for verdict in SUMMARY_ORDER}
        | {k: v for k, v in comparison.counts().items() if k not in SUMMARY_ORDER},
        "problems": list(comparison.problems),
        "unmatched": list(comparison.unmatched),
        "leftOut": {"unmeasured": comparison.unmeasured, "unlabelled": comparison.unlabelled},
        "inputs": inputs_record(comparison.inputs),
        "history": inputs_record(comparison.history),
    }


CSV_FIELDS = ("protocol", "workload", "environment", "implementation", "label", "run", "observedAt", "statistic",
              "value", "unit", "low", "high", "samples", "ratio", "speedup", "verdict", "test", "pValue", "note",
              "runCount", "spread", "ciLow", "ciHigh", "evidence", "withinRun", "judgedOn", *speed_of_light.CSV_FIELDS,
              "metric", "direction")
#: with --only, a last column: ``baseline`` on a row shown as a kept row's baseline, else empty
ONLY_CSV_FIELDS = (*CSV_FIELDS, "shownAs")


def comparison_fields(comparison: Comparison) -> tuple[str, ...]:
    """The csv and tsv header: with ``--only``, ``shownAs`` last, whether or not a row has it."""
    return ONLY_CSV_FIELDS if comparison.only else CSV_FIELDS


def comparison_rows(comparison: Comparison) -> list[list[str]]:
    fields = comparison_fields(comparison)
    rows = []
    for group in comparison.groups:
        for row in group.rows:
            record = row_record(row, group)
            record.update(protocol=group.protocol.name, workload=group.workload.name,
                          environment=group.environment.name, note=group.note or group.forced,
                          runCount=len(row.arm.runs))
            record.update(speed_of_light.csv_values(speed_of_light.run_achieved(row.run, row.measure)))
            rows.append(["" if record.get(f) is None else raw_text(record[f]) for f in fields])
    return rows


COMPARISON = AnalysisPrinter(render_comparison_table, comparison_notices, comparison_document, CSV_FIELDS,
                             comparison_rows, render_comparison_markdown)

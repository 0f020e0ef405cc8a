"""Printing ``compare --aggregate KEY``: the suite's answer, before (or instead of) the rows.

With ``--aggregate``, the view changes as a kubectl flag changes it: the table (and
``wide``) prints one line per value of KEY and implementation instead of a block per
comparable group, then the suite's line, the rule and the summary; csv and tsv print the
same lines. json and yaml carry the groups as ever and ``aggregates`` and ``overall`` beside
them; markdown opens with a pull request's headline (how many configurations got slower,
the worst, the suite's change with its interval) and the aggregate table, with every
group's table folded away under it. The numbers come from ``kidx.analysis.aggregate``.
"""

from __future__ import annotations

from kidx.analysis.significance import SLOWER, SUMMARY_ORDER, VERDICTS
from kidx.output.analysis_printing import AnalysisPrinter
from kidx.output.columns import label_column_header, raw_text
from kidx.output.comparison import (
    COMPARISON,
    comparison_cells,
    comparison_document,
    comparison_fields,
    comparison_headers,
    group_heading,
    markdown_table,
    markdown_text,
    summary_text,
    verdict_cell,
    with_rule,
)
from kidx.output.table import render_table
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.analysis.aggregate import Aggregate
    from kidx.operations.analyse.aggregate import AggregateRow, Compared
    from kidx.operations.analyse.compare import Comparison


def counted_verdicts(comparison: Comparison) -> list[str]:
    """The verdicts the counts show: the summary's, and any other one counted."""
    aggregates = [row.result for row in comparison.aggregates] + [result for _, result in comparison.overall]
    others = [v for v in VERDICTS if v not in SUMMARY_ORDER and any(a.counts.get(v) for a in aggregates)]
    return [*SUMMARY_ORDER, *others]


def ratio_text(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def ci_text(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"{ci[0]:.3f}-{ci[1]:.3f}"


def worst_text(result: Aggregate) -> str:
    """``1.094 unconfirmed (slower)``: the worst configuration's ratio and verdict."""
    worst = result.worst
    if worst is None:
        return ""
    compared: Compared = worst.identity
    return f"{worst.ratio:.3f} {verdict_cell(compared.row.verdict, compared.row.judgement)}"


def _shows_label(comparison: Comparison) -> bool:
    key = comparison.aggregate_key
    return comparison.label_key is not None and (key is None or key.label != comparison.label_key)


def _shows_implementation(comparison: Comparison) -> bool:
    key = comparison.aggregate_key
    return key is None or key.field != "implementation"


def _mixed_metrics(comparison: Comparison) -> bool:
    return len({row.metric for row in comparison.aggregates}) > 1


def aggregate_headers(comparison: Comparison) -> list[str]:
    key = comparison.aggregate_key
    assert key is not None
    headers = [label_column_header(key.field)]
    if _shows_implementation(comparison):
        headers.append("IMPLEMENTATION")
    if _shows_label(comparison):
        headers.append(label_column_header(comparison.label_key or ""))
    headers.append("BASELINE")
    if _mixed_metrics(comparison):
        headers.append("METRIC")
    headers += ["CONFIGS", *(v.upper() for v in counted_verdicts(comparison)), "GEOMEAN", "GEOMEAN-CI", "WORST",
                "WORST-RUN"]
    return headers


def aggregate_cells(comparison: Comparison, row: AggregateRow) -> list[str]:
    result = row.result
    cells = [row.value if row.value is not None else "<none>"]
    if _shows_implementation(comparison):
        cells.append(row.implementation.label)
    if _shows_label(comparison):
        cells.append(row.label or "")
    cells.append(row.baseline)
    if _mixed_metrics(comparison):
        cells.append(row.metric)
    cells += [str(result.configurations), *(str(result.counts.get(v, 0)) for v in counted_verdicts(comparison)),
              ratio_text(result.geomean), ci_text(result.ci), worst_text(result),
              result.worst.identity.row.run.name if result.worst is not None else ""]
    return cells


def headline(comparison: Comparison) -> str:
    """The suite's answer in one line: ``2 of 124 configurations slower (…); worst: RUN,
    ratio 1.094, slower; overall: geometric-mean ratio 0.412, 95% interval 0.389-0.437``
    (with several metrics, the overall change of each, by name)."""
    from kidx.analysis.aggregate import worst_of

    suite = [result for _, result in comparison.overall]
    configurations = sum(result.configurations for result in suite)
    if not configurations:
        return "0 configurations compared"

    def count(verdict: str) -> int:
        return sum(result.counts.get(verdict, 0) for result in suite)

    others = ", ".join(f"{count(v)} {v}" for v in counted_verdicts(comparison) if v != SLOWER)
    text = f"{count(SLOWER)} of {configurations} configurations slower ({others})"
    worst = worst_of([result.worst for result in suite])
    if worst is not None:
        compared: Compared = worst.identity
        text += (f"; worst: {compared.row.run.name}, ratio {worst.ratio:.3f}, "
                 f"{verdict_cell(compared.row.verdict, compared.row.judgement)}")
    changes = []
    for metric, result in comparison.overall:
        if result.geomean is None:
            continue
        change = f"{metric} " if len(comparison.overall) > 1 else ""
        change += f"geometric-mean ratio {result.geomean:.3f}"
        if result.ci is not None:
            change += f", {(1 - comparison.alpha) * 100:g}% interval {ci_text(result.ci)}"
        changes.append(change)
    if changes:
        text += "; overall: " + "; ".join(changes)
    return text + " (one configuration one vote)"


def render_aggregate_table(comparison: Comparison, wide: bool = False) -> str:
    """The aggregate table, the suite's line, the rule and the summary (``wide``: the same)."""
    rows = [aggregate_cells(comparison, row) for row in comparison.aggregates]
    if not rows:
        return ""
    text = with_rule([render_table(aggregate_headers(comparison), rows) + f"\nsuite: {headline(comparison)}"],
                     comparison.rule)
    return text + f"summary: {summary_text(comparison.counts())}\n"


def render_aggregate_markdown(comparison: Comparison) -> str:
    """The headline in bold, the aggregate table, every compared group's table folded
    under it (as ``-o markdown`` prints them without ``--aggregate``), the rule and the
    problems: a pull request comment whose first line answers it."""
    lines = [f"**{markdown_text(headline(comparison))}**", ""]
    if comparison.aggregates:
        rows = [aggregate_cells(comparison, row) for row in comparison.aggregates]
        lines += [*markdown_table(aggregate_headers(comparison), rows), ""]
    compared = [group for group in comparison.groups if group.compared]
    if compared:
        lines += ["<details><summary>every configuration</summary>", ""]
        for group in compared:
            headers = comparison_headers(comparison, group)
            cells = [comparison_cells(comparison, group, row) for row in group.rows]
            lines += [markdown_text(group_heading(group)), "", *markdown_table(headers, cells), ""]
        lines += ["</details>", ""]
    lines += [f"rule: {markdown_text(comparison.rule)}"]
    lines += [f"- {markdown_text(problem)}" for problem in comparison.problems]
    lines += [f"- {markdown_text(note)}" for note in comparison.unmatched if note not in comparison.problems]
    return "\n".join(lines) + "\n"


def worst_record(result: Aggregate) -> dict | None:
    """The worst configuration: its row's identity, ratio, speedup and verdict."""
    if result.worst is None:
        return None
    compared: Compared = result.worst.identity
    group, row = compared.group, compared.row
    return {
        "run": row.run.name,
        "protocol": group.protocol.name,
        "workload": group.workload.name,
        "environment": group.environment.name,
        "implementation": row.run.implementation.name,
        "label": row.label,
        "ratio": result.worst.ratio,
        "speedup": result.worst.speedup,
        "verdict": row.verdict,
        "withinRun": row.judgement.within if row.judgement is not None else None,
        "judgedOn": row.judgement.judged_on if row.judgement is not None else None,
    }


def aggregate_figures(comparison: Comparison, result: Aggregate) -> dict:
    """configurations, the verdicts counted, geomeanRatio, ciLow, ciHigh and worst."""
    return {
        "configurations": result.configurations,
        **{verdict: result.counts.get(verdict, 0) for verdict in counted_verdicts(comparison)},
        "geomeanRatio": result.geomean,
        "ciLow": result.ci[0] if result.ci is not None else None,
        "ciHigh": result.ci[1] if result.ci is not None else None,
        "worst": worst_record(result),
    }


def aggregate_record(comparison: Comparison, row: AggregateRow) -> dict:
    key = comparison.aggregate_key
    assert key is not None
    # with --aggregate implementation the key is the implementation: by name, as in every record
    record = {key.field: row.value, "implementation": row.implementation.name, "label": row.label,
              "baseline": row.baseline, "metric": row.metric}
    return record | aggregate_figures(comparison, row.result)


def aggregate_document(comparison: Comparison) -> dict:
    """compare's document, with ``aggregate`` (the key), ``aggregates`` and ``overall``
    where ``--aggregate`` was given."""
    document = comparison_document(comparison)
    key = comparison.aggregate_key
    if key is None:
        return document
    document["aggregate"] = key.text
    document["aggregates"] = [aggregate_record(comparison, row) for row in comparison.aggregates]
    document["overall"] = [{"metric": metric} | aggregate_figures(comparison, result)
                           for metric, result in comparison.overall]
    document["parameters"]["aggregate"] = (
        "geometric mean of the ratios of the rows with a verdict, one configuration one vote; its interval a "
        "Student t interval over their log ratios at 1 - alpha (one configuration: the row's own interval)")
    return document


def aggregate_fields(comparison: Comparison) -> list[str]:
    key = comparison.aggregate_key
    assert key is not None
    fields = [key.field] + [f for f in ("implementation", "label", "baseline", "metric") if f != key.field]
    return [*fields, "configurations", *counted_verdicts(comparison), "geomeanRatio", "ciLow", "ciHigh",
            "worstRun", "worstRatio", "worstVerdict"]


def aggregate_rows(comparison: Comparison) -> list[list[str]]:
    rows = []
    for row in comparison.aggregates:
        record = aggregate_record(comparison, row)
        worst = record.pop("worst") or {}
        record.update(worstRun=worst.get("run"), worstRatio=worst.get("ratio"), worstVerdict=worst.get("verdict"))
        rows.append(["" if record[f] is None else raw_text(record[f]) for f in aggregate_fields(comparison)])
    return rows


def printer_for(comparison: Comparison) -> AnalysisPrinter:
    """How to print a comparison: the aggregates' view with ``--aggregate``, else the rows'."""
    if comparison.aggregate_key is None:
        return COMPARISON._replace(fields=comparison_fields(comparison))
    return AnalysisPrinter(render_aggregate_table, COMPARISON.notices, aggregate_document,
                           aggregate_fields(comparison), aggregate_rows, render_aggregate_markdown)

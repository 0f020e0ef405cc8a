"""The texts of the store's reports: what ``apply`` and ``delete`` did, ``history``, ``fsck``
and ``gc``.

Each renderer takes the operation's typed result and returns the text to print."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from kidx.output.table import render_table
from kidx.output.terminal import escape_control
from kidx.output.to_printer import NamedLine, render_lines, render_names
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.formats.framework import Conversion
    from kidx.kinds.registry import KindInfo
    from kidx.operations.export.exporting import Exported
    from kidx.operations.ingest.restore_bundle import BundleImport
    from kidx.operations.maintain.apply import ApplyReport, Outcome
    from kidx.operations.maintain.fsck import Finding, FsckReport
    from kidx.operations.maintain.gc import GcReport
    from kidx.operations.maintain.history import RevisionLine
    from kidx.store.catalog import Entry


def import_notices(format_name: str, conversion: Conversion, report: ApplyReport | None, files: int,
                   attached: str | None) -> list[str]:
    """``import``'s lines on stderr: records read and skipped, and what happened per kind
    (or, without ``report``, the kinds converted), then a line per record skipped.

    ``files`` counts the files read, also those that gave no objects (header only)."""
    noun = conversion.noun
    parts = [f"{conversion.rows_read} {noun} read"]
    if report is not None:
        counts = Counter((o.info.kind, o.action) for o in report.outcomes)
        for kind in dict.fromkeys(o.info.kind for o in report.outcomes):
            actions = ", ".join(f"{counts[(kind, a)]} {a}" for a in ("created", "configured", "unchanged", "repaired")
                                if counts[(kind, a)])
            parts.append(f"{kind} {actions}")
    else:
        kinds = Counter(document.body["kind"] for document in conversion.documents)
        parts.extend(f"{kind} {count}" for kind, count in kinds.items())
    if attached is not None:
        parts.append(f"runs refer to ExecutionEnvironment {attached}")
    reasons = Counter(record.reason.split(" of line")[0] for record in conversion.skipped)
    skipped = f"{len(conversion.skipped)} {noun} skipped"
    if reasons:
        skipped += " (" + ", ".join(f"{count} {reason}" for reason, count in reasons.items()) + ")"
    parts.append(skipped)
    notices = [f"import {format_name} ({files} file{'s' if files != 1 else ''}): " + "; ".join(parts)]
    notices += [f"  skipped {record.source}, line {record.line}: {record.reason}" for record in conversion.skipped]
    return notices


def export_summary(exported: Exported) -> str:
    """``export``'s line on stderr: what was written in which format, and where."""
    report, output_file = exported.report, exported.output_file
    where = "standard output" if output_file == "-" else output_file
    if exported.format_name == "bmf":
        left = [f"{count:,} {what}" for count, what in ((report.older, "older runs of the same benchmarks"),
                                                         (report.without_figure, "runs without a figure")) if count]
        return (f"exported {len(report.benchmarks):,} benchmarks in Bencher Metric Format to {where}"
                + (f"; left out: {', '.join(left)}" if left else ""))
    if exported.format_name == "pytorch-benchmark":
        return f"exported {len(report.records):,} runs as PyTorch OSS benchmark (v3) records to {where}"
    if exported.format_name == "parquet":
        return (f"exported {report.runs:,} runs ({report.columns:,} columns) as Parquet to {output_file} "
                f"({report.size:,} bytes)")
    if output_file != "-":
        where = f"{output_file} ({report.size:,} bytes)"
    dangling = f"; {report.dangling:,} references to objects not in the store" if report.dangling else ""
    return (f"exported {report.names:,} names, {report.revisions:,} revisions and {report.objects:,} objects "
            f"to {where}{dangling}")


def outcome_lines(outcomes: Iterable[Outcome], names_only: bool, suffix: str | None) -> str:
    """A line per object applied: ``KIND/NAME ACTION`` (``created``, ``configured``, …),
    or ``KIND/NAME`` with ``-o name``; ``suffix`` (the dry run's) after each."""
    return (render_names if names_only else render_lines)(applied(outcomes, suffix))


def applied(outcomes: Iterable[Outcome], suffix: str | None) -> list[NamedLine]:
    """What an apply did, as the name outcomes family prints it (``outcome_lines``)."""
    tail = f" {suffix}" if suffix else ""
    return [NamedLine(f"{o.info.qualified_name}/{o.name}", f"{o.info.qualified_name}/{o.name} {o.action}{tail}")
            for o in outcomes]


def bundle_lines(imported: BundleImport, names_only: bool, suffix: str | None) -> str:
    """``import bundle``'s line per name restored: ``KIND/NAME ACTION`` (``restored``,
    ``unchanged``; control characters escaped), or ``KIND/NAME`` with ``-o name``;
    ``suffix`` (the dry run's) after each."""
    return (render_names if names_only else render_lines)(restored(imported, suffix))


def restored(imported: BundleImport, suffix: str | None) -> list[NamedLine]:
    """What restoring a bundle did, as the name outcomes family prints it (``bundle_lines``)."""
    lines = []
    for outcome in imported.report.outcomes:
        name = f"{outcome.info.qualified_name}/{outcome.name}"
        lines.append(NamedLine(name, escape_control(f"{name} {outcome.action}") + (f" {suffix}" if suffix else "")))
    return lines


def bundle_summary(imported: BundleImport, suffix: str | None) -> str:
    """``import bundle``'s line on stderr: what the bundle held, and what restoring it did."""
    contents = imported.contents
    counts = Counter(outcome.action for outcome in imported.report.outcomes)
    actions = ", ".join(f"{count:,} {action}" for action, count in counts.items())
    return (f"import bundle: {len(contents.names):,} names, {len(contents.revisions):,} revisions, "
            f"{len(contents.objects):,} objects" + (f"; {actions}" if actions else "")
            + (f" {suffix}" if suffix else ""))


def deletion_lines(deleted: Iterable[tuple[KindInfo, Entry]], names_only: bool, suffix: str | None) -> str:
    """A line per name deleted (``(kind info, entry)`` pairs): kubectl's ``KIND "NAME" deleted``,
    or ``KIND/NAME`` with ``-o name``; ``suffix`` (the dry run's) after each."""
    return (render_names if names_only else render_lines)(deletions(deleted, suffix))


def deletions(deleted: Iterable[tuple[KindInfo, Entry]], suffix: str | None) -> list[NamedLine]:
    """What a delete did, as the name outcomes family prints it (``deletion_lines``)."""
    tail = f" {suffix}" if suffix else ""
    return [NamedLine(f"{info.qualified_name}/{entry.name}", f'{info.qualified_name} "{entry.name}" deleted{tail}')
            for info, entry in deleted]


HISTORY_HEADERS = ["REVISION", "EVENT", "GENERATION", "DIGEST", "RECORDED", "CHANGES"]


def history_table(lines: Iterable[RevisionLine], no_headers: bool = False) -> str:
    """One row per revision (``operations.history.RevisionLine``), oldest first."""
    rows = [
        [str(line.revision.revision), line.revision.event, str(line.revision.generation or ""),
         (line.revision.digest or "")[:19], line.revision.recorded, line.changes]
        for line in lines
    ]
    return render_table(None if no_headers else HISTORY_HEADERS, rows)


# ------------------------------------------------------------------------------- fsck


def fsck_json(report: FsckReport, repair: bool) -> str:
    """``fsck -o json``: what was checked, the problems and notes (and what was repaired)."""
    document = {
        "checked": report.checked,
        "problems": [finding.as_dict() for finding in report.problems],
        "notes": [finding.as_dict() for finding in report.notes],
    }
    if repair:
        document["repaired"] = [finding.as_dict() for finding in report.repaired]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def fsck_text(report: FsckReport, repair: bool = False) -> str:
    """What was repaired, each finding on a line, then what was checked and the counts."""
    lines = [f"repaired {_finding_line(finding)}" for finding in report.repaired]
    lines += [_finding_line(finding) for finding in report.problems + report.notes]
    checked = report.checked
    lines.append(f"checked {checked['objects']} objects, {checked['names']} names, "
                 f"{checked['revisions']} revisions")
    lines.append(_counts("problem", report.problems) if report.problems else "no problems found")
    if report.notes:
        lines.append(_counts("note", report.notes))
    return "".join(escape_control(line) + "\n" for line in lines)  # names and paths may hold ESC


# fsck's renderers, by the name its rows of the printer table give them
FSCK: dict[str, Callable[[FsckReport, bool], str]] = {"json": fsck_json, "text": fsck_text}


def _finding_line(finding: Finding) -> str:
    """``check subject: message``; an object is named by its file (its digest is in the path)."""
    return f"{finding.check} {finding.path or finding.subject}: {finding.message}"


def _counts(word: str, findings: Sequence[Finding]) -> str:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.check] = counts.get(finding.check, 0) + 1
    plural = word if len(findings) == 1 else word + "s"
    return f"{len(findings)} {plural}: " + ", ".join(f"{check} {count}" for check, count in counts.items())


def fsck_advice(problems: Sequence[Finding], repaired: bool, repairable_from_objects: Iterable[str]) -> str:
    """The one notice after problems: which command fixes which of them."""
    checks = {finding.check for finding in problems}
    advice = []
    if checks & set(repairable_from_objects) and not repaired:
        advice.append("'kidx fsck --repair' rebuilds indexes and cached columns from the objects")
    if checks & {"damaged-object", "missing-object"}:
        advice.append("apply the original manifests again, or 'kidx fsck --repair --from-bundle FILE', "
                      "to restore missing or damaged objects")
    if "catalog-missing" in checks:
        advice.append("'kidx import bundle FILE' into an empty store restores names and history from a bundle")
    return "; ".join(advice) or (
        "these problems cannot be repaired automatically (see 'Checking the store: fsck' in docs/maintenance.md)"
    )


# --------------------------------------------------------------------------------- gc


def gc_removed(report: GcReport, shown_path: Callable[[str], str], suffix: str | None) -> str:
    """One line per file removed (or that would be, with ``suffix``); an object kept in a
    file of many (the store's pack) is named by its digest after the file."""
    tail = f" {suffix}" if suffix else ""
    return "".join(f"{shown_path(removal.where)}{_digest_unless_named(removal)} removed{tail}\n"
                   for removal in report.removed)


def _digest_unless_named(removal) -> str:
    if removal.digest is None or removal.where.replace("/", "").replace("\\", "").endswith(removal.digest[7:]):
        return ""
    return f" ({removal.digest})"


def gc_summary(report: GcReport, suffix: str | None) -> str:
    """The notice: objects and temporary files removed, their bytes, objects kept."""
    tail = f" {suffix}" if suffix else ""
    objects = sum(1 for removal in report.removed if removal.digest is not None)
    temporary = len(report.removed) - objects
    size = sum(removal.size for removal in report.removed)
    return (f"{_count(objects, 'unused object')} and {_count(temporary, 'temporary file')} removed "
            f"({size:,} bytes), {_count(report.kept, 'object')} kept{tail}")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"

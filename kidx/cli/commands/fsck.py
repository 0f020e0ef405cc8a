"""kidx fsck [--repair [--from-bundle FILE]] [-o json]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.common import StoreOption, kind_registry, open_store, output
from kidx.errors import UsageError

EXAMPLES = """\b
Examples:
  kidx fsck
  kidx fsck -o json
  kidx fsck --repair --from-bundle backup.kidx.json
"""


def fsck(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help=(
                "Rebuild indexes and cached columns from the objects; with --from-bundle, also restore missing or "
                "damaged objects."
            ),
        ),
    ] = False,
    from_bundle: Annotated[
        str | None,
        typer.Option(
            "--from-bundle",
            help="A bundle (kidx export) to restore missing or damaged objects from; needs --repair.",
        ),
    ] = None,
    output_format: Annotated[str | None, typer.Option("--output", "-o", help="json: the report as JSON.")] = None,
    store: StoreOption = None,
) -> int:
    """Check the store: every object file against its digest, every name, revision and
    index against the objects; report stray and orphaned files.

    Exit 0 when no problem is found (notes such as orphaned objects are not problems),
    1 otherwise. With --repair, fix what can be rebuilt and report what is left.
    """
    from kidx.operations.fsck import fsck as check
    from kidx.output.terminal import escape_control

    if output_format not in (None, "json"):
        raise UsageError(f"unexpected -o output mode: {output_format}. Supported: json")
    if from_bundle is not None and not repair:
        raise UsageError("--from-bundle needs --repair")
    report = check(open_store(store), kind_registry(), repair=repair, bundle_path=from_bundle)
    out = output()
    if output_format == "json":
        import json

        document = {
            "checked": report.checked,
            "problems": [finding.as_dict() for finding in report.problems],
            "notes": [finding.as_dict() for finding in report.notes],
        }
        if repair:
            document["repaired"] = [finding.as_dict() for finding in report.repaired]
        out.data(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        lines = [f"repaired {_line(finding)}" for finding in report.repaired]
        lines += [_line(finding) for finding in report.problems + report.notes]
        checked = report.checked
        lines.append(f"checked {checked['objects']} objects, {checked['names']} names, "
                     f"{checked['revisions']} revisions")
        lines.append(_counts("problem", report.problems) if report.problems else "no problems found")
        if report.notes:
            lines.append(_counts("note", report.notes))
        out.data("".join(escape_control(line) + "\n" for line in lines))  # names and paths may hold ESC
    if report.problems:
        out.notice(_advice(report.problems, repair))
    return 1 if report.problems else 0


def _line(finding) -> str:
    """``check subject: message``; an object is named by its file (its digest is in the path)."""
    return f"{finding.check} {finding.path or finding.subject}: {finding.message}"


def _counts(word: str, findings) -> str:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.check] = counts.get(finding.check, 0) + 1
    plural = word if len(findings) == 1 else word + "s"
    return f"{len(findings)} {plural}: " + ", ".join(f"{check} {count}" for check, count in counts.items())


def _advice(problems, repaired: bool) -> str:
    from kidx.operations.fsck import REPAIRABLE_FROM_OBJECTS

    checks = {finding.check for finding in problems}
    advice = []
    if checks & set(REPAIRABLE_FROM_OBJECTS) and not repaired:
        advice.append("'kidx fsck --repair' rebuilds indexes and cached columns from the objects")
    if checks & {"damaged-object", "missing-object"}:
        advice.append("apply the original manifests again, or 'kidx fsck --repair --from-bundle FILE', "
                      "to restore missing or damaged objects")
    if "catalog-missing" in checks:
        advice.append("'kidx import bundle FILE' into an empty store restores names and history from a bundle")
    return "; ".join(advice) or (
        "these problems cannot be repaired automatically (see 'Checking the store: fsck' in docs/store.md)"
    )


def register(app: typer.Typer) -> None:
    app.command("fsck", epilog=EXAMPLES)(fsck)

"""kidx import liger FILE… [--dry-run] [-o name|yaml|json]"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Optional

import typer

from kidx.cli.common import DryRunOption, StoreOption, kind_registry, open_store, output, parse_dry_run
from kidx.errors import UsageError

LARGE_INPUT_ROWS = 500

import_app = typer.Typer(
    name="import",
    help="Import benchmark results from other tools' formats, or restore a kidx bundle.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@import_app.command(
    "liger",
    epilog="""\b
Examples:
  kidx import liger all_benchmark_data*.csv
  kidx import liger all_benchmark_data.csv -o yaml | kidx apply -f -
""",
)
def liger(
    files: Annotated[list[str], typer.Argument(help="Liger-Kernel benchmark CSV files (all_benchmark_data*.csv).")],
    dry_run: DryRunOption = "none",
    output_format: Annotated[Optional[str], typer.Option("--output", "-o", help="name: names only; yaml or json: print the manifests instead of storing them.")] = None,
    store: StoreOption = None,
) -> None:
    """Import Liger-Kernel's benchmark CSVs: one run per row, plus the protocols,
    environments, workloads and implementations they refer to.

    Goes through the same validation and all-or-nothing batch as apply. With -o yaml or
    -o json nothing is stored: the output can be piped to 'kidx apply -f -'.
    """
    from kidx.importers.liger import convert_files

    suffix = parse_dry_run(dry_run)
    if output_format not in (None, "name", "yaml", "json"):
        raise UsageError(f"unexpected -o output mode: {output_format}. Supported: name, yaml, json")
    out = output()
    converted = convert_files(files)
    if output_format in ("yaml", "json"):
        from kidx.output.serialize import as_list, to_json, to_yaml

        document = as_list([document.body for document in converted.documents])
        out.data(to_yaml(document) if output_format == "yaml" else to_json(document))
        _summarise(out, converted, None, len(dict.fromkeys(files)))
        return
    from kidx.cli.commands.apply import print_outcomes
    from kidx.operations.apply import apply_documents

    show_progress = out.stderr_is_terminal() and converted.rows_read >= LARGE_INPUT_ROWS
    with _progress(out, show_progress, len(converted.documents)) as advance:
        report = apply_documents(
            open_store(store), converted.documents, kind_registry(), dry_run=suffix is not None, progress=advance
        )
    print_outcomes(report, output_format, suffix)
    _summarise(out, converted, report, len(dict.fromkeys(files)))


@import_app.command(
    "bundle",
    epilog="""\b
Examples:
  kidx import bundle backup.kidx.json --store /tmp/restored
""",
)
def bundle(
    file: Annotated[str, typer.Argument(help="A bundle written by 'kidx export'.")],
    dry_run: DryRunOption = "none",
    output_format: Annotated[Optional[str], typer.Option("--output", "-o", help="Only 'name': print object names without the verb.")] = None,
    store: StoreOption = None,
) -> None:
    """Restore a bundle written by 'kidx export': its objects, names and complete history,
    exactly as exported (same digests, times, generations).

    A name the store already has must have the same history (it is then unchanged);
    any other overlap is refused and nothing is written.
    """
    from kidx.operations.bundle import read_bundle
    from kidx.operations.export import restore

    suffix = parse_dry_run(dry_run)
    if output_format not in (None, "name"):
        raise UsageError(f"unexpected -o output mode: {output_format}. We only support '-o name'")
    registry = kind_registry()
    contents = read_bundle(file, [info.kind for info in registry.kinds])
    report = restore(open_store(store), registry, contents, file, dry_run=suffix is not None)
    out = output()
    lines = []
    for outcome in report.outcomes:
        name = f"{outcome.info.qualified_name}/{outcome.name}"
        lines.append(name if output_format == "name" else f"{name} {outcome.action}" + (f" {suffix}" if suffix else ""))
    out.data("".join(line + "\n" for line in lines))
    counts = Counter(outcome.action for outcome in report.outcomes)
    out.notice(
        f"import bundle: {len(contents.names):,} names, {len(contents.revisions):,} revisions, "
        f"{len(contents.objects):,} objects; " + ", ".join(f"{count:,} {action}" for action, count in counts.items())
        + (f" {suffix}" if suffix else "")
    )


def _summarise(out, converted, report, files: int) -> None:
    """One line on stderr: rows read and skipped, and what happened per kind.

    ``files`` counts the files read, also those that gave no objects (header only)."""
    parts = [f"{converted.rows_read} rows read"]
    if report is not None:
        counts = Counter((o.info.kind, o.action) for o in report.outcomes)
        for kind in dict.fromkeys(o.info.kind for o in report.outcomes):
            actions = ", ".join(f"{counts[(kind, a)]} {a}" for a in ("created", "configured", "unchanged", "repaired") if counts[(kind, a)])
            parts.append(f"{kind} {actions}")
    else:
        kinds = Counter(document.body["kind"] for document in converted.documents)
        parts.extend(f"{kind} {count}" for kind, count in kinds.items())
    reasons = Counter(row.reason.split(" of line")[0] for row in converted.skipped)
    skipped = f"{len(converted.skipped)} rows skipped"
    if reasons:
        skipped += " (" + ", ".join(f"{count} {reason}" for reason, count in reasons.items()) + ")"
    parts.append(skipped)
    out.notice(f"import liger ({files} file{'s' if files != 1 else ''}): " + "; ".join(parts))
    for row in converted.skipped:
        out.notice(f"  skipped {row.source}, line {row.line}: {row.reason}")


class _progress:
    """A rich progress bar on a terminal; otherwise nothing (and rich is not imported)."""

    def __init__(self, out, enabled: bool, total: int):
        self.out, self.enabled, self.total = out, enabled, total
        self._bar = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            console=Console(file=self.out.stderr), transient=True,
        )
        self._bar.start()
        tasks: dict[str, int] = {}

        def advance(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = self._bar.add_task(phase, total=total)
            self._bar.update(tasks[phase], completed=done)

        return advance

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")

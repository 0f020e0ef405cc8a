"""kidx apply -f FILE|DIR|- [-R] [--dry-run] [-o name]"""

from __future__ import annotations

import typer

from kidx.cli.common import kind_registry, open_store, parse_dry_run, print_outcomes
from kidx.cli.options import DryRunOption, FilenameOption, NameOutputOption, RecursiveOption, StoreOption
from kidx.errors import UsageError
from kidx.output.to_printer import to_printer

EXAMPLES = """\b
Examples:
  kidx apply -f run.yaml
  kidx apply -f results/ -R --dry-run
  kidx get runs -o yaml | kidx apply -f -
"""


def apply(
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    dry_run: DryRunOption = "none",
    output_format: NameOutputOption = None,
    store: StoreOption = None,
) -> None:
    """Create or update objects from manifests, all or nothing.

    Reads YAML (multi-document) and JSON, Lists and bundles. Every document is validated
    before anything is written; on any error nothing is changed. Runs may refer to other
    objects by name (protocolRef: {name: …}); apply pins such references to digests.
    """
    from kidx.api.applying import read_manifest_files
    from kidx.cli.exiting import keep_until_exit
    from kidx.operations.maintain.apply import apply_documents

    suffix = parse_dry_run(dry_run)
    printing = to_printer("apply", output_format)
    if not filename:
        raise UsageError("must specify -f")
    result = read_manifest_files(filename, recursive, kind_registry())
    report = apply_documents(
        open_store(store), result.documents, kind_registry(), result.texts, dry_run=suffix is not None
    )
    print_outcomes(report, printing, suffix)
    keep_until_exit(result, report)  # every parsed document: freeing them one by one takes long


def register(app: typer.Typer) -> None:
    app.command("apply", epilog=EXAMPLES)(apply)

"""kidx pull SRC [TYPE [NAME…] | TYPE/NAME… | TYPE -l SEL]"""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.cli.commands.push import ForceOption, SelectionArgument, run_transfer
from kidx.cli.common import open_store
from kidx.cli.options import DryRunOption, SelectorOption, StoreOption

EXAMPLES = """\b
Examples:
  kidx pull postgresql://kidx@db.example.org/bench
  kidx pull /mnt/shared/kidx runs -l gpu=h100 --dry-run
"""


def pull(
    source: Annotated[
        str,
        typer.Argument(help="The store to copy from: a folder or a postgresql:// URL.", show_default=False),
    ],
    arguments: SelectionArgument = None,
    selector: SelectorOption = None,
    force: ForceOption = False,
    dry_run: DryRunOption = "none",
    store: StoreOption = None,
) -> int:
    """Copy objects, names and their revisions from another store into this one.

    The reverse of push, with the same rules: objects first (each re-hashed), then names
    with their revisions; what the copied objects refer to comes with them; a name changed
    in both stores since they last agreed is a conflict unless --force.
    """
    from kidx.store.store import Store

    return run_transfer(Store(source), open_store(store), arguments, selector, force, dry_run)


def register(app: typer.Typer) -> None:
    app.command("pull", epilog=EXAMPLES)(pull)

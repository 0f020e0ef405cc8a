"""The typer options several commands share (``--store``, ``-f``, ``-R``, ``-l``,
``--dry-run``, ``-o name``)."""

from __future__ import annotations

from typing import Annotated

import typer

from kidx.output.printers import output_help

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="The store: a folder or a postgresql:// URL (default: $KIDX_STORE, else the user data folder).",
        show_default=False,
    ),
]
FilenameOption = Annotated[
    list[str] | None,
    typer.Option("--filename", "-f", help="File, folder or '-' (stdin); repeatable, comma-separated."),
]
RecursiveOption = Annotated[
    bool, typer.Option("--recursive", "-R", help="Also read sub-folders of the folders given with -f.")
]
SelectorOption = Annotated[
    str | None,
    typer.Option("--selector", "-l",
                 help="Label selector, e.g. -l 'liger_version=0.6.1,gpu in (nvidia-h100-80gb-hbm3,nvidia-b200)'."),
]
DryRunOption = Annotated[
    str,
    typer.Option("--dry-run", help='"none", "client" or "server": with client or server, only show what would happen.'),
]
NameOutputOption = Annotated[
    str | None, typer.Option("--output", "-o", help=output_help("apply"))
]

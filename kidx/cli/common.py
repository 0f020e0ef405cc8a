"""What every command shares: the store option, the registry, output formats."""

from __future__ import annotations

from typing import Annotated

import typer

# read the same way by the Python API (re-exported for the commands)
from kidx.api.arguments import parse_field_selector as parse_field_selector
from kidx.api.arguments import parse_selector as parse_selector
from kidx.errors import UsageError
from kidx.output.gateway import Output

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
    typer.Option("--selector", "-l", help="Label selector, e.g. -l 'liger_version=0.6.1,gpu in (h100,b200)'."),
]
DryRunOption = Annotated[
    str,
    typer.Option("--dry-run", help='"none", "client" or "server": with client or server, only show what would happen.'),
]
NameOutputOption = Annotated[
    str | None, typer.Option("--output", "-o", help="Only 'name': print object names without the verb.")
]


def open_store(location: str | None, must_exist: bool = False):
    """The store ``--store`` names, else $KIDX_STORE, else the default one. ``must_exist``
    (reading commands): a store named explicitly that does not exist is an error, not an
    empty store; the default store reads as empty until its first write."""
    import os

    from kidx.api.store import backend_store
    from kidx.store.store import STORE_ENV

    store = backend_store(location)
    named = location if location is not None else os.environ.get(STORE_ENV)
    if must_exist and named and not store.exists() and not _holds_files(named):
        from kidx.errors import KidxError
        from kidx.store.postgres_url import masked

        source = "--store" if location is not None else f"${STORE_ENV}"
        raise KidxError(f"no store at {masked(named)} ({source}): nothing has been written there (check "
                        "the path, or write to it first, e.g. kidx apply -f)")
    return store


def _holds_files(location: str) -> bool:
    """Something on disk at a folder store's location (a store whose catalog is lost, a
    file in its way): the store itself says what is wrong with it."""
    from pathlib import Path

    if "://" in location:
        return False
    folder = Path(location)
    if folder.is_dir():
        return any(folder.iterdir())
    existing = next((path for path in (folder, *folder.parents) if path.exists()), None)
    return existing is not None and not existing.is_dir()


def kind_registry():
    from kidx.kinds.registry import registry

    return registry()


def output() -> Output:
    return Output()


def parse_dry_run(value: str) -> str | None:
    """None when not a dry run, else the suffix to print: ``(dry run)``/``(server dry run)``."""
    if value in ("", "none", "false"):
        return None
    if value in ("client", "true"):
        return "(dry run)"
    if value == "server":
        return "(server dry run)"
    raise UsageError(f'Invalid dry-run value ({value}). Must be "none", "server", or "client".')


def report_missing(out: Output, missing: list[str], ignore_not_found: bool) -> int:
    """NotFound lines for names that matched nothing; the exit code that follows."""
    if ignore_not_found or not missing:
        return 0
    for message in missing:
        out.reason_error("NotFound", message)
    return 1

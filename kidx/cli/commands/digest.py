"""kidx digest -f FILE: print each document's digest before applying it."""

from __future__ import annotations

import typer

from kidx.cli.common import kind_registry, open_store, output, read_files, unresolved_without_store
from kidx.cli.options import FilenameOption, RecursiveOption, StoreOption
from kidx.errors import InvalidInputError


def digest(
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    store: StoreOption = None,
) -> None:
    """Print '<digest>  <Kind>/<name>' for each document, as apply would store it.

    Validates like apply and pins name references (protocolRef) from the same input or the
    store, but writes nothing.
    """
    from kidx.operations.maintain.apply import apply_documents

    result = read_files(filename, recursive)
    the_store = open_store(store)
    try:
        report = apply_documents(the_store, result.documents, kind_registry(), result.texts, dry_run=True)
    except InvalidInputError as exc:
        raise unresolved_without_store(exc, the_store, store) from None
    output().data("".join(f"{o.digest}  {o.info.kind}/{o.name}\n" for o in report.outcomes))


def register(app: typer.Typer) -> None:
    app.command("digest")(digest)

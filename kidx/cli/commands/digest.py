"""kidx digest -f FILE: print each document's digest before applying it."""

from __future__ import annotations

import typer

from kidx.cli.common import FilenameOption, RecursiveOption, StoreOption, kind_registry, open_store, output
from kidx.errors import InvalidInputError, UsageError


def digest(
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    store: StoreOption = None,
) -> None:
    """Print '<digest>  <Kind>/<name>' for each document, as apply would store it.

    Validates like apply and pins name references (protocolRef) from the same input or the
    store, but writes nothing.
    """
    from kidx.manifests.reader import expand_sources, read_sources
    from kidx.operations.apply import apply_documents

    if not filename:
        raise UsageError("must specify -f")
    result = read_sources(expand_sources(filename, recursive))
    if result.problems:
        raise InvalidInputError(result.problems)
    report = apply_documents(open_store(store), result.documents, kind_registry(), result.texts, dry_run=True)
    output().data("".join(f"{o.digest}  {o.info.kind}/{o.name}\n" for o in report.outcomes))


def register(app: typer.Typer) -> None:
    app.command("digest")(digest)

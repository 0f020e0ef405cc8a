"""kidx diff -f FILE…: exit 0 when nothing would change, 1 when something would, 2 on error."""

from __future__ import annotations

import typer

from kidx.cli.common import kind_registry, open_store, output, read_files, require_store, unresolved_without_store
from kidx.cli.options import FilenameOption, RecursiveOption, StoreOption
from kidx.errors import InvalidInputError, KidxError

DIFF_ERROR_EXIT = 2


def diff(
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    store: StoreOption = None,
) -> int:
    """Show, as a unified diff of YAML, how apply would change the store.

    Exit status: 0 no differences, 1 differences found, 2 an error (kubectl's contract).
    """
    from kidx.operations.maintain.diff import changed_objects
    from kidx.output.diff import render_diff

    try:
        result = read_files(filename, recursive)
        the_store = open_store(store)
        try:
            changes = changed_objects(the_store, result.documents, kind_registry(), result.texts)
        except InvalidInputError as exc:
            raise unresolved_without_store(exc, the_store, store) from None
        # a store named that does not exist is an error, as for get: not "everything is new"
        require_store(the_store, store)
        text = render_diff(changes)
    except KidxError as exc:
        exc.exit_code = DIFF_ERROR_EXIT
        raise
    output().data(text)
    return 1 if text else 0


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)

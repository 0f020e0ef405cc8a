"""kidx diff -f FILE…: exit 0 when nothing would change, 1 when something would, 2 on error."""

from __future__ import annotations

import typer

from kidx.cli.common import FilenameOption, RecursiveOption, StoreOption, kind_registry, open_store, output
from kidx.errors import InvalidInputError, KidxError, UsageError

DIFF_ERROR_EXIT = 2


def diff(
    filename: FilenameOption = None,
    recursive: RecursiveOption = False,
    store: StoreOption = None,
) -> int:
    """Show, as a unified diff of YAML, how apply would change the store.

    Exit status: 0 no differences, 1 differences found, 2 an error (kubectl's contract).
    """
    from kidx.manifests.reader import expand_sources, read_sources
    from kidx.operations.diff import changed_objects
    from kidx.output.diff import render_diff

    try:
        if not filename:
            raise UsageError("must specify -f")
        result = read_sources(expand_sources(filename, recursive))
        if result.problems:
            raise InvalidInputError(result.problems)
        text = render_diff(changed_objects(open_store(store), result.documents, kind_registry(), result.texts))
    except KidxError as exc:
        exc.exit_code = DIFF_ERROR_EXIT
        raise
    output().data(text)
    return 1 if text else 0


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)

"""kidx import FORMAT FILE… [--environment NAME|FILE] [--dry-run] [-o name|yaml|json]

One command per format in kidx.formats.framework.IMPORTERS, all through ``import_files``:
the converter module is imported only when its format is used; the summary line, the
progress bar, ``--dry-run``, ``-o`` and attaching an environment are the same for all.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated

import typer

from kidx.cli.common import kind_registry, open_store, output, parse_dry_run
from kidx.cli.options import DryRunOption, NameOutputOption, StoreOption
from kidx.formats.framework import IMPORTERS, ImporterInfo
from kidx.output.printers import output_help
from kidx.output.to_printer import to_printer

if TYPE_CHECKING:
    from collections.abc import Callable

    from kidx.operations.ingest.importing import ImportResult, Progress
    from kidx.output.to_printer import Printing

LARGE_INPUT_RECORDS = 500

import_app = typer.Typer(
    name="import",
    help="Import benchmark results from other tools' formats, or restore a kidx bundle.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

_COMMON_DOC = """

    Goes through the same validation and all-or-nothing batch as apply. With -o yaml or
    -o json nothing is stored: the output can be piped to 'kidx apply -f -'. With
    --environment (a stored ExecutionEnvironment's name, or a file from 'kidx env
    capture') the runs refer to that environment instead of the one the file implies.
    """

EnvironmentOption = Annotated[
    str | None,
    typer.Option(
        "--environment",
        help="ExecutionEnvironment the runs ran in: a stored name, or a manifest file (kidx env capture > FILE).",
    ),
]
OutputOption = Annotated[
    str | None,
    typer.Option("--output", "-o", help=output_help("import")),
]


LibraryOption = Annotated[
    str | None,
    typer.Option("--library", help="The Implementations' library (default: the project name in the pyproject.toml "
                                   "or setup.cfg of this folder or above)."),
]


# options a format may take besides the common ones (ImporterInfo.options), by name
_OPTIONS = {
    "op": Annotated[str | None, typer.Option("--op", help="The operator the file measured (a tritonbench CSV does "
                                                          "not name it).")],
    "mode": Annotated[str | None, typer.Option("--mode", help="The mode it ran in: fwd, bwd, fwd_bwd or fwd_no_grad "
                                                              "(a tritonbench CSV does not name it).")],
    "level": Annotated[int | None, typer.Option("--level", min=1,
                                                help="The KernelBench level of the problems, where the file does "
                                                     "not say.")],
}


def _command(format_name: str) -> Callable[..., None]:
    def plain_command(
        files: list[str],
        environment: EnvironmentOption = None,
        dry_run: DryRunOption = "none",
        output_format: OutputOption = None,
        store: StoreOption = None,
    ) -> None:
        import_files(format_name, files, environment, dry_run, output_format, store)

    def command_with_library(  # the same command, with --library
        files: list[str],
        environment: EnvironmentOption = None,
        library: LibraryOption = None,
        dry_run: DryRunOption = "none",
        output_format: OutputOption = None,
        store: StoreOption = None,
    ) -> None:
        import_files(format_name, files, environment, dry_run, output_format, store,
                     options={"library": library} if library else None)

    info = IMPORTERS[format_name]
    command: Callable[..., None] = command_with_library if info.library_option else plain_command
    # (annotations are strings here; this one is built per format, so it is given as an object)
    command.__annotations__["files"] = Annotated[list[str], typer.Argument(help=info.files)]
    if info.options:
        import inspect

        def with_options(files, environment, dry_run, output_format, store, **options) -> None:
            given = {name: value for name, value in options.items() if value is not None}
            import_files(format_name, files, environment, dry_run, output_format, store, options=given or None)

        signature = inspect.signature(plain_command, eval_str=True)
        common = list(signature.parameters.values())
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=_OPTIONS[name])
                 for name in info.options]
        with_options.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*common, *extra])
        with_options.__annotations__ = {**plain_command.__annotations__, **{n: _OPTIONS[n] for n in info.options}}
        command = with_options
    command.__name__ = format_name.replace("-", "_")
    command.__doc__ = "\n    ".join(info.help.splitlines()) + _COMMON_DOC
    return command


def _examples(info: ImporterInfo) -> str:
    return "\b\nExamples:\n" + "".join(f"  {example}\n" for example in info.examples)


# each format's help and examples are its entry in IMPORTERS (kidx.formats.framework.ImporterInfo)
for _name, _info in IMPORTERS.items():
    import_app.command(_name, help=None, epilog=_examples(_info))(_command(_name))


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
    output_format: NameOutputOption = None,
    store: StoreOption = None,
) -> None:
    """Restore a bundle written by 'kidx export': its objects, names and complete history,
    exactly as exported (same digests, times, generations).

    A name the store already has must have the same history (it is then unchanged);
    any other overlap is refused and nothing is written.
    """
    from kidx.operations.ingest.restore_bundle import import_bundle
    from kidx.output.events import stderr_reporter
    from kidx.output.reports import bundle_summary, restored

    suffix = parse_dry_run(dry_run)
    printing = to_printer("import bundle", output_format)
    out = output()
    imported = import_bundle(file, kind_registry(), lambda: open_store(store), stderr_reporter(out),
                             dry_run=suffix is not None)
    out.data(printing.render(restored(imported, suffix)))
    out.notice(bundle_summary(imported, suffix))


def import_files(format_name: str, files: list[str], environment: str | None, dry_run: str,
                 output_format: str | None, store, options: dict | None = None) -> None:
    """``kidx import FORMAT``: the files imported, then printed (``print_import``)."""
    from kidx.operations.ingest.importing import import_files as importing

    suffix = parse_dry_run(dry_run)
    printing = to_printer("import", output_format)
    result = importing(format_name, files, kind_registry(), functools.cache(lambda: open_store(store)),
                       environment=environment, dry_run=suffix is not None, keep=not printing.prints_manifests,
                       options=options, progress=import_progress())
    print_import(format_name, result, printing, suffix)


def import_progress() -> Progress:
    """The progress bar of an import: drawn on a terminal, for a large input only."""
    from kidx.output.events import progress_reporter

    out = output()
    return lambda records: progress_reporter(out, records, LARGE_INPUT_RECORDS)


def print_import(format_name: str, result: ImportResult, printing: Printing, suffix: str | None) -> None:
    """``kidx import FORMAT`` (and ``kidx record``) after the import: the manifests printed
    (``-o yaml|json``) or what storing them did, and the summary on stderr."""
    from kidx.output.events import stderr_reporter

    out = output()
    for event in result.notices:
        stderr_reporter(out)(event)
    if result.report is None:
        from kidx.output.serialize import as_list

        out.data(printing.render(as_list([document.body for document in result.conversion.documents])))
    else:
        from kidx.cli.common import print_outcomes

        print_outcomes(result.report, printing, suffix)
    from kidx.output.reports import import_notices

    for notice in import_notices(format_name, result.conversion, result.report, result.files, result.attached):
        out.notice(notice)
    for note in result.conversion.notes:
        out.warning(note)


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")

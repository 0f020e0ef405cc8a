"""What every command shares: opening the store, the registry, the output gateway, reading
selectors and --dry-run, reporting names not found."""

from __future__ import annotations

from kidx.api.arguments import parse_field_selector as parse_field_selector
from kidx.api.arguments import parse_selector as parse_selector
from kidx.errors import InvalidInputError, KidxError, UsageError
from kidx.output.gateway import Output

# read the same way by the Python API (re-exported for the commands)
from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from kidx.manifests.reader import ReadResult
    from kidx.output.to_printer import Printing


def open_store(location: str | None, must_exist: bool = False):
    """The store ``--store`` names, else $KIDX_STORE, else the default one. ``must_exist``
    (reading commands): see ``require_store``."""
    from kidx.api.locations import command_store

    return command_store(location, must_exist)


def read_files(filename: list[str] | None, recursive: bool) -> ReadResult:
    """The documents of ``-f`` (``-R``: sub-folders too), every problem at once as
    InvalidInputError; without ``-f``, ``must specify -f``."""
    from kidx.manifests.reader import expand_sources, read_sources

    if not filename:
        raise UsageError("must specify -f")
    result = read_sources(expand_sources(filename, recursive))
    if result.problems:
        raise InvalidInputError(result.problems)
    return result


def require_store(store, location: str | None) -> None:
    """A store named explicitly (``--store``, $KIDX_STORE) that does not exist is an error
    for a reading command, not an empty store (``kidx.api.store.require_store``)."""
    from kidx.api.locations import require_store as required

    required(store, location, "--store")


STORE_LACKS = " is neither in this batch nor in the store"  # how apply says a by-name reference is not found


def unresolved_without_store(exc: InvalidInputError, the_store, location: str | None) -> InvalidInputError:
    """``exc``'s problems, where a by-name reference the batch does not satisfy was looked
    for in a store named (--store, $KIDX_STORE) that does not exist, saying so rather than
    that the store lacks it (digest and diff read a store for references)."""
    from kidx.api.locations import named_location
    from kidx.store.postgres_url import masked

    try:
        require_store(the_store, location)
    except KidxError:
        named, said = named_location(location, "--store") or ("", "")
        problems = [problem._replace(message=problem.message.replace(
            STORE_LACKS, f" is not in this batch, and there is no store at {masked(named)} ({said}) to look in"))
            for problem in exc.problems]
        return InvalidInputError(problems)
    return exc


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


def print_outcomes(report, printing: Printing, suffix: str | None) -> None:
    """What an apply did (its warnings, then a line per object): ``apply`` and the commands
    that apply what they produce (``import``, ``env capture --apply``, ``record``)."""
    from kidx.output.reports import applied

    out = output()
    for warning in report.warnings:
        out.warning(warning)
    out.data(printing.outcomes(applied(report.outcomes, suffix)))


def report_missing(out: Output, missing: list[str], ignore_not_found: bool) -> int:
    """NotFound lines for names that matched nothing; the exit code that follows."""
    if ignore_not_found or not missing:
        return 0
    for message in missing:
        out.reason_error("NotFound", message)
    return 1

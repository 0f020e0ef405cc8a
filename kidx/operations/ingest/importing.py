"""Import: benchmark tools' files converted into manifests (``kidx.formats``), an
environment attached, then stored, as ``kidx import FORMAT`` and ``kidx record`` do.

The caller says how progress is shown: ``progress(records)`` gives a context whose
Reporter the store's apply reports ``Progressed`` events to (the command's draws the output
gateway's bar; None shows nothing)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from kidx.errors import UsageError
from kidx.formats.framework import IMPORTERS, Conversion, importer
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry
    from kidx.operations.events import Event
    from kidx.operations.maintain.apply import ApplyReport
    from kidx.operations.reporting import Reporter
    from kidx.store.store import Store

Progress = Callable[[int], AbstractContextManager["Reporter | None"]]  # records -> a context giving a Reporter


class ImportResult(NamedTuple):
    conversion: Conversion  # the documents, with what was read and skipped
    report: ApplyReport | None  # what storing did; None when the documents were only converted
    files: int  # files read (each once)
    attached: str | None  # the environment attached (--environment), by name
    notices: tuple[Event, ...] = ()  # about the environment's measured peaks kept (``output.events`` words them)


def check_format(format_name: str) -> None:
    """A format kidx imports, else a usage error naming those it does."""
    if format_name not in IMPORTERS:
        raise UsageError(f"unknown format {format_name!r}; formats: {', '.join(IMPORTERS)}")


def format_options(format_name: str, library: str | None = None, op: str | None = None, mode: str | None = None,
                   level: int | None = None) -> dict[str, object]:
    """The options the format's import takes (``--op``, ``--mode``, ``--level``,
    ``--library``), refused for a format that does not take them."""
    if library is not None and not IMPORTERS[format_name].library_option:
        takes = ", ".join(name for name, info in IMPORTERS.items() if info.library_option)
        raise UsageError(f"--library applies to {takes} (the {format_name} format names its implementations itself)")
    options: dict[str, object] = {option: value for option, value in (("op", op), ("mode", mode), ("level", level))
                                  if value is not None}
    for option in options:
        if option not in IMPORTERS[format_name].options:
            takes = ", ".join(key for key, info in IMPORTERS.items() if option in info.options)
            raise UsageError(f"--{option} applies to {takes}, not {format_name}")
    if library:
        options["library"] = library
    return options


def import_files(
    format_name: str,
    files: list[str],
    registry: KindRegistry,
    store: Callable[[], Store],
    environment: str | None = None,
    dry_run: bool = False,
    keep: bool = True,
    adjust: Callable[[Conversion], Conversion] | None = None,
    options: dict | None = None,
    progress: Progress | None = None,
    origins: dict[str, str] | None = None,
) -> ImportResult:
    """Convert (with the format's ``options``), attach the environment (a stored name, or a
    manifest file), ``adjust`` (kidx record labels the runs), then store (``keep``; with
    ``dry_run`` only what would happen) or only convert. ``store`` opens the store, once
    and only when needed. A format whose runs may already be in the store from another
    file of the same session (``merge_stored``) is merged with it. ``origins`` (kidx
    record: each file -> the recording and process that wrote it) converts each file apart
    and makes its runs' identity that origin and the harness's key (``from_origin``), so
    no run of one process is taken for another's, whatever their figures."""
    module = importer(format_name)
    if origins is None:
        converted = module.convert_files(files, **(options or {}))
    else:
        converted = _converted_apart(module, files, options or {}, origins)
    if keep:  # before a given environment joins: the user names that one
        from kidx.operations.ingest.stored_runs import named_apart_from_stored

        converted = named_apart_from_stored(converted, store())
    attached = None
    if environment is not None:
        from kidx.operations.ingest.import_environment import attach_named_environment

        converted, attached = attach_named_environment(module, converted, environment, registry, store)
    if adjust is not None:
        converted = adjust(converted)
    file_count = len(dict.fromkeys(files))
    if not keep:
        return ImportResult(converted, None, file_count, attached)
    merge = getattr(module, "merge_stored", None)
    if merge is not None:
        from kidx.operations.ingest.stored_runs import merged_with_stored

        converted = merged_with_stored(converted, merge, store())
    notices: tuple[Event, ...] = ()
    if attached is not None:
        from kidx.operations.ingest.measured_peaks import keep_measured_peaks_in

        documents, kept = keep_measured_peaks_in(converted.documents, attached, store())
        converted, notices = dataclasses.replace(converted, documents=documents), tuple(kept)
    from kidx.operations.maintain.apply import apply_documents

    with progress(converted.rows_read) if progress is not None else nullcontext() as advance:
        report = apply_documents(store(), converted.documents, registry, dry_run=dry_run, progress=advance)
    return ImportResult(converted, report, file_count, attached, notices)


def _converted_apart(module, files: list[str], options: dict, origins: dict[str, str]) -> Conversion:
    """Each file converted alone, its runs given their origin's identity, then joined; the
    problems of every file are reported together."""
    from kidx.errors import InvalidInputError
    from kidx.formats.origins import from_origin, joined

    conversions, problems = [], []
    for path in dict.fromkeys(files):
        try:
            conversions.append(from_origin(module.convert_files([path], **options), origins[path]))
        except InvalidInputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidInputError(problems)
    return joined(conversions)


__all__ = ["ImportResult", "Progress", "check_format", "format_options", "import_files"]

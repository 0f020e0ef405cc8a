"""The store from Python: ``kidx.open_store`` and what a ``Store`` can do.

Everything here goes through the operations the commands use: ``get`` selects as
``kidx get`` does, ``compare`` and ``series`` build the commands' requests and return
their results, ``apply`` reads and stores as ``kidx apply`` does (all or nothing), ``import_files``
converts and stores as ``kidx import`` does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from kidx.analysis.defaults import ALPHA, DEFAULT_THRESHOLD
from kidx.api.arguments import BY_IMPLEMENTATION, reference_values
from kidx.api.locations import backend_store, require_store
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

    from kidx.api.analysis import Comparison, SeriesResult
    from kidx.api.objects import StoredObject
    from kidx.api.recording import Recording
    from kidx.kinds.registry import KindRegistry
    from kidx.operations.events import Event
    from kidx.operations.select.analysed_runs import AnalysedRun
    from kidx.store import store as backend

    Documents = (
        str | os.PathLike[str] | Recording | Mapping[str, Any] | Iterable[Mapping[str, Any] | Recording]
    )


def open_store(location: str | os.PathLike[str] | None = None) -> Store:
    """Open a store: a folder path, a ``postgresql://`` URL, else ``$KIDX_STORE``, else
    the default folder, as the command line resolves ``--store``. Nothing is created
    until the first write; reading a store named here or by ``$KIDX_STORE`` that does not
    exist raises KidxError, as reading commands do. Use it as a context manager to close
    it when done::

        with kidx.open_store("results/") as store:
            runs = store.get("runs", selector="kernel=llama4_rope")
    """
    return Store(backend_store(location), location)


class ApplyOutcome:
    """One object of an apply: its kind, name, digest, and what apply did with it
    (``created``, ``configured``, ``unchanged`` or ``repaired``)."""

    __slots__ = ("action", "digest", "kind", "name")

    def __init__(self, kind: str, name: str, action: str, digest: str) -> None:
        self.kind, self.name, self.action, self.digest = kind, name, action, digest

    def __repr__(self) -> str:
        return f"ApplyOutcome(kind={self.kind!r}, name={self.name!r}, action={self.action!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ApplyOutcome):
            return NotImplemented
        return (self.kind, self.name, self.action, self.digest) == (other.kind, other.name, other.action,
                                                                    other.digest)

    def __hash__(self) -> int:
        return hash((self.kind, self.name, self.action, self.digest))


class ApplyResult:
    """What an apply did: ``outcomes`` in input order, and the ``warnings`` the command
    prints (references to objects not in the store, objects written again)."""

    __slots__ = ("dry_run", "outcomes", "warnings")

    def __init__(self, outcomes: list[ApplyOutcome], warnings: list[str], dry_run: bool) -> None:
        self.outcomes, self.warnings, self.dry_run = outcomes, warnings, dry_run

    def count(self, action: str) -> int:
        """How many objects got ``action`` (created, configured, unchanged, repaired; a
        bundle's names: restored, unchanged)."""
        return sum(1 for outcome in self.outcomes if outcome.action == action)

    def __repr__(self) -> str:
        actions = ("created", "configured", "unchanged", "repaired", "restored")
        counts = ", ".join(f"{a} {self.count(a)}" for a in actions if self.count(a))
        return f"{type(self).__name__}({counts or 'nothing'}{', dry run' if self.dry_run else ''})"


class ImportResult(ApplyResult):
    """What an import did: an ``ApplyResult`` (its ``warnings`` also say what the files
    held that could not be kept), with the ``summary`` line ``kidx import`` prints
    (records read and skipped, what happened per kind) and a line per record ``skipped``
    (``skipped FILE, line N: REASON``)."""

    __slots__ = ("skipped", "summary")

    def __init__(self, outcomes: list[ApplyOutcome], warnings: list[str], dry_run: bool, summary: str,
                 skipped: list[str]) -> None:
        super().__init__(outcomes, warnings, dry_run)
        self.summary, self.skipped = summary, skipped


class Store:
    """A kidx store, opened by ``kidx.open_store``. Reads see the store as it is at each
    call; ``apply`` writes all or nothing."""

    def __init__(self, store: backend.Store, location: str | os.PathLike[str] | None = None) -> None:
        self._store = store
        self._named = location  # as given to open_store: None for $KIDX_STORE or the default
        self._exists = False
        self._references: dict[tuple[str, str], dict[str, Any] | None] = {}

    @property
    def location(self) -> str:
        """The folder or URL of the store."""
        return str(self._store.location)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the store's connection (a later call opens it again)."""
        self._store.close()

    def __repr__(self) -> str:
        return f"Store({self.location!r})"

    # reading ----------------------------------------------------------------------------

    def get(self, kind: str, *names: str, selector: str | None = None,
            field_selector: str | None = None, references: Iterable[str] = ()) -> list[StoredObject]:
        """Objects of ``kind`` (any spelling ``kidx get`` takes: runs, run, br,
        BenchmarkRun, ``runs,workloads``, ``all``), by name or digest, else every one the
        label and field selectors select (the command line's grammar, references
        included: ``workload.spec.parameters.seq=16384``) and that refers to each of
        ``references`` (``--references``: ``workload/NAME``, a digest, ``TYPE:SELECTOR``).
        A name that matches nothing raises NotFoundError with the command's message; a
        label selector that selects no run warns (``kidx.errors.EmptySelection``) what in
        it matched nothing."""
        from kidx.api.objects import stored_object
        from kidx.errors import NotFoundError
        from kidx.operations.select.get import Query, find_objects

        query = Query(arguments=[kind, *names], selector=_label_selector(selector),
                      field_selector=_field_selector(field_selector), references=reference_values(references))
        self._require()
        result = find_objects(self._store, _registry(), query)
        if result.missing:
            raise NotFoundError("\n".join(result.missing))
        found = [stored_object(manifest, self._resolve) for _, manifests in result.groups for manifest in manifests]
        if not found and not names and query.selector is not None and _is_runs(kind):
            _warn_empty(self._store, query.selector)
        return found

    def records(self, selector: str | None = None, field_selector: str | None = None,
                columns: Sequence[str] | None = None, references: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Selected runs as rows of plain values (kidx.api.rows says which columns);
        ``references`` selects as in ``get``. A column in ``columns`` that no selected run
        has (nor, for ``labels.KEY``, any run in the store) raises UsageError naming the
        nearest one; a label selector that selects
        nothing warns (``kidx.errors.EmptySelection``)."""
        from kidx.api.rows import run_rows

        runs = self._runs(selector, field_selector, references)
        return run_rows(runs, columns, self._store.catalog().label_keys() if columns is not None and runs else ())

    def frame(self, selector: str | None = None, field_selector: str | None = None,
              columns: Sequence[str] | None = None, references: Iterable[str] = ()) -> Any:
        """Selected runs as a pandas DataFrame, one row each, the columns of ``records``
        (``observedAt`` as a timezone-aware timestamp). Needs pandas (``pip install '.[pandas]'``
        from a checkout of kidx)."""
        from kidx.api.rows import data_frame

        return data_frame(self.records(selector, field_selector, columns, references), columns)

    def compare(self, *names: str, selector: str | None = None, field_selector: str | None = None,
                references: Iterable[str] = (), by: str = BY_IMPLEMENTATION, baseline: str | None = None,
                threshold: float | None = DEFAULT_THRESHOLD, only: str | Iterable[str] | None = None,
                force: bool = False, alpha: float = ALPHA, aggregate: str | None = None,
                metric: str | None = None) -> Comparison:
        """``kidx compare``: the same options (``threshold`` in percent, None: it follows
        the evidence, as without ``--threshold``; ``only`` the verdicts to keep,
        ``aggregate`` the key of ``--aggregate``, ``metric`` the metric of ``--metric``),
        the result the command renders; ``.to_dict()`` is its ``-o json``."""
        from kidx.api.analysis import Comparison, compare_request
        from kidx.operations.analyse.compare import compare

        request = compare_request(names, selector, field_selector, references, by, baseline, threshold, only, force,
                                  alpha, aggregate, metric=metric)
        self._require()
        result = compare(self._store, _registry(), request)
        _warn_problems(result.problems)
        return Comparison(result)

    def series(self, *names: str, selector: str | None = None, field_selector: str | None = None,
               references: Iterable[str] = (), label: str | None = None, baseline: str | None = None,
               threshold: float | None = DEFAULT_THRESHOLD, alpha: float = ALPHA,
               tail: int | None = None) -> SeriesResult:
        """``kidx series``: the same options, the result the command renders;
        ``.to_dict()`` is its ``-o json``. ``tail``: as ``--tail``, each series' newest
        ``tail`` points only (read with the one before the first, which it is judged against)."""
        from kidx.api.analysis import SeriesResult, series_request
        from kidx.operations.analyse.series import build_series

        request = series_request(names, selector, field_selector, references, label, baseline, threshold, alpha,
                                 tail)
        self._require()
        result = build_series(self._store, _registry(), request)
        _warn_problems(result.problems)
        return SeriesResult(result)

    # writing ----------------------------------------------------------------------------

    def apply(self, documents_or_path: Documents, dry_run: bool = False) -> ApplyResult:
        """Create or update objects, all or nothing, as ``kidx apply -f`` does.

        Takes a path (file or folder, as ``-f``), a manifest (a mapping), a ``Recording``
        from ``kidx.record_run``, or an iterable of manifests and recordings. Raises
        InvalidInputError listing every problem, with nothing written. With ``dry_run``,
        says what would happen and writes nothing."""
        from kidx.api.applying import read_manifest_files, read_python_manifests
        from kidx.operations.maintain.apply import apply_documents

        registry = _registry()
        if isinstance(documents_or_path, str | os.PathLike):
            read = read_manifest_files([os.fspath(documents_or_path)], False, registry)
        else:
            read = read_python_manifests(_manifests(documents_or_path), registry)
        report = apply_documents(self._store, read.documents, registry, read.texts, dry_run=dry_run)
        self._references.clear()
        outcomes = [ApplyOutcome(o.info.kind, o.name, o.action, o.digest) for o in report.outcomes]
        return ApplyResult(outcomes, list(report.warnings), dry_run)

    def import_files(self, format_name: str, files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *,
                     environment: str | os.PathLike[str] | None = None, library: str | None = None,
                     op: str | None = None, mode: str | None = None, level: int | None = None,
                     dry_run: bool = False) -> ImportResult:
        """Import benchmark tools' files, as ``kidx import FORMAT FILE…`` does (the same
        converters, the same all-or-nothing apply): ``format_name`` is one of the
        command's formats (``liger``, ``pytest-benchmark``, ``google-benchmark``, ``bmf``,
        ``nvbench``, ``tritonbench``, ``pytorch-benchmark``, ``kernelbench``);
        ``environment`` a stored ExecutionEnvironment's name or a manifest file (``kidx env
        capture``'s), which the runs then refer to; ``library``, ``op``, ``mode`` and
        ``level`` the command's options of the same names, for the formats that take
        them. A file that cannot be read or converted raises InvalidInputError, with
        nothing written; with ``dry_run``, says what would happen and writes nothing."""
        from kidx.operations.ingest.importing import check_format, format_options
        from kidx.operations.ingest.importing import import_files as importing
        from kidx.output.events import worded
        from kidx.output.reports import import_notices

        check_format(format_name)
        options = format_options(format_name, library, op, mode, level)
        paths = [os.fspath(files)] if isinstance(files, str | os.PathLike) else [os.fspath(path) for path in files]
        result = importing(format_name, paths, _registry(), lambda: self._store,
                           environment=os.fspath(environment) if environment is not None else None,
                           dry_run=dry_run, options=options or None)
        self._references.clear()
        report = result.report
        assert report is not None  # stored (keep), so applied
        summary, *skipped = import_notices(format_name, result.conversion, report, result.files, result.attached)
        outcomes = [ApplyOutcome(o.info.kind, o.name, o.action, o.digest) for o in report.outcomes]
        warnings = [*report.warnings, *(worded(notice).text for notice in result.notices), *result.conversion.notes]
        return ImportResult(outcomes, warnings, dry_run, summary, [line.strip() for line in skipped])

    def import_bundle(self, path: str | os.PathLike[str], dry_run: bool = False) -> ImportResult:
        """Restore a bundle written by ``kidx export``, as ``kidx import bundle FILE`` does:
        its objects, names and complete history, exactly as exported (same digests, times,
        generations). Each name's outcome is ``restored``, or ``unchanged`` where the store
        already has the same history; any other overlap raises InvalidInputError, with
        nothing written. ``summary`` is the line the command prints; ``warnings`` what the
        reader could not check; with ``dry_run``, says what would happen and writes
        nothing."""
        from kidx.operations.ingest.restore_bundle import import_bundle
        from kidx.output.reports import bundle_summary

        warnings = _Warnings()
        imported = import_bundle(os.fspath(path), _registry(), lambda: self._store, warnings, dry_run=dry_run)
        self._references.clear()
        digests = {(name.kind, name.name): name.digest for name in imported.contents.names}
        outcomes = [ApplyOutcome(o.info.kind, o.name, o.action, digests.get((o.info.kind, o.name), ""))
                    for o in imported.report.outcomes]
        return ImportResult(outcomes, list(warnings), dry_run,
                            bundle_summary(imported, "(dry run)" if dry_run else None), [])

    # internals --------------------------------------------------------------------------

    def _runs(self, selector: str | None, field_selector: str | None, references: Iterable[str]) -> list[AnalysedRun]:
        """The selected runs as compare reads them: headline figure and referenced objects."""
        from kidx.operations.select.analysed_runs import select_runs

        request = _RunsRequest([], _label_selector(selector), _field_selector(field_selector),
                               reference_values(references))
        self._require()
        runs = select_runs(self._store, _registry(), request).runs
        if not runs and request.selector is not None:
            _warn_empty(self._store, request.selector)
        return runs

    def _require(self) -> None:
        """Reading: a store named explicitly must exist (checked until it does)."""
        if not self._exists:
            require_store(self._store, self._named, "kidx.open_store")
            self._exists = self._store.exists()

    def _resolve(self, kind: str, digest: str) -> dict[str, Any] | None:
        """A referenced object's manifest (with its first name's metadata), or None."""
        key = (kind, digest)
        if key not in self._references:
            found: dict[str, Any] | None = self._store.referenced_manifests([digest], kind).get(digest)
            self._references[key] = found
        return self._references[key]


class _RunsRequest(NamedTuple):
    """Which runs to read (the fields of compare's request that select)."""

    names: list[str]
    selector: Any
    field_selector: Any
    references: tuple[str, ...]


def _is_runs(kind: str) -> bool:
    """``runs``, ``br``, ``BenchmarkRun``…: the kind whose labels compare's words describe."""
    from kidx.errors import KidxError

    try:
        return bool(_registry().resolve(kind).plural == "benchmarkruns")
    except KidxError:
        return False


def _warn_problems(problems: Iterable[str]) -> None:
    """A NothingJudged warning for each thing that kept compare or series from judging
    (what the commands print, and their gates fail on)."""
    import warnings

    from kidx.errors import NothingJudged

    for problem in problems:
        warnings.warn(problem, NothingJudged, stacklevel=3)


def _warn_empty(store: backend.Store, selector: Any) -> None:
    """An EmptySelection warning saying what in the selector matched nothing (compare's words)."""
    import warnings

    from kidx.errors import EmptySelection
    from kidx.operations.select.selection_hint import no_runs_hint

    hint = no_runs_hint(store, _registry(), selector)
    if hint is not None:
        warnings.warn(hint, EmptySelection, stacklevel=3)


def _manifests(documents: Any) -> Sequence[Mapping[str, Any]]:
    from kidx.api.recording import Recording

    if isinstance(documents, Recording):
        return documents.manifests
    if isinstance(documents, Mapping):
        return [documents]
    manifests: list[Mapping[str, Any]] = []
    for item in documents:
        manifests.extend(item.manifests if isinstance(item, Recording) else [item])
    return manifests


def _label_selector(text: str | None) -> Any:
    from kidx.api.arguments import parse_selector

    return parse_selector(text)


def _field_selector(text: str | None) -> Any:
    from kidx.api.arguments import parse_field_selector

    return parse_field_selector(text)


def _registry() -> KindRegistry:
    from kidx.kinds.registry import registry

    return registry()


class _Warnings(list[str]):
    """A Reporter that keeps the events worded as warnings (for a result's ``warnings``)
    and drops the rest."""

    def __call__(self, event: Event) -> None:
        from kidx.output.events import worded

        said = worded(event)
        if said.warning:
            self.append(said.text)

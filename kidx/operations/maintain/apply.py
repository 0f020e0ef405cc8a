"""Apply: validate a batch, pin references, hash, and store it all or nothing.

Order of work (docs/design.md §3): every document is read and validated before anything is
written; then, inside one store write (``Store.write``: the store's write lock, all or
nothing), name references are pinned to digests, objects are hashed and added, and the
names are recorded. Any problem anywhere means nothing is written and every problem is
reported.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kidx.errors import InvalidInputError, Problem
from kidx.identity.canonical import canonical_json, digest_bytes
from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.kinds.validation import DocumentValidator, text_may_hold_nul
from kidx.manifests.document import Document
from kidx.manifests.locate import locate_line
from kidx.operations.events import Progressed
from kidx.store.catalog import Catalog, Change, Entry
from kidx.store.column_cache import column_values
from kidx.store.faults import crash_point
from kidx.store.store import Store, WriteTransaction, utc_now

MAX_WARNINGS = 20
PROGRESS_STEP = 250
Progress = Callable[[Progressed], None]  # a Reporter (``operations.reporting``) of the steps' progress


@dataclass(slots=True)
class Outcome:
    info: KindInfo
    name: str
    action: str  # created | configured | unchanged | repaired (unchanged, but its object was written again)
    digest: str


@dataclass(slots=True)
class ApplyReport:
    outcomes: list[Outcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # seconds spent in each stage (validate, digest, objects, catalog, flush, commit): read
    # by bench/bench_store.py, which times kidx's own stages rather than guessing them
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class _Item:
    """A validated document on its way into the store."""

    document: Document
    info: KindInfo
    name: str
    title: str | None
    labels: dict
    annotations: dict
    spec: dict
    digest: str = ""
    data: bytes = b""


def _item(document: Document, info: KindInfo) -> _Item:
    metadata = document.body["metadata"]
    return _Item(
        document=document,
        info=info,
        name=metadata["name"],
        title=metadata.get("title"),
        labels=dict(metadata.get("labels") or {}),
        annotations=dict(metadata.get("annotations") or {}),
        spec=document.body["spec"],
    )


class BatchProblems:
    """Problems found in a batch, located by line where the source text allows."""

    def __init__(self, texts: dict[str, str]):
        self.texts = texts
        self.problems: list[Problem] = []

    def add(self, document: Document, path: str | None, message: str) -> None:
        line = None
        text = self.texts.get(document.source)
        if path and text is not None:
            raw_path = f"{document.member}.{path}" if document.member else path
            line = locate_line(text, document.number, raw_path)
        self.problems.append(Problem(document.location(path, line), message))

    def extend(self, problems: list[Problem]) -> None:
        self.problems.extend(problems)

    def raise_if_any(self) -> None:
        if self.problems:
            raise InvalidInputError(self.problems)


def _canonical_content(item: _Item) -> bytes:
    return canonical_json([item.spec, item.title, item.labels, item.annotations])


def validate_batch(
    documents: list[Document],
    registry: KindRegistry,
    texts: dict[str, str],
    progress: Progress | None = None,
    open_catalog: Callable[[], Catalog] | None = None,
) -> list[_Item]:
    """Validate every document; raise InvalidInputError listing every problem found.

    With ``open_catalog``, a batch that has problems is also searched for by-name
    references that nothing could satisfy, so that one run reports those too (pinning
    itself happens later, under the write lock). The catalog is opened only then.
    """
    validator = DocumentValidator(registry)
    problems = BatchProblems(texts)
    items: list[_Item] = []
    seen: dict[tuple[str, str], _Item] = {}
    nul_free = {source for source, text in texts.items() if not text_may_hold_nul(text)}
    for position, document in enumerate(documents):
        if progress is not None and position % PROGRESS_STEP == 0:
            progress(Progressed("validating", position, len(documents)))
        info, kind_problems = validator.kind_of(document)
        if info is None:
            problems.extend(kind_problems)
            continue
        found = validator.problems(document, info, document.source not in nul_free)
        for problem in found:
            problems.add(document, problem.location.path, problem.message)
        if found:
            continue
        item = _item(document, info)
        key = (info.kind, item.name)
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = item
            items.append(item)
        elif _canonical_content(earlier) != _canonical_content(item):  # 5 and 5.0 differ, as in digests
            problems.add(
                document,
                "metadata.name",
                f'{info.kind} "{item.name}" is also defined, differently, in '
                f"{earlier.document.location()}",
            )
    if progress is not None:
        progress(Progressed("validating", len(documents), len(documents)))
    if problems.problems and open_catalog is not None and any(
        r.name_field in item.spec for item in items for r in item.info.references if r.name_field
    ):
        _unsatisfiable_references(open_catalog(), documents, items, problems)
    problems.raise_if_any()
    return items


def _unsatisfiable_references(
    catalog: Catalog, documents: list[Document], items: list[_Item], problems: BatchProblems
) -> None:
    """By-name references to names that neither the batch (valid or not) nor the store has."""
    named = {
        (d.body.get("kind"), d.body["metadata"].get("name"))
        for d in documents
        if isinstance(d.body.get("metadata"), dict)
    }
    for item in items:
        for reference in item.info.references:
            if reference.name_field is None or reference.name_field not in item.spec:
                continue
            target_name = item.spec[reference.name_field]["name"]
            if (reference.target_kind, target_name) not in named \
                    and catalog.get(reference.target_kind, target_name) is None:
                problems.add(item.document, f"spec.{reference.name_field}.name", _not_found(reference, target_name))


def _not_found(reference, target_name: str) -> str:
    return f'Not found: {reference.target_kind} "{target_name}" is neither in this batch nor in the store'


class Plan:
    """A validated batch with references pinned and outcomes decided, not yet written."""

    __slots__ = ("items", "report", "current")

    def __init__(self, items: list[_Item], report: ApplyReport, current: dict[tuple[str, str], Entry]):
        self.items = items
        self.report = report
        self.current = current

    def stored_manifests(self) -> list[tuple[Outcome, dict, Entry | None]]:
        """For each object: its outcome, the manifest apply would store, and the live entry."""
        from kidx.store.store import manifest_of

        now = utc_now()
        planned = []
        for item, outcome in zip(self.items, self.report.outcomes, strict=True):
            live = self.current.get((item.info.kind, item.name))
            entry = live if outcome.action == "unchanged" and live is not None else _entry_for(item, live, now)
            identity = {"apiVersion": item.info.api_version, "kind": item.info.kind, "spec": item.spec}
            planned.append((outcome, manifest_of(entry, identity), live))
        return planned


def plan_documents(
    store: Store,
    documents: list[Document],
    registry: KindRegistry,
    texts: dict[str, str] | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Everything apply decides, read-only: raises InvalidInputError on any problem."""
    items = _validated(documents, registry, texts or {}, progress, store.catalog)
    with store.reading() as catalog:
        report, current = _plan(catalog, items, texts or {})
    return Plan(items, report, current)


def _validated(documents, registry, texts, progress, open_catalog=None) -> list[_Item]:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # bulk allocation of many small dicts: collection passes only cost time
    try:
        return validate_batch(documents, registry, texts, progress, open_catalog)
    finally:
        if gc_was_enabled:
            gc.enable()


def apply_documents(
    store: Store,
    documents: list[Document],
    registry: KindRegistry,
    texts: dict[str, str] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ApplyReport:
    """Validate and store a batch; ``progress`` is told how far it got (``Progressed`` events)."""
    if dry_run:
        return plan_documents(store, documents, registry, texts, progress).report
    started = time.perf_counter()
    # a write may start over a store whose catalog was lost (objects without names): the
    # read-only refusal of such a store is for reads
    items = _validated(documents, registry, texts or {}, progress, lambda: store.catalog(lost_ok=True))
    validated = time.perf_counter()
    if not store.exists():
        # no store yet: a by-name reference nothing can satisfy must fail before the write
        # creates one (pinning from the batch now is what the locked pass would do too)
        problems = BatchProblems(texts or {})
        _pin_references(store.catalog(lost_ok=True), items, problems)
        problems.raise_if_any()
    with store.write() as transaction:  # decisions and writes under one lock: no interleaving writer
        report, current = _plan(transaction.catalog, items, texts or {})
        _write(transaction, items, report, current, _referenced_kinds(registry), progress)
    report.timings["validate"] = validated - started
    report.timings.update(transaction.timings)
    crash_point("after-commit")
    return report


def _referenced_kinds(registry: KindRegistry) -> frozenset[str]:
    """Kinds that some reference field points at: the store indexes their spec fields so
    that selection can follow references to them."""
    return frozenset(reference.target_kind for info in registry.kinds for reference in info.references)


def _entry_for(item: _Item, previous: Entry | None, now: str) -> Entry:
    return Entry(
        kind=item.info.kind,
        name=item.name,
        digest=item.digest,
        title=item.title,
        labels=item.labels,
        annotations=item.annotations,
        created=previous.created if previous else now,
        generation=previous.generation + 1 if previous else 1,
        id=previous.id if previous else None,
        columns=column_values(item.info, item.spec),
    )


def _pin_references(catalog: Catalog, items: list[_Item], problems: BatchProblems) -> None:
    """Replace by-name references (``protocolRef: {name}``) with the target's digest."""
    batch = {(item.info.kind, item.name): item for item in items}
    for item in items:
        for reference in item.info.references:
            if reference.name_field is None or reference.name_field not in item.spec:
                continue
            target_name = item.spec[reference.name_field]["name"]
            target = batch.get((reference.target_kind, target_name))
            if target is not None:
                digest = _digest(target)
            else:
                entry = catalog.get(reference.target_kind, target_name)
                if entry is None:
                    problems.add(item.document, f"spec.{reference.name_field}.name", _not_found(reference, target_name))
                    continue
                digest = entry.digest
            given = item.spec.get(reference.field)
            if given is not None and given != digest:
                problems.add(
                    item.document,
                    f"spec.{reference.field}",
                    f'Invalid value: "{given}": contradicts {reference.name_field} '
                    f'("{target_name}" is {digest})',
                )
                continue
            spec = {key: value for key, value in item.spec.items() if key != reference.name_field}
            spec[reference.field] = digest
            item.spec = spec
            item.digest = ""


def _digest(item: _Item) -> str:
    if not item.digest:
        item.data = canonical_json({"apiVersion": item.info.api_version, "kind": item.info.kind, "spec": item.spec})
        item.digest = digest_bytes(item.data)
    return item.digest


def _plan(
    catalog: Catalog, items: list[_Item], texts: dict[str, str]
) -> tuple[ApplyReport, dict[tuple[str, str], Entry]]:
    problems = BatchProblems(texts)
    _pin_references(catalog, items, problems)
    problems.raise_if_any()
    report = ApplyReport()
    started = time.perf_counter()
    for item in items:
        _digest(item)
    report.timings["digest"] = time.perf_counter() - started
    current: dict[tuple[str, str], Entry] = {}
    by_kind: dict[str, list[str]] = {}
    for item in items:
        by_kind.setdefault(item.info.kind, []).append(item.name)
    for kind, names in by_kind.items():
        for name, found in catalog.get_many(kind, names).items():
            current[(kind, name)] = found
    for item in items:
        digest = _digest(item)
        entry = current.get((item.info.kind, item.name))
        if entry is None:
            action = "created"
        elif entry.digest == digest and entry.same_metadata(item.title, item.labels, item.annotations):
            action = "unchanged"
        else:
            action = "configured"
        report.outcomes.append(Outcome(item.info, item.name, action, digest))
    report.warnings = _dangling_reference_warnings(catalog, items)
    return report, current


def _dangling_reference_warnings(catalog: Catalog, items: list[_Item]) -> list[str]:
    """References to digests that are neither in the store nor in the batch."""
    in_batch = {_digest(item): item.info.kind for item in items}
    wanted = {
        item.spec[reference.field]
        for item in items
        for reference in item.info.references
        if isinstance(item.spec.get(reference.field), str)
    }
    present = catalog.digests_present(wanted - in_batch.keys())
    warnings: list[str] = []
    missing_count = 0
    for item in items:
        for reference in item.info.references:
            target = item.spec.get(reference.field)
            if not isinstance(target, str) or target in present or target in in_batch:
                continue
            missing_count += 1
            if missing_count <= MAX_WARNINGS:
                warnings.append(
                    f"{item.info.qualified_name}/{item.name}: {reference.field} {target[:19]}… "
                    f"is not in the store (no {reference.target_kind} has this digest)"
                )
    if missing_count > MAX_WARNINGS:
        warnings.append(f"… and {missing_count - MAX_WARNINGS} more references to objects not in the store")
    return warnings


def _write(
    transaction: WriteTransaction,
    items: list[_Item],
    report: ApplyReport,
    current: dict[tuple[str, str], Entry],
    referenced_kinds: frozenset[str],
    progress: Progress | None = None,
) -> None:
    """Write the new objects, check those the store should hold already (a missing or
    damaged one, even of an unchanged name, is written again), then record the names."""
    from kidx.store.objects import PRESENT, REPLACED

    changed = [(item, outcome) for item, outcome in zip(items, report.outcomes, strict=True)
               if outcome.action != "unchanged"]
    # objects the store should hold already (the name keeps its digest): checked, and
    # written again only when missing or damaged
    kept: dict[str, _Item] = {}
    for item in items:
        live = current.get((item.info.kind, item.name))
        if live is not None and live.digest == item.digest:
            kept[item.digest] = item
    started = time.perf_counter()
    for position in range(0, len(changed), PROGRESS_STEP):  # the store looks a batch up at once
        if progress is not None:
            progress(Progressed("storing", position, len(changed)))
        batch: dict[str, _Item] = {}
        for item, _ in changed[position:position + PROGRESS_STEP]:
            if item.digest not in kept:
                batch.setdefault(item.digest, item)
        added = transaction.add_objects({digest: item.data for digest, item in batch.items()})
        for digest, item in batch.items():
            if added[digest] == REPLACED:
                report.warnings.append(_repair_warning(transaction, item, True))
    if progress is not None:
        progress(Progressed("storing", len(changed), len(changed)))
    repaired = set()
    for digest, done in transaction.ensure_objects({d: item.data for d, item in kept.items()}).items():
        if done != PRESENT:
            repaired.add(digest)
            report.warnings.append(_repair_warning(transaction, kept[digest], done == REPLACED))
    for outcome in report.outcomes:  # the name is as it was, but the store is not: say so
        if outcome.action == "unchanged" and outcome.digest in repaired:
            outcome.action = "repaired"
    objects_written = time.perf_counter()
    report.timings["objects"] = objects_written - started
    if not changed:
        return
    now = utc_now()
    transaction.put(
        [
            Change(
                _entry_for(item, current.get((item.info.kind, item.name)), now),
                [
                    (reference.field, item.spec[reference.field])
                    for reference in item.info.references
                    if isinstance(item.spec.get(reference.field), str)
                ],
                item.spec if item.info.kind in referenced_kinds else None,
            )
            for item, _ in changed
        ],
        now,
    )
    report.timings["catalog"] = time.perf_counter() - objects_written


def _repair_warning(transaction: WriteTransaction, item: _Item, damaged: bool) -> str:
    what = "was damaged (it did not hash to its name)" if damaged else "was missing"
    return f"{item.info.qualified_name}/{item.name}: object {transaction.where(item.digest)} {what}; written again"


__all__ = ["ApplyReport", "Outcome", "Plan", "apply_documents", "plan_documents", "validate_batch"]

"""Get: find objects for targets and selectors, load them, filter, sort and limit them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from enum import Enum

from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.query.selection import select
from kidx.query.targets import parse_targets, selection_rules
from kidx.records import TYPE_CHECKING, NamedTuple
from kidx.store.catalog import CatalogQuery
from kidx.store.store import Store

if TYPE_CHECKING:
    from typing import TypeVar

    from kidx.query.field_selector import FieldSelector
    from kidx.query.label_selector import LabelSelector
    from kidx.query.sorting import SortKey
    from kidx.store.catalog import ReferenceCondition

    T = TypeVar("T")


class LoadMode(Enum):
    """What ``get`` loads for each object it prints: one mode, decided once per command.
    Reading an object file costs far more than reading its catalog row, so a command
    loads no more than what it prints and sorts by needs (the output format's printer
    decides it: ``kidx.output.formats.OutputFormat.load_plan``)."""

    NAMES = "names"  # name and labels from the catalog: names printed, nothing sorted
    TABLE = "table"  # the CRD's printer columns only: as COLUMNS, without annotations
    COLUMNS = "columns"  # the catalog's cached column values (reference digests among them)
    MANIFESTS = "manifests"  # each object read in full


class LoadPlan(NamedTuple):
    mode: LoadMode
    # referenced objects attached to each manifest under the reference field's name
    # without "Digest" (``workload``), for columns and sort keys such as workload.spec.parameters.seq
    reference_roles: frozenset[str] = frozenset()
    # what a table (TABLE) prints: labels (--show-labels, -L), and every printer column
    # (-o wide, csv, tsv) rather than the default ones; what it does not print is not read
    labels: bool = True
    every_column: bool = True


class Query(NamedTuple):
    arguments: list[str]
    selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    sort_keys: Sequence[SortKey] = ()
    references: tuple = ()  # --references values
    limit: int | None = None
    load: LoadMode = LoadMode.MANIFESTS  # what each listed object is loaded as (LoadPlan)
    # referenced objects to attach to each manifest under the reference field's name
    # without "Digest" (``workload``), for columns and sort keys such as workload.spec.parameters.seq
    reference_roles: frozenset = frozenset()
    # typed conditions on references, held with the rest (for callers that have digests,
    # not --references text: compare's history)
    reference_conditions: tuple[ReferenceCondition, ...] = ()
    # what a table (LoadMode.TABLE) prints (LoadPlan's): labels, every printer column
    labels: bool = True
    every_column: bool = True


class QueryResult(NamedTuple):
    groups: list[tuple[KindInfo, list[dict]]]
    missing: list[str]
    single: bool  # exactly one object was named: printed bare in yaml/json
    # the referenced objects attached to each manifest (Query.reference_roles), which
    # whole objects are printed without
    attached: frozenset[str] = frozenset()

    @property
    def total(self) -> int:  # not ``count``: that would hide tuple.count
        return sum(len(items) for _, items in self.groups)


def find_objects(store: Store, registry: KindRegistry, query: Query, verb: str = "get") -> QueryResult:
    selection_rules(query.arguments, query.selector)
    targets = parse_targets(query.arguments, registry, verb)
    selected_through: frozenset = frozenset()  # references the field selector reads through
    if query.field_selector is not None:
        from kidx.query.field_selector import check_fields

        selected_through = check_fields(query.field_selector, registry, [target.info for target in targets])
    with store.reading() as catalog:  # one consistent snapshot for the whole command
        selection = select(catalog, targets, query.selector, _conditions(query, registry, catalog, targets), store)
        groups: list[tuple[KindInfo, list[dict]]] = []
        for target, (info, entries) in zip(targets, selection.groups, strict=True):
            # the store answered the field selector for listed kinds; objects asked for by
            # name are not narrowed there, so they are checked here, with the referenced
            # objects the selector reads attached
            named_check = query.field_selector if target.names is not None else None
            check = named_check is not None
            attached = query.reference_roles | (selected_through if check else frozenset())
            load = LoadMode.MANIFESTS if check else query.load
            if load is LoadMode.COLUMNS or load is LoadMode.TABLE:
                manifests = store.table_manifests(entries, info)
            elif load is LoadMode.MANIFESTS:
                manifests = _manifests(store, entries) if query.field_selector is None else [
                    store.manifest(entry) for entry in entries]  # select() hands on what the selector read
            else:
                manifests = [_name_only(entry) for entry in entries]
            if attached:
                manifests = with_referenced(store, info, manifests, attached, catalog)
            if named_check is not None:
                manifests = [m for m in manifests if named_check.matches(m)]
                if selected_through - query.reference_roles:
                    manifests = without_referenced(manifests, selected_through - query.reference_roles)
            groups.append((info, manifests))
    if query.sort_keys:
        groups = _sorted(registry, groups, query.sort_keys)
    if query.limit is not None:
        groups = _limited(groups, query.limit)
    single = len(targets) == 1 and targets[0].names is not None and len(targets[0].names) == 1
    return QueryResult(groups, selection.missing, single, query.reference_roles)


READ_BATCH = 1000  # objects read in one go: one look-up in a pack, not one per object


def read_in_batches(store: Store, items: list[T], digest_of: Callable[[T], str]) -> Iterator[tuple[T, dict | None]]:
    """Each item with its stored object (``digest_of`` it), read ``READ_BATCH`` at a time (a
    selection of 100,000 runs is 100 look-ups, not 100,000); None where it is missing, for
    the caller to have the store's own error name it."""
    for start in range(0, len(items), READ_BATCH):
        batch = items[start:start + READ_BATCH]
        identities = store.identities([digest_of(item) for item in batch])
        for item in batch:
            yield item, identities.get(digest_of(item))


def _manifests(store: Store, entries: list) -> list[dict]:
    """Each entry's manifest, its object read with a batch of others'; a missing one is
    named by the store's own error."""
    from kidx.store.store import manifest_of

    return [manifest_of(entry, identity) if identity is not None else store.manifest(entry)
            for entry, identity in read_in_batches(store, entries, lambda entry: entry.digest)]


def _sorted(registry, groups, sort_keys):
    """Each group sorted by the keys; a key that no object has is an error naming the
    nearest real path of the kinds listed (``--sort-by median``: ``.spec.timing.latencyNs.median``)."""
    from kidx.query.sorting import SortError, sort_objects

    try:
        if len(groups) > 1:  # a key is a mistake only when no object of any kind has it
            sort_objects([m for _, manifests in groups for m in manifests], sort_keys)
        return [(info, sort_objects(manifests, sort_keys, require_found=len(groups) == 1))
                for info, manifests in groups]
    except SortError as error:
        meant = _nearest_sort_path(registry, [info for info, _ in groups], error.path)
        if meant is None:
            raise
        raise SortError(f"{error} (did you mean .{meant}?)") from None


def _nearest_sort_path(registry, kinds, path: str | None) -> str | None:
    import re

    from kidx.kinds.field_paths import nearest_field_path

    plain = (path or "").removeprefix("{").removesuffix("}").removeprefix(".")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*", plain):
        return None  # an index, a filter or a wildcard: no single path to name
    for info in kinds:
        meant = nearest_field_path(registry, info, plain)
        if meant is not None and meant != plain:
            return meant
    return None


def with_referenced(store: Store, info: KindInfo, manifests: list[dict], roles, catalog=None) -> list[dict]:
    """Copies of the manifests, each with the objects its reference fields point at, under
    the field's name without ``Digest``: one batch look-up per referenced kind."""
    from kidx.query.reference_paths import reference_role

    # only the kind's own reference fields; a name that is none of them attaches nothing
    fields = [(reference_role(ref.field), ref) for ref in info.references if reference_role(ref.field) in roles]
    if not fields:
        return manifests
    targets: dict[tuple[str, object], dict] = {}  # (kind, digest); a spec's value may be anything
    for _, ref in fields:
        digests = {m["spec"].get(ref.field) for m in manifests if isinstance((m.get("spec") or {}).get(ref.field), str)}
        for digest, manifest in store.referenced_manifests(digests, ref.target_kind, catalog).items():
            targets[ref.target_kind, digest] = manifest
    views = []
    for manifest in manifests:
        view = dict(manifest)
        spec = manifest.get("spec") or {}
        for role, ref in fields:
            target = targets.get((ref.target_kind, spec.get(ref.field)))
            if target is not None:
                view[role] = target
        views.append(view)
    return views


def without_referenced(manifests: list[dict], roles) -> list[dict]:
    """The manifests as stored, for printing whole objects."""
    return [{k: v for k, v in m.items() if k not in roles} for m in manifests]


def reference_namer(store: Store) -> Callable[[str], str | None]:
    """A referenced object's name by its digest (None when not in the store), each
    looked up once: for the reference columns of a listing."""
    names: dict[str, str | None] = {}

    def namer(digest: str) -> str | None:
        if digest not in names:
            found = store.catalog().by_digest(digest)
            names[digest] = found[0].name if found else None
        return names[digest]

    return namer


def _conditions(query: Query, registry: KindRegistry, catalog, targets) -> CatalogQuery:
    """The typed conditions the store narrows listed kinds with, the field selector's
    included (also through references); objects named explicitly are not narrowed, and
    find_objects checks them against each manifest instead."""
    references: tuple[ReferenceCondition, ...] = ()
    if query.references:
        from kidx.query.references import reference_conditions

        references = tuple(reference_conditions(list(query.references), registry, catalog))
    references += tuple(query.reference_conditions)
    fields, referenced = [], []
    if query.field_selector is not None:
        from kidx.query.field_selector import split_path
        from kidx.query.references import referenced_field_condition
        from kidx.store.catalog import FieldCondition

        for requirement in query.field_selector.requirements:
            # check_fields made sure every kind asked for has the field (or the reference)
            through = referenced_field_condition(
                targets[0].info, requirement.field, requirement.operator, requirement.value)
            if through is not None:
                referenced.append(through)
            else:
                fields.append(FieldCondition(tuple(split_path(requirement.field)), requirement.operator,
                                             requirement.value))
    limit = query.limit if not query.sort_keys else None  # sorting needs every match first
    # names and the CRD's columns need no annotations (unless a kind's columns show them),
    # and they are most of a long listing's reading
    annotations = not (query.load in (LoadMode.NAMES, LoadMode.TABLE) and not any(
        column.json_path.startswith(".metadata.annotations") for target in targets for column in target.info.columns))
    # nor labels, unless it shows them, nor the reference values of the cached columns,
    # unless it shows a reference column or attaches the objects referred to
    table = query.load is LoadMode.TABLE
    column_references = not table or query.every_column or bool(query.reference_roles) or any(
        column.format == "reference" for target in targets for column in target.info.default_columns)
    return CatalogQuery(fields=tuple(fields), references=references, referenced_fields=tuple(referenced),
                        limit=limit, annotations=annotations, read_labels=not table or query.labels,
                        column_references=column_references)


def _name_only(entry) -> dict:
    return {"metadata": {"name": entry.name, "labels": entry.labels}}


def _limited(groups, limit: int):
    kept, left = [], limit
    for info, manifests in groups:
        kept.append((info, manifests[:left]))
        left = max(0, left - len(manifests))
    return kept


__all__ = ["LoadMode", "LoadPlan", "Query", "QueryResult", "find_objects", "without_referenced"]

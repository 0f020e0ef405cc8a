"""Get: find objects for targets and selectors, load them, filter, sort and limit them."""

from __future__ import annotations

from typing import NamedTuple

from kidx.kinds.registry import KindInfo, KindRegistry
from kidx.query.selection import select
from kidx.query.targets import parse_targets, selection_rules
from kidx.store.catalog import CatalogQuery
from kidx.store.store import Store


class Query(NamedTuple):
    arguments: list[str]
    selector: object = None  # LabelSelector
    field_selector: object = None  # FieldSelector
    sort_keys: tuple = ()
    references: tuple = ()  # --references values
    limit: int | None = None
    need_manifests: bool = True
    table_only: bool = False  # only table columns are shown: cached column values suffice


class QueryResult(NamedTuple):
    groups: list[tuple[KindInfo, list[dict]]]
    missing: list[str]
    single: bool  # exactly one object was named: printed bare in yaml/json

    @property
    def count(self) -> int:
        return sum(len(items) for _, items in self.groups)


def find_objects(store: Store, registry: KindRegistry, query: Query, verb: str = "get") -> QueryResult:
    selection_rules(query.arguments, query.selector)
    targets = parse_targets(query.arguments, registry, verb)
    if query.field_selector is not None:
        from kidx.query.field_selector import check_fields

        check_fields(query.field_selector, registry, [target.info for target in targets])
    with store.reading() as catalog:  # one consistent snapshot for the whole command
        selection = select(catalog, targets, query.selector, _conditions(query, registry, catalog), store)
        groups: list[tuple[KindInfo, list[dict]]] = []
        for info, entries in selection.groups:
            full = query.field_selector is not None or query.sort_keys
            if query.table_only and not full:
                manifests = [store.table_manifest(entry, info) for entry in entries]
            elif query.need_manifests or full:
                manifests = [store.manifest(entry) for entry in entries]
            else:
                manifests = [_name_only(entry) for entry in entries]
            if query.field_selector is not None:
                manifests = [m for m in manifests if query.field_selector.matches(m)]
            groups.append((info, manifests))
    if query.sort_keys:
        from kidx.output.sorting import sort_objects

        if len(groups) > 1:  # a key is a mistake only when no object of any kind has it
            sort_objects([m for _, manifests in groups for m in manifests], query.sort_keys)
        groups = [
            (info, sort_objects(manifests, query.sort_keys, require_found=len(groups) == 1))
            for info, manifests in groups
        ]
    if query.limit is not None:
        groups = _limited(groups, query.limit)
    single = len(targets) == 1 and targets[0].names is not None and len(targets[0].names) == 1
    return QueryResult(groups, selection.missing, single)


def _conditions(query: Query, registry: KindRegistry, catalog) -> CatalogQuery:
    """The typed conditions the store can narrow the listing with; the field selector is
    still checked on each manifest (objects named explicitly are not narrowed)."""
    references = ()
    if query.references:
        from kidx.query.references import reference_conditions

        references = tuple(reference_conditions(list(query.references), registry, catalog))
    fields = ()
    if query.field_selector is not None:
        from kidx.query.field_selector import split_path
        from kidx.store.catalog import FieldCondition

        fields = tuple(
            FieldCondition(tuple(split_path(r.field)), r.operator, r.value) for r in query.field_selector.requirements
        )
    limit = query.limit if not query.sort_keys else None  # sorting needs every match first
    return CatalogQuery(fields=fields, references=references, limit=limit)


def _name_only(entry) -> dict:
    return {"metadata": {"name": entry.name, "labels": entry.labels}}


def _limited(groups, limit: int):
    kept, left = [], limit
    for info, manifests in groups:
        kept.append((info, manifests[:left]))
        left = max(0, left - len(manifests))
    return kept


__all__ = ["Query", "QueryResult", "find_objects"]

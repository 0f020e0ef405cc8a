"""SQL of the SQLite catalog (schemas 2 and 3) for selections by several references.

A run refers to its protocol, workload, environment and implementation; selecting the
runs that refer to several given objects at once (a series: all four) is an intersection
of their links in ``ref_links`` (primary key ``(target_id, object_id)``, and an index by
object). The catalog first finds each condition's target ids in ``ref_targets`` (a few
hundred rows in all), and ``linked_references_clause`` writes the intersection as the
first condition's links, each checked in the other targets' links through the primary
key: each target's links lie together there, sorted by object, so the checks of one walk
stay in a few pages of each (through the index by object they would jump across all of
it, a page read each on a cold cache). Only the objects meeting every condition are read
from ``objects``.

Most recent first, with a limit (``CatalogQuery.order == RECENT``, as compare's history
window asks, one look-up per series): the first condition's links are walked backwards
from the newest object, each checked against the others and against the kind, and the
walk stops at the limit, instead of intersecting every link of the first target and
sorting them. At ten million runs the first target (a workload) has tens of thousands
of runs, a series a few hundred.
"""

from __future__ import annotations

from kidx.records import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kidx.store.catalog import CatalogQuery, ReferenceCondition


def target_ids_sql(condition: ReferenceCondition, stored: Callable, marks: Callable) -> tuple[str, list]:
    """The SELECT of the ``ref_targets`` ids a condition on digests names (a few rows)."""
    field_sql, field_parameters = ("", []) if condition.field is None else (" AND field=?", [condition.field])
    return (f"SELECT id FROM ref_targets WHERE target IN ({marks(len(condition.digests))}){field_sql}",
            [*(stored(digest) for digest in condition.digests), *field_parameters])


def walks_recent(query: CatalogQuery) -> bool:
    """Whether the query is answered by walking its first reference's links backwards:
    newest first, a limit, a kind, only conditions on digests (the first on one digest of
    one field), and nothing else that would leave rows out after the walk."""
    from kidx.store.catalog import RECENT

    references = query.references
    return (query.order == RECENT and query.limit is not None and query.kind is not None and len(references) >= 1
            and len(references[0].digests or ()) == 1 and references[0].field is not None
            and all(c.digests and c.digest_prefix is None and c.target_kind is None for c in references)
            and query.names is None and query.name_prefix is None and query.digests is None
            and query.digest_prefix is None and not query.labels and not query.fields
            and not query.referenced_fields)


def linked_references_clause(target_ids: Sequence[Sequence[int]], marks: Callable,
                             recent: CatalogQuery | None = None) -> tuple[str, list]:
    """``id IN (…)`` for objects linked to one of each condition's ``target_ids`` (found
    first, so that each check is a look-up in that target's own links, which lie together
    in the primary key, rather than a jump into the index by object); with ``recent`` (a
    query that ``walks_recent``), only the query's newest ``limit`` objects of its kind,
    found by a backward walk that stops there."""
    if not all(target_ids):
        return "0", []  # a target nothing refers to: nothing meets every condition
    first, *rest = target_ids
    others = "".join(f" AND EXISTS (SELECT 1 FROM ref_links r WHERE r.target_id IN ({marks(len(ids))}) "
                     "AND r.object_id=l.object_id)" for ids in rest)
    parameters = [*first, *(target for ids in rest for target in ids)]
    sql = f"SELECT l.object_id FROM ref_links l WHERE l.target_id IN ({marks(len(first))}){others}"
    if recent is None:
        return f"id IN ({sql})", parameters
    return (f"id IN ({sql} AND EXISTS (SELECT 1 FROM objects o WHERE o.id=l.object_id AND o.kind=?) "
            "ORDER BY l.object_id DESC LIMIT ?)", [*parameters, recent.kind, recent.limit])

"""PostgreSQL's compiler of the catalog's typed queries: each condition as an ``EXISTS`` on
the index that answers it (labels' (key, value), refs' (target, object_id, field),
spec_leaves' (path, value)). ``PostgresCatalog`` takes it as a base class."""

from __future__ import annotations

import builtins
import json

from kidx.store.catalog import (
    CatalogQuery,
    ReferenceCondition,
    ReferencedFieldCondition,
    condition_holds,
    label_holds,
)
from kidx.store.label_conditions import label_clauses
from kidx.store.sql_catalog import SQLCatalog, raw_digest, raw_digest_range

LAST = "\U0010ffff"  # sorts after every character: the end of a prefix range
raw = raw_digest  # ``sha256:<hex>`` as the 32 bytes stored
digest_range = raw_digest_range  # the 32-byte digests whose hex starts with some digits


_LISTED_VALUES = 50  # more values than this: the set's label rows found once (a hashed subplan)


def _label_clauses(requirements, column: str = "e.id") -> list[tuple[str, list]]:
    """Label requirements as ``[NOT] EXISTS`` a row of the (key, value) index for ``column``
    (kidx.store.label_conditions)."""

    def has_label(key: str, values: list | None, negation: str) -> tuple[str, list]:
        if values is None:
            return f"{negation}EXISTS (SELECT 1 FROM kidx.labels l WHERE l.object_id = {column} AND l.key = %s)", [key]
        if len(values) > _LISTED_VALUES:
            # a merged selector's large set: the label rows found once through the (key, value)
            # key, then looked up by hash, rather than the set scanned once per object
            return (f"{column} {negation}IN (SELECT l.object_id FROM kidx.labels l WHERE l.key = %s "
                    "AND l.value = ANY(%s))", [key, values])
        return (
            f"{negation}EXISTS (SELECT 1 FROM kidx.labels l WHERE l.object_id = {column} "
            "AND l.key = %s AND l.value = ANY(%s))",
            [key, values],
        )

    def rows(pairs: list, keys: list) -> tuple[str, list]:
        parts, parameters = [], []
        if pairs:
            parts.append("SELECT l.object_id FROM unnest(%s::text[], %s::text[]) AS p(k, v) JOIN kidx.labels l "
                         "ON l.key = p.k AND l.value = p.v")
            parameters += [[key for key, _ in pairs], [value for _, value in pairs]]
        if keys:
            parts.append("SELECT l.object_id FROM unnest(%s::text[]) AS p(k) JOIN kidx.labels l ON l.key = p.k")
            parameters.append(keys)
        return " UNION ALL ".join(parts), parameters

    return label_clauses(requirements, has_label, "false", rows, column)


class PostgresQueries(SQLCatalog):
    """The SELECTs of the catalog's reads (``PostgresCatalog`` is one, with its connection)."""


    def compile(self, query: CatalogQuery) -> tuple[str, builtins.list, bool]:
        """The SELECT for a query, its parameters, and whether rows need checking after."""
        where: list[str] = []
        parameters: list = []

        def add(clause: tuple[str, list] | None) -> None:
            if clause is not None:
                where.append(clause[0])
                parameters.extend(clause[1])

        if query.kind is not None:
            add(("e.kind = %s", [query.kind]))
        if query.names is not None:
            add(("e.name = ANY(%s)", [list(query.names)]))
        if query.name_prefix is not None:
            add(("e.name >= %s AND e.name < %s AND starts_with(e.name, %s)",
                 [query.name_prefix, query.name_prefix + LAST, query.name_prefix]))
        if query.digests is not None:
            add(("e.digest = ANY(%s)", [[raw(digest) for digest in query.digests]]))
        if query.digest_prefix is not None:
            add(("e.digest BETWEEN %s AND %s", list(digest_range(query.digest_prefix))))
        for clause in self._label_conditions(query.labels, "e"):
            add(clause)
        for condition in query.fields:
            add(self._field_clause(condition, "e."))
        for clause in self._references_clauses(query.references, query):
            add(clause)
        for through in query.referenced_fields:
            add(self._referenced_field_clause(through))
        return self._select(query, where, parameters, alias="e")

    def _label_conditions(self, requirements, alias: str) -> builtins.list[tuple[str, builtins.list]]:
        """The clauses of label requirements on the names row ``alias`` (over the label rows)."""
        return _label_clauses(requirements, f"{alias}.id")

    def _references_clauses(self, conditions,
                            query: CatalogQuery | None = None) -> builtins.list[tuple[str, builtins.list]]:
        """A clause per reference condition (a catalog may join several into one, or, given
        the ``query``, answer its order and limit)."""
        return [self._reference_clause(condition) for condition in conditions]

    def _reference_clause(self, condition: ReferenceCondition) -> tuple[str, builtins.list]:
        """Answered from the (target, object_id, field) key of ``refs``."""
        field_sql, field_parameters = ("", []) if condition.field is None else (" AND r.field = %s", [condition.field])
        head = "EXISTS (SELECT 1 FROM kidx.refs r WHERE r.object_id = e.id"
        if condition.digest_prefix is not None:
            return f"{head} AND r.target BETWEEN %s AND %s{field_sql})", [
                *digest_range(condition.digest_prefix), *field_parameters]
        if condition.target_kind is not None:
            digests = self._target_digests(condition)
            return f"{head} AND r.target = ANY(%s){field_sql})", [digests, *field_parameters]
        if not condition.digests:
            return "false", []  # refers to nothing that exists: matches no object
        return f"{head} AND r.target = ANY(%s){field_sql})", [[raw(d) for d in condition.digests], *field_parameters]

    def _target_digests(self, condition: ReferenceCondition) -> builtins.list[bytes]:
        """Digests of the current objects of the target kind whose labels match."""
        where, parameters = ["t.kind = %s"], [condition.target_kind]
        for clause in self._label_conditions(condition.target_labels, "t"):
            where.append(clause[0])
            parameters.extend(clause[1])
        rows = self.connection.execute(
            f"SELECT t.digest, {self._labels_column('t')} FROM kidx.entries t WHERE {' AND '.join(where)}", parameters
        ).fetchall()
        return sorted({
            bytes(digest)
            for digest, labels in rows
            if all(label_holds(r, json.loads(self._labels_text(labels))) for r in condition.target_labels)
        })

    def _labels_column(self, alias: str) -> str:
        """The column of a names row that holds its labels."""
        return f"{alias}.labels"

    def _labels_text(self, value) -> str:
        """That column's value as the labels' JSON text."""
        return value

    def _referenced_field_clause(self, condition: ReferencedFieldCondition) -> tuple[str, builtins.list]:
        """Objects whose ``field`` points at a target where the condition holds.

        The targets come from ``entries`` (metadata) or the ``(path, value)`` key of
        ``spec_leaves`` (spec fields), the referrers from ``refs``. Conditions that an
        absent field satisfies (``!= v``, ``= ''``) are the complement of the targets
        where they fail."""
        absent_holds = condition_holds(condition, "")
        negation = "NOT " if absent_holds else ""
        value_test, values = ("<> ''", []) if condition.value == "" else ("= %s", [condition.value])
        if condition.path[:1] == ("metadata",):
            column = self._referenced_metadata_column(condition, "t.")
            targets = f"SELECT t.digest FROM kidx.entries t WHERE t.kind = %s AND {column} {value_test}"
            parameters = [condition.target_kind, *values]
        else:
            targets = f"SELECT t.digest FROM kidx.spec_leaves t WHERE t.path = %s AND t.value {value_test}"
            parameters = [".".join(condition.path), *values]
        return (
            f"{negation}EXISTS (SELECT 1 FROM kidx.refs r WHERE r.object_id = e.id AND r.field = %s "
            f"AND r.target IN ({targets}))",
            [condition.field, *parameters],
        )

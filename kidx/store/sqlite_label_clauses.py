"""The SQLite catalog's label requirements as SQL over its ``labels`` (key, value,
object_id) index (kidx.store.label_conditions merges them; this module spells them), imported
only by a query that has some."""

from __future__ import annotations

import json

from kidx.store.label_conditions import label_clauses as shared_label_clauses
from kidx.store.sqlite_schema import DIALECT

_LISTED_VALUES = 50  # more values than this go to SQLite as one JSON list


def label_clauses(requirements, column: str = "id") -> list[tuple[str, list]]:
    """Label requirements as ``column [NOT] IN`` the ids the (key, value) index finds."""

    def has_label(key: str, values: list | None, negation: str) -> tuple[str, list]:
        if values is None:
            return f"{column} {negation}IN (SELECT object_id FROM labels WHERE key=?)", [key]
        if len(values) > _LISTED_VALUES:  # one parameter, whatever the count (a merged selector's set)
            return (f"{column} {negation}IN (SELECT object_id FROM labels WHERE key=? "
                    "AND value IN (SELECT value FROM json_each(?)))", [key, json.dumps(values)])
        return (
            f"{column} {negation}IN (SELECT object_id FROM labels WHERE key=? "
            f"AND value IN ({DIALECT.marks(len(values))}))",
            [key, *values],
        )

    def rows(pairs: list, keys: list) -> tuple[str, list]:
        parts, parameters = [], []
        if pairs:
            parts.append("SELECT l.object_id FROM json_each(?) j JOIN labels l "
                         "ON l.key = json_extract(j.value, '$[0]') AND l.value = json_extract(j.value, '$[1]')")
            parameters.append(json.dumps(pairs))
        if keys:
            parts.append("SELECT l.object_id FROM json_each(?) j JOIN labels l ON l.key = j.value")
            parameters.append(json.dumps(keys))
        return " UNION ALL ".join(parts), parameters

    return shared_label_clauses(requirements, has_label, "0", rows, column)

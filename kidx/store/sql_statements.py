"""The SQL both catalogs share, and what one database does differently (``Dialect``):
the statements that write and read the tables of current names, labels, references,
revisions and the spec index, made once for a dialect (``Statements``). ``SQLCatalog``
(kidx/store/sql_catalog.py) runs them; each backend gives its dialect."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence

from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any


def same(value: Any) -> Any:
    """A value as it is: a dialect's digest mapping where the column holds the text."""
    return value


class Dialect(NamedTuple):
    """What one database's SQL and columns do differently; see the module docstring."""

    mark: str  # the parameter placeholder
    schema: str  # prefix of every table name ("kidx." or "")
    entries: str  # the table of current names
    last: str  # a character after every other: the end of a prefix range
    stored_digest: Callable[[str], Any] = same  # "sha256:…" as a digest column holds it
    digest_text: Callable[[Any], str] = same  # a (non-NULL) digest column as "sha256:…"
    in_list_limit: int | None = None  # values per IN list; None: one array, "= ANY(…)"
    # newest first (CatalogQuery RECENT) by the names table's id; PostgreSQL sorts the rows
    # a selection found ("id + 0") rather than walk the id key backwards filtering every row
    # for them, the plan it takes when it overestimates how many rows a selection finds
    recent_order: str = "{table}id DESC"

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)

    def membership(self, values: Sequence) -> Iterator[tuple[str, builtins.list]]:
        """``(" IN (…)", parameters)`` for a column to be among ``values``: one pair a chunk
        (none for no values), so a statement is run once per pair."""
        if not values:
            return
        if self.in_list_limit is None:
            yield f" = ANY({self.mark})", [list(values)]
            return
        for start in range(0, len(values), self.in_list_limit):
            chunk = list(values[start : start + self.in_list_limit])
            yield f" IN ({self.marks(len(chunk))})", chunk


ENTRY_COLUMNS = "e.id, e.kind, e.name, e.digest, e.title, e.labels, e.annotations, e.created, e.generation, e.columns"
# for a query that needs no annotations (CatalogQuery.annotations): each reads as {}
ENTRY_COLUMNS_WITHOUT_ANNOTATIONS = ENTRY_COLUMNS.replace("e.annotations", "'{}'")
REVISION_COLUMNS = "kind, name, event, digest, title, labels, annotations, generation, recorded"


class Statements:
    """The statements both catalogs run, spelled in one dialect."""

    def __init__(self, dialect: Dialect):
        s, m = dialect.schema, dialect.mark
        self.insert_entry = (
            f"INSERT INTO {dialect.entries} (id, kind, name, digest, title, labels, annotations, created, generation, "
            f"columns) VALUES ({dialect.marks(10)})"
        )
        self.update_entry = (
            f"UPDATE {dialect.entries} SET digest={m}, title={m}, labels={m}, annotations={m}, generation={m}, "
            f"columns={m} WHERE id={m}"
        )
        self.update_columns = f"UPDATE {dialect.entries} SET columns={m} WHERE id={m}"
        self.delete_entry = f"DELETE FROM {dialect.entries} WHERE id={m}"
        self.insert_label = f"INSERT INTO {s}labels (object_id, key, value) VALUES ({dialect.marks(3)})"
        self.delete_labels = f"DELETE FROM {s}labels WHERE object_id={m}"
        self.reindex_labels = self.delete_labels  # fsck --repair: every label row of the name
        # a spec may name one target twice under one field: the row is kept once
        self.insert_ref = (
            f"INSERT INTO {s}refs (object_id, field, target) VALUES ({dialect.marks(3)}) ON CONFLICT DO NOTHING"
        )
        self.delete_refs = f"DELETE FROM {s}refs WHERE object_id={m}"
        self.insert_revision = f"INSERT INTO {s}revisions ({REVISION_COLUMNS}) VALUES ({dialect.marks(9)})"
        self.insert_spec_leaf = (
            f"INSERT INTO {s}spec_leaves (path, value, digest) VALUES ({dialect.marks(3)}) ON CONFLICT DO NOTHING"
        )
        self.insert_spec_indexed = f"INSERT INTO {s}spec_indexed (digest) VALUES ({m}) ON CONFLICT DO NOTHING"
        # a backend that keeps each name's current revision in its row moves it out first
        self.supersede: str | None = None
        self.highest_id = f"SELECT COALESCE(MAX(id), 0) FROM {dialect.entries}"
        self.get = f"SELECT {ENTRY_COLUMNS} FROM {dialect.entries} e WHERE e.kind={m} AND e.name={m}"
        self.get_many = f"SELECT {ENTRY_COLUMNS} FROM {dialect.entries} e WHERE e.kind={m} AND e.name"
        self.all_entries = f"SELECT {ENTRY_COLUMNS} FROM {dialect.entries} e ORDER BY e.kind, e.name"
        self.kinds = f"SELECT DISTINCT kind FROM {dialect.entries}"
        self.digests_present = f"SELECT DISTINCT digest FROM {dialect.entries} WHERE digest"
        self.spec_indexed = f"SELECT digest FROM {s}spec_indexed WHERE digest"
        self.referrer_counts = (
            f"SELECT e.kind, COUNT(DISTINCT e.id) FROM {s}refs r JOIN {dialect.entries} e ON e.id = r.object_id "
            f"WHERE r.target={m} GROUP BY e.kind ORDER BY e.kind"
        )
        self.referrer_names = (
            f"SELECT DISTINCT e.name FROM {s}refs r JOIN {dialect.entries} e ON e.id = r.object_id "
            f"WHERE r.target={m} AND e.kind={m} ORDER BY e.name LIMIT {m}"
        )
        self.revisions = f"SELECT {REVISION_COLUMNS} FROM {s}revisions WHERE kind={m} AND name={m} ORDER BY id"
        self.all_revisions = f"SELECT {REVISION_COLUMNS} FROM {s}revisions ORDER BY id"
        self.names_with_history = f"SELECT DISTINCT name FROM {s}revisions WHERE kind={m} ORDER BY name"
        self.label_keys = f"SELECT DISTINCT key FROM {s}labels WHERE key >= {m} AND key < {m} ORDER BY key"
        self.label_values = (
            f"SELECT DISTINCT value FROM {s}labels WHERE key={m} AND value >= {m} AND value < {m} ORDER BY value"
        )
        self.id_names = f"SELECT id, kind, name FROM {dialect.entries}"
        self.all_labels = f"SELECT object_id, key, value FROM {s}labels"
        self.all_refs = f"SELECT object_id, field, target FROM {s}refs"
        self.stray_labels = (
            f"DELETE FROM {s}labels WHERE NOT EXISTS (SELECT 1 FROM {dialect.entries} e WHERE e.id = object_id)"
        )
        self.stray_refs = (
            f"DELETE FROM {s}refs WHERE NOT EXISTS (SELECT 1 FROM {dialect.entries} e WHERE e.id = object_id)"
        )


# the metadata fields a selector may name, as columns of the names table (a {} for its alias)
METADATA_COLUMNS: dict[tuple[str, ...], str] = {
    ("metadata", "name"): "{}name", ("metadata", "title"): "COALESCE({}title, '')",
}

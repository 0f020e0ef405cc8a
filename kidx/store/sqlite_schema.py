"""Schema version 3 of the SQLite catalog: its tables, the dialect of its SQL, its writes,
how its rows pack what an index already holds, and the upgrade from version 2
(``kidx.store.sqlite_catalog`` describes the layout; ``kidx.store.sqlite_schema_1`` reads
and upgrades version 1).

Version 3 keeps version 2's tables, and stores a run in fewer bytes:
- a reference digest among a row's printer-column values (``columns``) is its
  ``ref_targets`` id between two U+0001 characters instead of ``"sha256:<64 hex>"``:
  JSON text never holds a raw control character, so the marks are unambiguous
  (``kidx.store.catalog_packing``);
- ``annotations`` of 64 bytes and more are stored deflated (a BLOB), with a preset
  dictionary made once from the store's first long annotations (``text_dictionaries``),
  where that is shorter, as text otherwise;
- ``recorded`` is NULL when the revision was recorded when the name was created (the
  ``revisions`` view reads ``created`` then);
- ``objects_by_digest`` indexes a digest's first 8 bytes (``DIGEST_KEY``), not all 32;
- no ``labels_by_object`` index: a name's label rows are found through its own labels
  (its ``labels`` JSON) in the ``(key, value, object_id)`` key.
Reads give exactly what version 2 gives; a version 2 catalog is read as it is (it has no
packed values) and upgraded by the first write (``upgrade_2_to_3``).
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.store.sql_catalog import digest_of_raw, raw_digest
from kidx.store.sql_statements import Dialect, Statements

SQL_VARIABLES = 500  # stay far below SQLite's limit on bound parameters
# what objects_by_digest indexes (schema 3): a digest's first 8 bytes find it among billions
# as well as all 32 do, in a quarter of the index; a query names the expression exactly
DIGEST_KEY = "substr(digest, 1, 8)"
DIGEST_KEY_BYTES = 8
# info key (schema 2): the id of the last revision recorded (the current ones are objects rows)
LAST_REVISION = "last_revision"

SCHEMA = """
CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    digest BLOB NOT NULL,  -- the digest's 32 bytes
    title TEXT,
    labels TEXT NOT NULL,
    annotations NOT NULL,  -- JSON text, or deflated (kidx.store.catalog_packing)
    created TEXT NOT NULL,
    generation INTEGER NOT NULL,
    columns TEXT,  -- printer-column values (kidx.store.column_cache), references packed (kidx.store.catalog_packing)
    revision INTEGER,  -- the id of the revision this state is; NULL: not a revision of its own
    recorded TEXT,  -- when that revision was recorded; NULL: when the name was created
    UNIQUE (kind, name)
);
CREATE INDEX objects_by_digest ON objects (substr(digest, 1, 8));
CREATE TABLE labels (
    object_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (key, value, object_id)
) WITHOUT ROWID;
-- every (field, target) some object has referred to, once: a few hundred, whatever the runs
CREATE TABLE ref_targets (
    id INTEGER PRIMARY KEY,
    field TEXT NOT NULL,
    target BLOB NOT NULL,
    UNIQUE (target, field)
);
CREATE TABLE ref_links (
    object_id INTEGER NOT NULL,
    target_id INTEGER NOT NULL,
    PRIMARY KEY (target_id, object_id)
) WITHOUT ROWID;
CREATE INDEX ref_links_by_object ON ref_links (object_id);
CREATE VIEW refs (object_id, field, target) AS
    SELECT ref_links.object_id, ref_targets.field, ref_targets.target
    FROM ref_links JOIN ref_targets ON ref_targets.id = ref_links.target_id;
-- the states names had before their current one (a name's current revision is its objects row)
CREATE TABLE past_revisions (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    event TEXT NOT NULL,
    digest BLOB,
    title TEXT,
    labels TEXT,
    annotations,  -- as in objects
    generation INTEGER,
    recorded TEXT NOT NULL
);
-- a name's revisions are its rows in id order: numbered when read, so appending costs no look-up
CREATE INDEX past_revisions_by_name ON past_revisions (kind, name, id);
CREATE VIEW revisions (id, kind, name, event, digest, title, labels, annotations, generation, recorded) AS
    SELECT id, kind, name, event, digest, title, labels, annotations, generation, recorded FROM past_revisions
    UNION ALL
    SELECT revision, kind, name, 'applied', digest, title, labels, annotations, generation, COALESCE(recorded, created)
    FROM objects WHERE revision IS NOT NULL;
CREATE TABLE spec_leaves (
    path TEXT NOT NULL,  -- "spec.parameters.seq"
    value TEXT NOT NULL,  -- its text, as field selectors read it
    digest BLOB NOT NULL,
    PRIMARY KEY (path, value, digest)
) WITHOUT ROWID;
CREATE TABLE spec_indexed (digest BLOB PRIMARY KEY) WITHOUT ROWID;
-- preset dictionaries of packed texts (kidx.store.catalog_packing), made once from a write's own
CREATE TABLE IF NOT EXISTS text_dictionaries (id INTEGER PRIMARY KEY, dictionary BLOB NOT NULL);
"""


# digests are their 32 bytes; lists of values are bound in chunks under the variable limit
DIALECT = Dialect(mark="?", schema="", entries="objects", last="\uffff", in_list_limit=SQL_VARIABLES,
                  stored_digest=raw_digest, digest_text=digest_of_raw)


class _Statements(Statements):
    """Schema 3's writes: the current revision in its names row, references by target id,
    label rows found through the name's own labels."""

    def __init__(self, dialect: Dialect):
        super().__init__(dialect)
        entry_columns = "id, kind, name, digest, title, labels, annotations, created, generation, columns"
        self.insert_entry = f"INSERT INTO objects ({entry_columns}, revision, recorded) VALUES ({dialect.marks(12)})"
        self.update_entry = ("UPDATE objects SET digest=?, title=?, labels=?, annotations=?, generation=?, columns=?, "
                             "revision=?, recorded=? WHERE id=?")
        past = "id, kind, name, event, digest, title, labels, annotations, generation, recorded"
        self.supersede = (f"INSERT INTO past_revisions ({past}) SELECT revision, kind, name, 'applied', digest, "
                          "title, labels, annotations, generation, COALESCE(recorded, created) FROM objects WHERE id=? "
                          "AND revision IS NOT NULL")
        self.insert_revision = f"INSERT INTO past_revisions ({past}) VALUES ({dialect.marks(10)})"
        self.insert_ref = "INSERT INTO ref_links (object_id, target_id) VALUES (?, ?) ON CONFLICT DO NOTHING"
        self.delete_refs = "DELETE FROM ref_links WHERE object_id=?"
        self.stray_refs = "DELETE FROM ref_links WHERE NOT EXISTS (SELECT 1 FROM objects e WHERE e.id = object_id)"
        # each of the name's labels by its (key, value, object_id) key (no index by object)
        self.delete_labels = ("DELETE FROM labels WHERE (key, value, object_id) IN "
                              "(SELECT j.key, j.value, o.id FROM objects o, json_each(o.labels) j WHERE o.id=?)")
        # fsck --repair: every row of the name, whatever its labels say (a scan: rare)
        self.reindex_labels = "DELETE FROM labels WHERE object_id=?"


STATEMENTS = _Statements(DIALECT)


# Schema 2 to 3, inside the first write's transaction (see upgrade_2_to_3)
TEXT_DICTIONARIES = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS text_dictionaries"):SCHEMA.rindex(";")]
UPGRADE_2_TO_3 = (
    "DROP INDEX IF EXISTS labels_by_object",
    "DROP INDEX IF EXISTS objects_by_digest",
    f"CREATE INDEX objects_by_digest ON objects ({DIGEST_KEY})",
    "DROP VIEW revisions",
    SCHEMA[SCHEMA.index("CREATE VIEW revisions"):SCHEMA.index(";", SCHEMA.index("CREATE VIEW revisions"))],
    """UPDATE objects SET
           columns = kidx_pack_columns(columns, (SELECT group_concat(t.id || ':' || hex(t.target))
                                                 FROM ref_links l JOIN ref_targets t ON t.id = l.target_id
                                                 WHERE l.object_id = objects.id)),
           annotations = kidx_pack_text(annotations),  -- the catalog's (a dictionary from the first)
           recorded = CASE WHEN recorded = created THEN NULL ELSE recorded END""",
    "UPDATE past_revisions SET annotations = kidx_pack_text(annotations) WHERE annotations IS NOT NULL",
)


def upgrade_2_to_3(execute: Callable, version: str, choose_dictionary: Callable) -> None:
    """Rewrite a schema 2 catalog as schema ``version`` (3), inside the write's transaction:
    the same rows, packed (the module's docstring), texts with a dictionary made from the
    first long annotations (``choose_dictionary``); a failure rolls it back with the write."""
    execute(TEXT_DICTIONARIES)
    choose_dictionary([row[0] for row in execute(
        "SELECT annotations FROM objects WHERE length(annotations) >= 64 ORDER BY id LIMIT 64")])
    for statement in UPGRADE_2_TO_3:
        execute(statement)
    execute("UPDATE info SET value=? WHERE key='schema'", (version,))

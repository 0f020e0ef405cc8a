"""Schema version 1 of the SQLite catalog: its dialect, and its upgrade to version 2.

Schema version 1 (kidx before this layout) kept digests as text, every revision as a row of
a ``revisions`` table, and the references in a ``refs`` table; its stores made before the
spec index lacked the two spec tables, and a write by an older kidx could leave that index
behind the revisions (reads then used the objects). Such a catalog is read as it is, with
the SQL of its own version, so every read gives what it gave; the first write upgrades it
to version 2 inside that write's own transaction (``upgrade``, which
``SQLiteCatalog._upgrade`` runs), so an interrupted or failed upgrade leaves it as it
was, and says so once (``kidx.store.notices``) when it commits.
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.store.sql_statements import Dialect, Statements
from kidx.store.sqlite_schema import LAST_REVISION, SCHEMA, SQL_VARIABLES

# digests are their text
DIALECT_1 = Dialect(mark="?", schema="", entries="objects", last="\uffff", in_list_limit=SQL_VARIABLES)
STATEMENTS_1 = Statements(DIALECT_1)
DIGEST_LIST = "SELECT value FROM json_each(?)"  # a JSON list of digests as schema 1 stores them

# Schema 1's spec index, added after it (same schema number: older kidx ignored it)
SPEC_INDEX = """
CREATE TABLE IF NOT EXISTS spec_leaves (
    path TEXT NOT NULL,
    value TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (path, value, digest)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spec_indexed (digest TEXT PRIMARY KEY) WITHOUT ROWID;
"""

# Schema 1 to 2 (see upgrade), after the old tables were renamed to *_1 and their indexes
# dropped: every row copied, digests as bytes; a name's last revision moves into its objects
# row when it is exactly the row's state (else the row is no revision of its own, and every
# revision stays a row).
UPGRADE_1_TO_2 = (
    """INSERT INTO objects (id, kind, name, digest, title, labels, annotations, created, generation, columns)
       SELECT id, kind, name, kidx_raw_digest(digest), title, labels, annotations, created, generation, columns
       FROM objects_1""",
    """INSERT INTO past_revisions (id, kind, name, event, digest, title, labels, annotations, generation, recorded)
       SELECT id, kind, name, event, kidx_raw_digest(digest), title, labels, annotations, generation, recorded
       FROM revisions_1""",
    """UPDATE objects SET revision = (SELECT MAX(r.id) FROM past_revisions r
                                      WHERE r.kind = objects.kind AND r.name = objects.name)""",
    """UPDATE objects SET revision = NULL WHERE NOT EXISTS (
           SELECT 1 FROM past_revisions r WHERE r.id = objects.revision AND r.event = 'applied'
           AND r.digest IS objects.digest AND r.title IS objects.title AND r.labels IS objects.labels
           AND r.annotations IS objects.annotations AND r.generation IS objects.generation)""",
    """UPDATE objects SET recorded = (SELECT r.recorded FROM past_revisions r WHERE r.id = objects.revision)
       WHERE revision IS NOT NULL""",
    "DELETE FROM past_revisions WHERE id IN (SELECT revision FROM objects WHERE revision IS NOT NULL)",
    "INSERT INTO ref_targets (field, target) SELECT DISTINCT field, kidx_raw_digest(target) FROM refs_1",
    """INSERT INTO ref_links (object_id, target_id)
       SELECT r.object_id, t.id FROM refs_1 r JOIN ref_targets t
       ON t.target = kidx_raw_digest(r.target) AND t.field = r.field ON CONFLICT DO NOTHING""",
)
OLD_TABLES = ("objects", "revisions", "refs")
OLD_INDEXES = ("objects_by_digest", "refs_by_object", "revisions_by_name")


def digest_range(hexdigits: str) -> list:
    """The lowest and highest stored digest whose hex starts with ``hexdigits``."""
    low = "sha256:" + hexdigits
    return [low, low + "\uffff"]


def last_revision(execute: Callable) -> int:
    """The id of the last revision recorded."""
    return execute("SELECT COALESCE(MAX(id), 0) FROM revisions").fetchone()[0]


def upgrade(execute: Callable, has_spec_index: bool, version: str) -> None:
    """Rewrite a schema 1 catalog as schema ``version`` (2), inside the write's transaction:
    every name, label, reference, revision and spec index row is kept (see UPGRADE_1_TO_2);
    a failure or an interruption rolls it all back with the write."""
    if not has_spec_index:
        for statement in SPEC_INDEX.strip().split(";\n"):
            execute(statement)
    for index in OLD_INDEXES:
        execute(f"DROP INDEX IF EXISTS {index}")
    for table in (*OLD_TABLES, "spec_leaves", "spec_indexed"):
        execute(f"ALTER TABLE {table} RENAME TO {table}_1")
    for statement in SCHEMA.split(";\n"):  # all but what schema 1 has alike
        if not statement.lstrip().startswith(("CREATE TABLE info", "CREATE TABLE labels", "CREATE INDEX labels_")):
            execute(statement)
    (last,) = execute("SELECT COALESCE(MAX(id), 0) FROM revisions_1").fetchone()
    for statement in UPGRADE_1_TO_2:
        execute(statement)
    execute("INSERT INTO spec_leaves (path, value, digest) "
            "SELECT path, value, kidx_raw_digest(digest) FROM spec_leaves_1")
    execute("INSERT INTO spec_indexed (digest) SELECT kidx_raw_digest(digest) FROM spec_indexed_1")
    for table in (*OLD_TABLES, "spec_leaves", "spec_indexed"):
        execute(f"DROP TABLE {table}_1")
    execute("UPDATE info SET value=? WHERE key='schema'", (version,))
    execute("INSERT OR REPLACE INTO info (key, value) VALUES (?, ?)", (LAST_REVISION, str(last)))

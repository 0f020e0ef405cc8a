"""The PostgreSQL catalog's schema versions: version 4, written by this kidx, versions 1, 2
and 3, kept to read a store written before it and to upgrade one (``upgrade``:
``upgrade_1_to_2``, ``upgrade_2_to_3``, then ``upgrade_3_to_4``), and the statements of each.

Version 4 is version 3 with its objects packed (``kidx.store.object_packing``): deflated one
by one with a preset dictionary made once from the store's own objects (``text_dictionaries``
id 2), about a fifth of their bytes. The server can re-hash only exact bytes, so the objects'
check holds for those; every read re-hashes what it unpacks. Its upgrade changes that check
only: the objects a store holds stay exact bytes, readable as such, and new ones are packed.

Version 3 keeps version 2's objects, spec index, reference targets, past revisions and
dictionaries, and keeps a name's labels and references in its own ``entries`` row:
- ``label_ids``: the ids of its (key, value) pairs in ``label_values`` (each pair stored
  once), ascending; the only copy of its labels (kidx reads the ids as their pairs, the
  view ``revisions`` as JSON through ``kidx.labels_of``); a GIN index of them answers
  label selectors, and the view ``labels`` reads (object_id, key, value) as before;
- ``series_id``: the id in ``series`` of the set of its ``ref_targets`` ids (each set stored
  once: a run's set is its series); a GIN index of ``series.target_ids`` finds the series
  that hold a target, the index ``entries_by_series`` (series_id, id DESC) their names,
  newest first: a series' latest N runs are its first N rows there, whatever its length;
  the view ``refs`` reads (object_id, field, target) as before.
So a run costs no label or link rows (in version 2 about 800 bytes a run of rows and keys).
Reading version 1's SQL (the views) on a version 2 or 3 catalog gives the same rows.

Version 2 keeps version 1's objects, spec index and label rows, and stores a run in fewer bytes:
- a name's current revision is its ``entries`` row (``revision``: that revision's id,
  ``recorded``: when, NULL when the name was created then); ``past_revisions`` holds the
  states names had before their current one and the deletions, and the view ``revisions``
  reads both, exactly as version 1's table read;
- a reference is a row of ``ref_links`` (object id, ``ref_targets`` id): each distinct
  (field, target digest) is stored once in ``ref_targets``, not 32 bytes and a field name
  per row; the view ``refs`` reads (object_id, field, target) as version 1's table did;
- ``annotations`` are bytes: their JSON text's UTF-8 (which starts with ``{``), or, from
  64 bytes on where that is shorter, deflated with a preset dictionary made once from the
  store's first long annotations (``text_dictionaries``), as in the SQLite catalog (its
  first byte the dictionary's id); an upgraded store's earlier annotations stay unpacked;
- a name's id is an ``integer`` (4 bytes, not 8, in each of its label and reference rows
  and their keys);
- no ``labels_by_object``, ``refs_by_field`` or ``refs_by_object`` index: a name's label
  rows are found through its own labels (its ``labels`` JSON) in the (key, value,
  object_id) key, its links by ``ref_links_by_object``, a reference selection starts from
  ``ref_targets``' (target, field) key.
Reading version 1's SQL (the views) on a version 2 catalog gives the same rows.
"""

from __future__ import annotations

from collections.abc import Callable

from kidx.store.sql_statements import Dialect, Statements

SCHEMA_VERSION = "4"
VERSION_1 = "1"
VERSION_2 = "2"
VERSION_3 = "3"
#: the versions whose names rows hold their label ids and series (3, and 4, which differs in its objects only)
LABEL_ID_VERSIONS = (VERSION_3, SCHEMA_VERSION)
LAST_REVISION = "last_revision"  # info key (versions 2 and 3): the id of the last revision recorded

CREATE_SCHEMA = """
CREATE SCHEMA kidx;
CREATE TABLE kidx.info (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE kidx.objects (
    digest bytea PRIMARY KEY,
    content bytea NOT NULL,
    CHECK (sha256(content) = digest)
);
CREATE TABLE kidx.spec_leaves (
    path text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    digest bytea NOT NULL,
    PRIMARY KEY (path, value, digest)
);
CREATE TABLE kidx.spec_indexed (digest bytea PRIMARY KEY);
"""

# versions 2 and 3: every revision, the current ones read from the names rows
REVISIONS_VIEW = """
CREATE VIEW kidx.revisions (id, kind, name, event, digest, title, labels, annotations, generation, recorded) AS
    SELECT id, kind, name, event, digest, title, labels, annotations, generation, recorded FROM kidx.past_revisions
    UNION ALL
    SELECT revision, kind, name, 'applied', digest, title, labels, annotations, generation, COALESCE(recorded, created)
    FROM kidx.entries WHERE revision IS NOT NULL;
"""

# version 1's catalog tables (a store written before version 2; the upgrade reads them)
TABLES_1 = """
CREATE TABLE kidx.entries (
    id bigint PRIMARY KEY,
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    digest bytea NOT NULL,
    title text,
    labels text NOT NULL,
    annotations text NOT NULL,
    created text NOT NULL,
    generation integer NOT NULL,
    columns text,
    UNIQUE (kind, name)
);
CREATE INDEX entries_by_digest ON kidx.entries (digest);
CREATE TABLE kidx.labels (
    object_id bigint NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    PRIMARY KEY (key, value, object_id)
);
CREATE INDEX labels_by_object ON kidx.labels (object_id);
CREATE TABLE kidx.refs (
    object_id bigint NOT NULL,
    field text COLLATE "C" NOT NULL,
    target bytea NOT NULL,
    PRIMARY KEY (target, object_id, field)
);
CREATE INDEX refs_by_object ON kidx.refs (object_id);
CREATE INDEX refs_by_field ON kidx.refs (field, target);
CREATE TABLE kidx.revisions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    event text NOT NULL,
    digest bytea,
    title text,
    labels text,
    annotations text,
    generation integer,
    recorded text NOT NULL
);
CREATE INDEX revisions_by_name ON kidx.revisions (kind, name, id);
"""

# version 2's catalog tables (a store written before version 3; the upgrade reads them)
TABLES_2 = """
CREATE TABLE kidx.entries (
    id integer PRIMARY KEY,  -- 4 bytes in every label and reference row (and their keys)
    generation integer NOT NULL,
    revision bigint,  -- the id of the revision this state is; NULL: not a revision of its own
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    digest bytea NOT NULL,
    title text,
    labels text NOT NULL,
    annotations bytea NOT NULL,  -- JSON text's UTF-8, or deflated (kidx.store.postgres_rows)
    created text NOT NULL,
    recorded text,  -- when that revision was recorded; NULL: when the name was created
    columns text,
    UNIQUE (kind, name)
);
CREATE INDEX entries_by_digest ON kidx.entries (digest);
CREATE TABLE kidx.labels (
    object_id integer NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    PRIMARY KEY (key, value, object_id)
);
-- every (field, target) some object has referred to, once: a few hundred, whatever the runs
CREATE TABLE kidx.ref_targets (
    id integer PRIMARY KEY,
    field text COLLATE "C" NOT NULL,
    target bytea NOT NULL,
    UNIQUE (target, field)
);
CREATE TABLE kidx.ref_links (
    target_id integer NOT NULL,
    object_id integer NOT NULL,
    PRIMARY KEY (target_id, object_id)
);
CREATE INDEX ref_links_by_object ON kidx.ref_links (object_id);
CREATE VIEW kidx.refs (object_id, field, target) AS
    SELECT l.object_id, t.field, t.target FROM kidx.ref_links l JOIN kidx.ref_targets t ON t.id = l.target_id;
-- the states names had before their current one, and deletions
CREATE TABLE kidx.past_revisions (
    id bigint PRIMARY KEY,
    generation integer,
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    event text NOT NULL,
    digest bytea,
    title text,
    labels text,
    annotations bytea,  -- as in entries
    recorded text NOT NULL
);
CREATE INDEX past_revisions_by_name ON kidx.past_revisions (kind, name, id);
""" + REVISIONS_VIEW + """
-- preset dictionaries of packed annotations, made once from a write's own
CREATE TABLE kidx.text_dictionaries (id integer PRIMARY KEY, dictionary bytea NOT NULL);
"""

# version 3: a name's labels and references are two columns of its own row, each answered by
# an index of the names table; the (key, value) and (field, target) pairs are each kept once.
# KEPT_3: version 2's tables that version 3 keeps as they are; NEW_3: what its upgrade makes
KEPT_3 = """
-- every (field, target) some object has referred to, once: a few hundred, whatever the runs
CREATE TABLE kidx.ref_targets (
    id integer PRIMARY KEY,
    field text COLLATE "C" NOT NULL,
    target bytea NOT NULL,
    UNIQUE (target, field)
);
-- the states names had before their current one, and deletions
CREATE TABLE kidx.past_revisions (
    id bigint PRIMARY KEY,
    generation integer,
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    event text NOT NULL,
    digest bytea,
    title text,
    labels text,
    annotations bytea,  -- as in entries
    recorded text NOT NULL
);
CREATE INDEX past_revisions_by_name ON kidx.past_revisions (kind, name, id);
-- preset dictionaries of packed annotations, made once from a write's own
CREATE TABLE kidx.text_dictionaries (id integer PRIMARY KEY, dictionary bytea NOT NULL);
"""
NEW_3 = """
CREATE TABLE kidx.entries (
    id integer PRIMARY KEY,
    generation integer NOT NULL,
    series_id integer,  -- the set of its references (kidx.series); NULL: it refers to nothing
    revision bigint,  -- the id of the revision this state is; NULL: not a revision of its own
    kind text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    digest bytea NOT NULL,
    title text,
    label_ids integer[] NOT NULL,  -- its labels: their ids in kidx.label_values, ascending
    annotations bytea NOT NULL,  -- JSON text's UTF-8, or deflated (kidx.store.postgres_rows)
    created text NOT NULL,
    recorded text,  -- when that revision was recorded; NULL: when the name was created
    columns text,
    UNIQUE (kind, name)
);
CREATE INDEX entries_by_digest ON kidx.entries (digest);
CREATE INDEX entries_by_label ON kidx.entries USING gin (label_ids);
-- a series' runs newest first: a look-up of its latest N reads N rows, however long it is
CREATE INDEX entries_by_series ON kidx.entries (series_id, id DESC);
-- every (key, value) some object has had, once
CREATE TABLE kidx.label_values (
    id integer PRIMARY KEY,
    key text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    UNIQUE (key, value)
);
CREATE VIEW kidx.labels (object_id, key, value) AS
    SELECT e.id, v.key, v.value FROM kidx.entries e CROSS JOIN LATERAL unnest(e.label_ids) AS u(id)
    JOIN kidx.label_values v ON v.id = u.id;
-- labels by their ids as a JSON object (a revision's labels; kidx reads a names row's ids itself)
CREATE FUNCTION kidx.labels_of(ids integer[]) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT COALESCE(json_object_agg(v.key, v.value ORDER BY v.key)::text, '{}')
    FROM kidx.label_values v WHERE v.id = ANY(ids) $$;
-- every set of references some object has had (its ref_targets ids, ascending), once: a
-- run's set is its series (protocol, workload, environment, implementation)
CREATE TABLE kidx.series (
    id integer PRIMARY KEY,
    target_ids integer[] NOT NULL UNIQUE
);
-- written as it goes (no pending list): a new series is rare, and every look-up reads the key
CREATE INDEX series_by_target ON kidx.series USING gin (target_ids) WITH (fastupdate = off);
CREATE VIEW kidx.refs (object_id, field, target) AS
    SELECT e.id, t.field, t.target FROM kidx.entries e JOIN kidx.series s ON s.id = e.series_id
    CROSS JOIN LATERAL unnest(s.target_ids) AS u(id) JOIN kidx.ref_targets t ON t.id = u.id;
""" + REVISIONS_VIEW.replace(", title, labels, annotations, generation, COALESCE",
                               ", title, kidx.labels_of(label_ids), annotations, generation, COALESCE")
TABLES = KEPT_3 + NEW_3
UPGRADE_TABLES_2_TO_3 = NEW_3

# version 4: objects may be stored packed (kidx.store.object_packing), which the server cannot
# re-hash: its check holds for the exact bytes (those that start with "{"); every read re-hashes
OBJECTS_CHECK_3 = "CHECK (sha256(content) = digest)"
OBJECTS_CHECK = "CONSTRAINT objects_digest CHECK (substr(content, 1, 1) <> '\\x7b'::bytea OR sha256(content) = digest)"
UPGRADE_3_TO_4 = (
    "ALTER TABLE kidx.objects DROP CONSTRAINT objects_check",
    f"ALTER TABLE kidx.objects ADD {OBJECTS_CHECK}",
)

SCHEMA_1 = CREATE_SCHEMA + TABLES_1
SCHEMA_2 = CREATE_SCHEMA + TABLES_2
SCHEMA_3 = CREATE_SCHEMA + TABLES
SCHEMA = CREATE_SCHEMA.replace(OBJECTS_CHECK_3, OBJECTS_CHECK) + TABLES


def create(execute: Callable) -> None:
    """Create the schema (this version) in an empty database, inside the first write."""
    execute(SCHEMA)
    execute("INSERT INTO kidx.info (key, value) VALUES ('schema', %s), (%s, '0')", (SCHEMA_VERSION, LAST_REVISION))


# --- the upgrade from version 1, inside the first write's transaction ----------------------

OLD_TABLES = ("entries", "labels", "refs", "revisions")
UPGRADE_1_TO_2 = (
    # each name's last revision, when it is its current state exactly, becomes its row's
    """INSERT INTO kidx.entries (id, revision, generation, kind, name, digest, title, labels, annotations, created,
                                 recorded, columns)
       SELECT e.id, r.id, e.generation, e.kind, e.name, e.digest, e.title, e.labels, convert_to(e.annotations, 'UTF8'),
              e.created,
              CASE WHEN r.recorded = e.created THEN NULL ELSE r.recorded END, e.columns
       FROM kidx.entries_1 e LEFT JOIN LATERAL (
           SELECT * FROM kidx.revisions_1 r WHERE r.kind = e.kind AND r.name = e.name ORDER BY r.id DESC LIMIT 1) r
       ON r.event = 'applied' AND r.digest = e.digest AND r.title IS NOT DISTINCT FROM e.title
          AND r.labels = e.labels AND r.annotations = e.annotations AND r.generation = e.generation""",
    """INSERT INTO kidx.past_revisions (id, generation, kind, name, event, digest, title, labels, annotations,
                                        recorded)
       SELECT r.id, r.generation, r.kind, r.name, r.event, r.digest, r.title, r.labels,
              convert_to(r.annotations, 'UTF8'), r.recorded
       FROM kidx.revisions_1 r WHERE NOT EXISTS (SELECT 1 FROM kidx.entries e WHERE e.revision = r.id)""",
    "INSERT INTO kidx.labels (object_id, key, value) SELECT object_id, key, value FROM kidx.labels_1",
    """INSERT INTO kidx.ref_targets (id, field, target)
       SELECT row_number() OVER (ORDER BY field, target), field, target
       FROM (SELECT DISTINCT field, target FROM kidx.refs_1) t""",
    """INSERT INTO kidx.ref_links (target_id, object_id)
       SELECT t.id, r.object_id FROM kidx.refs_1 r
       JOIN kidx.ref_targets t ON t.target = r.target AND t.field = r.field""",
    f"""INSERT INTO kidx.info (key, value)
        SELECT '{LAST_REVISION}', COALESCE(MAX(id), 0)::text FROM kidx.revisions_1""",
)


def upgrade_1_to_2(execute: Callable) -> None:
    """Rewrite a version 1 catalog as version 2, inside the write's transaction (under the
    writers' lock): the old tables and their indexes are renamed aside, the new ones made
    and filled from them, and the old ones dropped. A failure rolls it all back with the write."""
    old = ", ".join(f"'{table}'" for table in OLD_TABLES)
    indexes = [row[0] for row in execute(
        "SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = 'kidx' AND tablename IN "
        f"({old}) ORDER BY indexname").fetchall()]
    for index in indexes:  # a constraint's index renamed renames its constraint too
        execute(f'ALTER INDEX kidx."{index}" RENAME TO "{index}_1"')
    for table in OLD_TABLES:
        execute(f"ALTER TABLE kidx.{table} RENAME TO {table}_1")
    execute(TABLES_2)
    for statement in UPGRADE_1_TO_2:
        execute(statement)
    for table in OLD_TABLES:
        execute(f"DROP TABLE kidx.{table}_1")
    execute("UPDATE kidx.info SET value = %s WHERE key = 'schema'", (VERSION_2,))
    for table in ("entries", "labels", "ref_targets", "ref_links", "past_revisions"):
        execute(f"ANALYZE kidx.{table}")  # the planner's view of the new tables, at once


# --- the upgrade from version 2, inside the first write's transaction ----------------------

OLD_TABLES_2 = ("entries", "labels", "ref_links")  # ref_targets, past_revisions, text_dictionaries stay
# each name's label ids and reference set, made from its rows in one pass over each table
UPGRADE_2_TO_3 = (
    # a name's labels are its JSON's (what fsck holds its label rows to)
    """CREATE TEMPORARY TABLE labels_2 ON COMMIT DROP AS
       SELECT e.id AS object_id, j.key COLLATE "C" AS key, j.value COLLATE "C" AS value
       FROM kidx.entries_2 e CROSS JOIN LATERAL json_each_text(e.labels::json) j""",
    """INSERT INTO kidx.label_values (id, key, value)
       SELECT row_number() OVER (ORDER BY key, value), key, value
       FROM (SELECT DISTINCT key, value FROM labels_2) d""",
    """CREATE TEMPORARY TABLE links_2 ON COMMIT DROP AS
       SELECT object_id, array_agg(target_id ORDER BY target_id) AS target_ids
       FROM kidx.ref_links_2 GROUP BY object_id""",
    """INSERT INTO kidx.series (id, target_ids)
       SELECT row_number() OVER (ORDER BY target_ids), target_ids FROM (SELECT DISTINCT target_ids FROM links_2) d""",
    """INSERT INTO kidx.entries (id, generation, series_id, revision, kind, name, digest, title, label_ids,
                                 annotations, created, recorded, columns)
       SELECT e.id, e.generation, s.id, e.revision, e.kind, e.name, e.digest, e.title,
              COALESCE(l.label_ids, '{}'), e.annotations, e.created, e.recorded, e.columns
       FROM kidx.entries_2 e
       LEFT JOIN (SELECT l.object_id, array_agg(v.id ORDER BY v.id) AS label_ids FROM labels_2 l
                  JOIN kidx.label_values v ON v.key = l.key AND v.value = l.value GROUP BY l.object_id) l
              ON l.object_id = e.id
       LEFT JOIN links_2 r ON r.object_id = e.id
       LEFT JOIN kidx.series s ON s.target_ids = r.target_ids""",
)


def upgrade_2_to_3(execute: Callable) -> None:
    """Rewrite a version 2 catalog as version 3, inside the write's transaction (under the
    writers' lock), as ``upgrade_1_to_2`` does: the names, label and link tables renamed
    aside (and the views over them dropped), the new ones made and filled, the old dropped."""
    execute("DROP VIEW kidx.refs")
    execute("DROP VIEW kidx.revisions")
    old = ", ".join(f"'{table}'" for table in OLD_TABLES_2)
    indexes = [row[0] for row in execute(
        "SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = 'kidx' AND tablename IN "
        f"({old}) ORDER BY indexname").fetchall()]
    for index in indexes:
        execute(f'ALTER INDEX kidx."{index}" RENAME TO "{index}_2"')
    for table in OLD_TABLES_2:
        execute(f"ALTER TABLE kidx.{table} RENAME TO {table}_2")
    execute(UPGRADE_TABLES_2_TO_3)
    for statement in UPGRADE_2_TO_3:
        execute(statement)
    for table in OLD_TABLES_2:
        execute(f"DROP TABLE kidx.{table}_2")
    execute("UPDATE kidx.info SET value = %s WHERE key = 'schema'", (VERSION_3,))
    for table in ("entries", "label_values", "series"):
        execute(f"ANALYZE kidx.{table}")


def upgrade_3_to_4(execute: Callable) -> None:
    """Let a version 3 store keep packed objects: only its objects' check changes. The objects
    it holds stay as they are (exact bytes, which version 4 reads as such); those written from
    then on are packed."""
    for statement in UPGRADE_3_TO_4:
        execute(statement)
    execute("UPDATE kidx.info SET value = %s WHERE key = 'schema'", (SCHEMA_VERSION,))


def upgrade(execute: Callable, version: str) -> None:
    """Bring a catalog of an older ``version`` to this one, a step at a time, in one transaction."""
    if version == VERSION_1:
        upgrade_1_to_2(execute)
    if version in (VERSION_1, VERSION_2):
        upgrade_2_to_3(execute)
    upgrade_3_to_4(execute)


# --- statements ----------------------------------------------------------------------------


class Statements2(Statements):
    """Version 2's writes: the current revision in its names row, references by target id,
    label rows found through the name's own labels."""

    def __init__(self, dialect: Dialect):
        super().__init__(dialect)
        m = dialect.mark
        entry_columns = "id, kind, name, digest, title, labels, annotations, created, generation, columns"
        self.insert_entry = (f"INSERT INTO kidx.entries ({entry_columns}, revision, recorded) "
                             f"VALUES ({dialect.marks(12)})")
        self.update_entry = (f"UPDATE kidx.entries SET digest={m}, title={m}, labels={m}, annotations={m}, "
                             f"generation={m}, columns={m}, revision={m}, recorded={m} WHERE id={m}")
        past = "id, kind, name, event, digest, title, labels, annotations, generation, recorded"
        self.supersede = (f"INSERT INTO kidx.past_revisions ({past}) SELECT revision, kind, name, 'applied', digest, "
                          f"title, labels, annotations, generation, COALESCE(recorded, created) FROM kidx.entries "
                          f"WHERE id={m} AND revision IS NOT NULL")
        self.insert_revision = f"INSERT INTO kidx.past_revisions ({past}) VALUES ({dialect.marks(10)})"
        self.insert_ref = f"INSERT INTO kidx.ref_links (object_id, target_id) VALUES ({m}, {m}) ON CONFLICT DO NOTHING"
        self.delete_refs = f"DELETE FROM kidx.ref_links WHERE object_id={m}"
        self.stray_refs = ("DELETE FROM kidx.ref_links WHERE NOT EXISTS "
                           "(SELECT 1 FROM kidx.entries e WHERE e.id = object_id)")
        # each of the name's labels by its (key, value, object_id) key (no index by object)
        self.delete_labels = (f"DELETE FROM kidx.labels l USING kidx.entries o, json_each_text(o.labels::json) j "
                              f"WHERE o.id={m} AND l.key = j.key AND l.value = j.value AND l.object_id = o.id")
        # fsck --repair: every row of the name, whatever its labels say (a scan: rare)
        self.reindex_labels = f"DELETE FROM kidx.labels WHERE object_id={m}"
        self.revision_ids = f"SELECT value FROM kidx.info WHERE key='{LAST_REVISION}'"
        self.save_revision_ids = f"UPDATE kidx.info SET value={m} WHERE key='{LAST_REVISION}'"


class Statements3(Statements2):
    """Version 3's: a name's label ids and reference set are columns of its row, written with
    it (no label or link rows to add or remove beside it; their statements are empty)."""

    def __init__(self, dialect: Dialect):
        super().__init__(dialect)
        m = dialect.mark
        entry_columns = "id, kind, name, digest, title, annotations, created, generation, columns"
        self.insert_entry = (f"INSERT INTO kidx.entries ({entry_columns}, revision, recorded, series_id, label_ids) "
                             f"VALUES ({dialect.marks(13)})")
        self.update_entry = (f"UPDATE kidx.entries SET digest={m}, title={m}, annotations={m}, "
                             f"generation={m}, columns={m}, revision={m}, recorded={m}, series_id={m}, label_ids={m} "
                             f"WHERE id={m}")
        # a names row's labels are its label ids, read as (key, value) pairs by kidx (postgres_rows)
        for name in ("get", "get_many", "all_entries"):
            setattr(self, name, getattr(self, name).replace("e.labels", "e.label_ids"))
        past = "id, kind, name, event, digest, title, labels, annotations, generation, recorded"
        self.supersede = (f"INSERT INTO kidx.past_revisions ({past}) SELECT revision, kind, name, 'applied', digest, "
                          f"title, kidx.labels_of(label_ids), annotations, generation, COALESCE(recorded, created) "
                          f"FROM kidx.entries WHERE id={m} AND revision IS NOT NULL")
        self.insert_label = self.delete_labels = self.reindex_labels = ""
        self.insert_ref = self.delete_refs = self.stray_labels = self.stray_refs = ""
        self.reindex_row = f"UPDATE kidx.entries SET series_id={m}, label_ids={m}, columns={m} WHERE id={m}"
        # the keys and values some current name has (label_values also keeps those no name has now)
        used = "EXISTS (SELECT 1 FROM kidx.entries e WHERE e.label_ids @> ARRAY[v.id])"
        self.label_keys = (f"SELECT DISTINCT v.key FROM kidx.label_values v WHERE v.key >= {m} AND v.key < {m} "
                           f"AND {used} ORDER BY v.key")
        self.label_values = (f"SELECT v.value FROM kidx.label_values v WHERE v.key = {m} AND v.value >= {m} "
                             f"AND v.value < {m} AND {used} ORDER BY v.value")

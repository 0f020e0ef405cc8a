"""A PostgreSQL store of catalog schema version 1 (tests/data/postgres-schema-1/, written by
the kidx of that schema; loaded into version 1's tables, which kidx.store.postgres_schema
keeps), and the same store as version 2 (made from it by version 2's kept upgrade, into
version 2's kept tables), and as version 3 (version 3's kept upgrade from that): each read
as it is, and upgraded to version 4 by the first write, in its transaction.

Every read verb prints the same bytes before and after the upgrade; reading writes
nothing; the upgrade keeps every name, label, reference, revision, generation and time,
says so once, and leaves the old store as it was when it fails.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME
from test_schema_upgrade import read_commands, without_export_time

from kidx.store import postgres, postgres_schema
from kidx.store.store import Store

sys.path.append(str(REPO / "tests" / "data"))
from make_postgres_store import dump, load  # noqa: E402

psycopg = pytest.importorskip("psycopg")
SCHEMA_1_ROWS = REPO / "tests" / "data" / "postgres-schema-1" / "catalog.copy"


def old_store(store) -> str:
    """``store`` (an empty database) as the kept schema 1 store."""
    with psycopg.connect(str(store)) as connection:
        connection.execute(postgres_schema.SCHEMA_1)
        load(connection, SCHEMA_1_ROWS.read_text(encoding="utf-8"))
        connection.execute("SELECT setval(pg_get_serial_sequence('kidx.revisions', 'id'), MAX(id)) FROM kidx.revisions")
    return str(store)


def schema_2_store(store) -> str:
    """``store`` (an empty database) as the kept schema 1 store upgraded to schema 2 by the
    upgrade the schema 2 kidx ran (kept in kidx.store.postgres_schema with version 2's tables)."""
    url = old_store(store)
    with psycopg.connect(url) as connection:  # one transaction, as the kidx of schema 2 ran it
        postgres_schema.upgrade_1_to_2(connection.execute)
    assert version(url) == "2"
    return url


def schema_3_store(store) -> str:
    """The schema 2 store upgraded to schema 3 by the upgrade the schema 3 kidx ran (kept:
    ``upgrade_2_to_3``); its objects' check is version 3's, on exact bytes only."""
    url = schema_2_store(store)
    with psycopg.connect(url) as connection:
        postgres_schema.upgrade_2_to_3(connection.execute)
    assert version(url) == "3"
    return url


STORES = {"1": old_store, "2": schema_2_store, "3": schema_3_store}


def version(url: str) -> str:
    with psycopg.connect(url) as connection:
        return connection.execute("SELECT value FROM kidx.info WHERE key = 'schema'").fetchone()[0]


def relations(url: str) -> dict[str, str]:
    with psycopg.connect(url) as connection:
        return dict(connection.execute(
            "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'kidx' AND c.relkind IN ('r', 'v')").fetchall())


def test_the_kept_store_is_what_the_schema_1_kidx_wrote(postgres_store):
    url = old_store(postgres_store)
    assert version(url) == "1"
    assert dump(url) == SCHEMA_1_ROWS.read_text(encoding="utf-8")  # loaded exactly, nothing lost or added


def test_the_schema_2_store_is_made_of_version_2_tables(postgres_store):
    kinds = relations(schema_2_store(postgres_store))
    assert {name: kinds[name] for name in ("entries", "labels", "ref_links", "refs", "revisions")} == {
        "entries": "r", "labels": "r", "ref_links": "r", "refs": "v", "revisions": "v"}


@pytest.mark.parametrize("start", ["1", "2", "3"])
def test_every_read_prints_the_same_before_and_after_the_upgrade_which_keeps_every_row(postgres_store, kidx, start):
    url = STORES[start](postgres_store)
    before = dump(url)
    commands = read_commands(url)
    old_results = {command: kidx(*command, store_path=url) for command in commands}
    with Store(url).reading() as catalog:
        entries, revisions, indexes = list(catalog.all_entries()), list(catalog.all_revisions()), catalog.index_rows()
    assert dump(url) == before and version(url) == start  # reading an old store writes nothing
    with psycopg.connect(url) as connection:
        (old_objects,) = connection.execute("SELECT count(*) FROM kidx.objects").fetchone()
    # a write that changes nothing upgrades it, in its transaction, and says so once
    protocol = json.dumps(json.loads(SEED_BUNDLE.read_text())["protocol"])  # stored as it is: unchanged
    result = kidx("apply", "-f", "-", stdin=protocol, store_path=url)
    upgraded = postgres.UPGRADED.format(location=url, version=postgres_schema.SCHEMA_VERSION)
    assert (result.code, result.err.count(upgraded)) == (0, 1), result
    assert version(url) == postgres_schema.SCHEMA_VERSION == "4"
    kinds = relations(url)
    assert {name: kinds[name] for name in ("refs", "revisions", "labels", "series", "label_values", "past_revisions")
            } == {"refs": "v", "revisions": "v", "labels": "v", "series": "r", "label_values": "r", "past_revisions": "r"}
    assert "ref_links" not in kinds and not any(name.endswith(("_1", "_2")) for name in kinds)
    for command in commands:
        old, new = old_results[command], kidx(*command, store_path=url)
        assert old.code == 0 and old.out, (command, old)
        assert (new.code, without_export_time(new.out), new.err) == (
            old.code, without_export_time(old.out), old.err), command
    with Store(url).reading() as catalog:
        assert list(catalog.all_entries()) == entries
        assert list(catalog.all_revisions()) == revisions
        assert catalog.index_rows() == indexes
    with psycopg.connect(url) as connection:  # each current state is stored once, in its names row
        (current,) = connection.execute("SELECT count(*) FROM kidx.entries WHERE revision IS NOT NULL").fetchone()
        (past,) = connection.execute("SELECT count(*) FROM kidx.past_revisions").fetchone()
    assert current + past == len(revisions) and current == len(entries)
    # a second write says nothing more, and history goes on from the kept revisions
    again = kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"'), store_path=url)
    assert (again.code, upgraded in again.err) == (0, False), again
    history = kidx("history", "run", SEED_RUN_NAME, store_path=url).out.splitlines()
    assert [line.split()[0] for line in history] == ["REVISION", "1", "2", "3"]
    assert history[:3] == old_results[("history", "run", SEED_RUN_NAME)].out.splitlines()
    # the objects kept are exact bytes still, the new ones packed (schema 4), and both read
    run = json.loads(SEED_BUNDLE.read_text())["run"]
    run["metadata"]["name"], run["spec"]["timing"]["latencyNs"]["median"] = "after-the-upgrade", 1
    assert kidx("apply", "-f", "-", stdin=json.dumps(run), store_path=url).code == 0
    assert "after-the-upgrade" in kidx("get", "runs", "-o", "name", store_path=url).out
    with psycopg.connect(url) as connection:
        starts = connection.execute("SELECT substr(content, 1, 1), count(*) FROM kidx.objects GROUP BY 1 ORDER BY 1")
        assert [(bytes(start), count) for start, count in starts] == [(b"\0", 1), (b"{", old_objects)]
    assert "0.6.3" in kidx("describe", "run", SEED_RUN_NAME, store_path=url).out


def test_a_failed_upgrade_leaves_the_old_store_as_it_was(postgres_store, kidx, monkeypatch):
    url = old_store(postgres_store)
    before = dump(url)
    expected = {command: kidx(*command, store_path=url) for command in read_commands(url)[:8]}

    def upgrade_then_fail(execute, version):
        postgres_schema.upgrade(execute, version)  # every statement of the upgrade has run, inside the write
        execute("SELECT 1/0")

    monkeypatch.setattr(postgres, "upgrade", upgrade_then_fail)
    result = kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"'), store_path=url)
    assert result.code == 1 and "division by zero" in result.err and "upgraded" not in result.err, result
    monkeypatch.undo()
    assert dump(url) == before and version(url) == "1"
    assert set(relations(url)) == {"info", "objects", "entries", "labels", "refs", "revisions", "spec_leaves",
                                   "spec_indexed"}
    for command, result in expected.items():
        assert kidx(*command, store_path=url) == result, command


def test_a_newer_schema_is_refused_with_a_clear_message(postgres_store, kidx):
    url = old_store(postgres_store)
    with psycopg.connect(url) as connection:
        connection.execute("UPDATE kidx.info SET value = '9' WHERE key = 'schema'")
    for command in (("get", "runs"), ("apply", "-f", str(SEED_BUNDLE))):
        result = kidx(*command, store_path=url)
        assert (result.code, result.out) == (1, ""), result
        assert result.err == (f"error: the store at {url} has catalog schema version 9, but this kidx knows only "
                              "versions up to 4: a newer kidx wrote it; use that one (nothing was changed)\n")


def test_a_connection_opened_before_another_process_upgraded_the_store_reads_and_writes_the_new_schema(
        postgres_store, kidx):
    url = old_store(postgres_store)
    reader, writer = Store(url), Store(url)
    reading, writing = reader.catalog(), writer.catalog(write=True)  # both opened on schema 1
    assert (reading.connection.version, writing.connection.version) == ("1", "1")
    with Store(url).reading() as catalog:
        run = catalog.get("BenchmarkRun", SEED_RUN_NAME)
        revisions = catalog.revisions("BenchmarkRun", SEED_RUN_NAME)
    assert run is not None
    protocol = json.dumps(json.loads(SEED_BUNDLE.read_text())["protocol"])
    assert kidx("apply", "-f", "-", stdin=protocol, store_path=url).code == 0  # another process upgrades it
    assert version(url) == postgres_schema.SCHEMA_VERSION
    with reader.reading() as catalog:
        assert catalog.get("BenchmarkRun", SEED_RUN_NAME) == run
        assert [entry.name for entry in catalog.by_digest(run.digest)] == [SEED_RUN_NAME]
        assert catalog.revisions("BenchmarkRun", SEED_RUN_NAME) == revisions
    with writer.write() as transaction:  # no second upgrade: the version is read again under the lock
        transaction.delete(run, "2026-12-02T00:00:00Z")
    reader.close()
    writer.close()
    history = kidx("history", "run", SEED_RUN_NAME, store_path=url)
    assert history.code == 0 and history.out.splitlines()[-1].split()[:2] == ["3", "deleted"], history
    with Store(url).reading() as catalog:
        assert catalog.get("BenchmarkRun", SEED_RUN_NAME) is None
        assert catalog.revisions("BenchmarkRun", SEED_RUN_NAME)[:2] == revisions

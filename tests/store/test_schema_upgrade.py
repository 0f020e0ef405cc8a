"""Stores in the SQLite catalog's schema versions 1 and 2 (kept in tests/data/sqlite-schema-1/
and -2/, written by the kidx of that schema): read as they are, and upgraded by the first write.

Every read verb prints the same bytes from the old store, before and after the upgrade;
the upgrade keeps every name, label, reference, revision, generation and time, says so
once on standard error, and leaves the old store as it was when it fails or is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME
from test_store_boundary import _fingerprint as fingerprint  # every file's sha256

from kidx.store import sqlite_catalog
from kidx.store.catalog import CatalogQuery
from kidx.store.store import Store

pytestmark = pytest.mark.sqlite_only  # a folder store written by older kidx

SCHEMA_1_STORE = REPO / "tests" / "data" / "sqlite-schema-1" / "store"
SCHEMA_2_STORE = REPO / "tests" / "data" / "sqlite-schema-2" / "store"


# the variants of schema 1 (sqlite_catalog's docstring): as kept, with its spec index behind
# its revisions (a write by a kidx that did not keep it), and from before the spec index
VARIANTS = {
    "current": (),
    "stale-spec-index": ("DELETE FROM info WHERE key='spec_index_revision'",),
    "no-spec-index": ("DELETE FROM info WHERE key='spec_index_revision'", "DROP TABLE spec_leaves",
                      "DROP TABLE spec_indexed"),
}


def copy_of_old_store(folder: Path, variant: str = "current", source: Path = SCHEMA_1_STORE) -> Path:
    shutil.copytree(source, folder)
    if VARIANTS[variant]:
        connection = sqlite3.connect(folder / "catalog.sqlite", isolation_level=None)
        for statement in VARIANTS[variant]:
            connection.execute(statement)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    return folder


def schema_version(store: Path) -> str:
    connection = sqlite3.connect(f"file:{store / 'catalog.sqlite'}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT value FROM info WHERE key='schema'").fetchone()[0]
    finally:
        connection.close()


def names(store: Path) -> dict[str, list[str]]:
    with Store(store).reading() as catalog:
        found: dict[str, list[str]] = {}
        for entry in catalog.list(CatalogQuery(order="kind,name")):
            found.setdefault(entry.kind, []).append(entry.name)
        return found


def read_commands(store: Path) -> list[tuple[str, ...]]:
    """Every read verb, over every part of the catalog: names, labels, references (both
    ways, and fields followed through them), digests, revisions of current, re-created and
    deleted names, a bundle of everything, and the store's check."""
    current = names(store)
    run, workload = current["BenchmarkRun"][-1], current["Workload"][0]
    with Store(store).reading() as catalog:
        digest = catalog.get("BenchmarkRun", run).digest
        environment = catalog.get("ExecutionEnvironment", current["ExecutionEnvironment"][0]).digest
        revisions = list(catalog.all_revisions())
    deleted_run = next(r.name for r in revisions if r.kind == "BenchmarkRun" and r.event == "deleted")
    recreated = next(r.name for r in revisions if r.kind == "Workload" and r.event == "deleted")
    protocol = current["BenchmarkProtocol"][0]
    return [
        ("get", "all", "-o", "name"),
        ("get", "runs"),
        ("get", "runs", "-o", "wide", "--show-labels"),
        ("get", "runs", "-o", "yaml"),
        ("get", "all", "-o", "json"),
        ("get", "runs", "-l", "liger_version=0.6.2", "-L", "gpu"),
        ("get", "runs", "-l", "suite in (s000,s003),page", "-o", "name"),
        ("get", "runs", "--references", f"protocol/{protocol}", "-o", "name"),
        ("get", "runs", "--references", environment[7:19], "-o", "name"),
        ("get", "runs", "--references", "protocol:!absent", "-o", "name"),
        ("get", "runs", "--field-selector", f"workload.metadata.name={workload}", "-o", "name"),
        ("get", "runs", "--field-selector", "workload.spec.operation!=cross_entropy", "-o", "name"),
        ("get", "runs", "-o", "custom-columns=NAME:.metadata.name,WL:.workload.spec.operation,ENV:.environment.metadata.name",
         "--sort-by", ".workload.metadata.name"),
        ("get", "run", digest[7:19], "-o", "json"),
        ("get", "workloads,implementations,environments,protocols", "-o", "yaml"),
        ("describe", "runs"),
        ("compare", "-l", "liger_version=0.6.2", "-o", "json"),
        ("describe", "protocol", protocol),
        ("describe", "workload", recreated),
        ("history", "run", SEED_RUN_NAME),
        ("history", "run", SEED_RUN_NAME, "--revision", "1", "-o", "yaml"),
        ("history", "workload", recreated),
        ("history", "workload", recreated, "--revision", "2", "-o", "json"),
        ("history", "run", deleted_run),
        ("history", "run", deleted_run, "--revision", "1", "-o", "yaml"),
        ("export", "-o", "-"),
        ("fsck",),
    ]


def without_export_time(out: str) -> str:
    """A bundle names the moment it was made; everything else in it must be equal."""
    try:
        bundle = json.loads(out)
    except ValueError:
        return out
    if isinstance(bundle, dict) and "exported" in bundle:
        bundle["exported"] = "T"
    return json.dumps(bundle, indent=1)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_read_of_an_old_store_prints_the_same_before_and_after_the_upgrade(kidx, tmp_path, variant):
    old, upgraded = copy_of_old_store(tmp_path / "old", variant), copy_of_old_store(tmp_path / "upgraded", variant)
    before = fingerprint(old)
    commands = read_commands(old)
    assert schema_version(old) == "1"
    # the first write upgrades the store, says so once, and changes nothing it holds
    with Store(upgraded).write():
        pass
    assert schema_version(upgraded) == sqlite_catalog.SCHEMA_VERSION
    with Store(upgraded).reading() as catalog:
        assert catalog._spec_index_fresh()  # the write that upgraded it filled the index too
    for command in commands:
        old_result = kidx(*command, store_path=old)
        new_result = kidx(*command, store_path=upgraded)
        assert old_result.code == 0, (command, old_result)
        assert old_result.out, command
        assert (new_result.code, without_export_time(new_result.out), new_result.err) == (
            old_result.code, without_export_time(old_result.out), old_result.err), command
    assert fingerprint(old) == before  # reading an old store writes nothing, not even an upgrade
    assert schema_version(old) == "1"


def test_the_upgrade_keeps_every_row_and_the_catalog_then_works_as_a_new_one(kidx, tmp_path):
    old, store = copy_of_old_store(tmp_path / "old"), copy_of_old_store(tmp_path / "store")
    with Store(old).reading() as catalog:
        entries, revisions = list(catalog.all_entries()), list(catalog.all_revisions())
        indexes = catalog.index_rows()
    # a write through the command line: upgraded in its transaction, said once on stderr
    renamed = SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"')
    result = kidx("apply", "-f", "-", stdin=renamed, store_path=store)
    assert result.code == 0, result
    upgraded = sqlite_catalog.UPGRADED.format(location=store / "catalog.sqlite", version=sqlite_catalog.SCHEMA_VERSION)
    assert result.err.count(upgraded) == 1, result.err
    assert schema_version(store) == sqlite_catalog.SCHEMA_VERSION
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:  # the old tables' pages were given back after the commit
        assert connection.execute("PRAGMA freelist_count").fetchone()[0] == 0
    finally:
        connection.close()
    with Store(store).reading() as catalog:
        after_entries, after_revisions = list(catalog.all_entries()), list(catalog.all_revisions())
        after_indexes = catalog.index_rows()
        run = catalog.get("BenchmarkRun", SEED_RUN_NAME)
    changed = {(e.kind, e.name) for e in after_entries} & {("BenchmarkRun", SEED_RUN_NAME)}
    assert [e for e in after_entries if (e.kind, e.name) not in changed] == [
        e for e in entries if (e.kind, e.name) not in changed]
    # every earlier revision as it was (number, event, digest, metadata, generation, time), one more for the write
    assert after_revisions[:-1] == revisions
    assert (after_revisions[-1].name, after_revisions[-1].revision, after_revisions[-1].labels["liger_version"]) == (
        SEED_RUN_NAME, 3, "0.6.3")
    assert run is not None and run.generation == 3 and run.created == next(
        e.created for e in entries if e.name == SEED_RUN_NAME)
    assert {k: v for k, v in after_indexes[0].items() if k not in changed} == {
        k: v for k, v in indexes[0].items() if k not in changed}
    assert after_indexes[1:] == indexes[1:] == (0, 0)
    # a second write says nothing more
    again = kidx("apply", "-f", "-", stdin=renamed.replace('"0.6.3"', '"0.6.4"'), store_path=store)
    assert (again.code, upgraded in again.err) == (0, False), again
    checked = kidx("fsck", store_path=old)  # notes of the seed's absent references, then what it checked
    assert f"{len(revisions)} revisions" in checked.out
    assert kidx("fsck", store_path=store) == checked._replace(
        out=checked.out.replace(f"{len(revisions)} revisions", f"{len(revisions) + 2} revisions"))
    assert len(kidx("history", "run", SEED_RUN_NAME, store_path=store).out.splitlines()) == 5  # header + 4
    # the upgraded catalog holds what a new store holds for the same objects, in the new schema
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        assert {"objects_1", "revisions_1", "refs_1", "spec_leaves_1", "spec_indexed_1"}.isdisjoint(tables)
        assert {"ref_targets", "ref_links", "refs", "past_revisions", "revisions"} <= tables
        assert {type(row[0]) for row in connection.execute("SELECT digest FROM objects")} == {bytes}
    finally:
        connection.close()


def test_a_failed_upgrade_leaves_the_old_store_as_it_was(kidx, tmp_path, monkeypatch):
    store = copy_of_old_store(tmp_path / "store")
    expected = {command: kidx(*command, store_path=store) for command in read_commands(store)[:8]}
    upgrade = sqlite_catalog.SQLiteCatalog._upgrade

    def upgrade_then_fail(self):
        upgrade(self)  # every statement of the upgrade has run, inside the write
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite_catalog.SQLiteCatalog, "_upgrade", upgrade_then_fail)
    result = kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"'), store_path=store)
    assert result.code == 1 and "upgraded" not in result.err, result
    monkeypatch.undo()
    assert schema_version(store) == "1"
    for command, before in expected.items():
        assert kidx(*command, store_path=store) == before, command


def test_an_upgrade_killed_before_its_commit_leaves_the_old_store_as_it_was(kidx, tmp_path):
    store = copy_of_old_store(tmp_path / "store")
    expected = {command: kidx(*command, store_path=store) for command in read_commands(store)[:8]}
    environment = {**os.environ, "KIDX_TEST_CRASH_AT": "catalog", "NO_COLOR": "1"}  # SIGKILL before the commit
    killed = subprocess.run(
        [sys.executable, "-m", "kidx", "apply", "-f", "-", "--store", str(store)], cwd=REPO, env=environment,
        input=SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"'), capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed
    assert schema_version(store) == "1"
    for command, before in expected.items():
        assert kidx(*command, store_path=store) == before, command
    # and the next write upgrades it
    assert kidx("apply", "-f", str(SEED_BUNDLE), store_path=store).code == 0
    assert schema_version(store) == sqlite_catalog.SCHEMA_VERSION


def test_a_catalog_opened_before_another_process_upgraded_it_reads_and_writes_the_new_schema(kidx, tmp_path):
    store = copy_of_old_store(tmp_path / "store")
    reader, writer = Store(store), Store(store)
    reading, writing = reader.catalog(), writer.catalog(write=True)  # both opened on schema 1
    assert (reading.version, writing.version) == ("1", "1")
    with Store(store).reading() as catalog:
        run = catalog.get("BenchmarkRun", SEED_RUN_NAME)
        revisions = catalog.revisions("BenchmarkRun", SEED_RUN_NAME)
    assert run is not None
    protocol = json.dumps(json.loads(SEED_BUNDLE.read_text())["protocol"])  # stored as it is: unchanged
    assert kidx("apply", "-f", "-", stdin=protocol, store_path=store).code == 0  # another process upgrades it
    assert schema_version(store) == sqlite_catalog.SCHEMA_VERSION
    with reader.reading() as catalog:
        assert catalog.get("BenchmarkRun", SEED_RUN_NAME) == run
        assert [entry.name for entry in catalog.by_digest(run.digest)] == [SEED_RUN_NAME]
        assert catalog.revisions("BenchmarkRun", SEED_RUN_NAME) == revisions
    with writer.write() as transaction:
        transaction.delete(run, "2026-12-02T00:00:00Z")
    reader.close()
    writer.close()
    history = kidx("history", "run", SEED_RUN_NAME, store_path=store)
    assert history.code == 0 and history.out.splitlines()[-1].split()[:2] == ["3", "deleted"], history
    with Store(store).reading() as catalog:
        assert catalog.get("BenchmarkRun", SEED_RUN_NAME) is None
        assert catalog.revisions("BenchmarkRun", SEED_RUN_NAME)[:2] == revisions
        assert catalog.revisions("BenchmarkRun", SEED_RUN_NAME)[2].digest == run.digest


def test_a_schema_2_store_reads_the_same_before_and_after_its_upgrade_which_keeps_every_row(kidx, tmp_path):
    old = copy_of_old_store(tmp_path / "old", source=SCHEMA_2_STORE)
    upgraded = copy_of_old_store(tmp_path / "upgraded", source=SCHEMA_2_STORE)
    before = fingerprint(old)
    assert schema_version(old) == "2"
    with Store(old).reading() as catalog:
        entries, revisions, indexes = list(catalog.all_entries()), list(catalog.all_revisions()), catalog.index_rows()
    commands = read_commands(old)
    with Store(upgraded).write():
        pass
    assert schema_version(upgraded) == sqlite_catalog.SCHEMA_VERSION == "3"
    with Store(upgraded).reading() as catalog:
        assert list(catalog.all_entries()) == entries
        assert list(catalog.all_revisions()) == revisions
        assert catalog.index_rows() == indexes
    for command in commands:
        old_result, new_result = kidx(*command, store_path=old), kidx(*command, store_path=upgraded)
        assert old_result.code == 0 and old_result.out, (command, old_result)
        assert (new_result.code, without_export_time(new_result.out), new_result.err) == (
            old_result.code, without_export_time(old_result.out), old_result.err), command
    assert fingerprint(old) == before and schema_version(old) == "2"  # reading writes nothing
    connection = sqlite3.connect(upgraded / "catalog.sqlite")
    try:  # packed: references in the printer columns, long annotations, creation times
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert "labels_by_object" not in names and connection.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert connection.execute("SELECT sql FROM sqlite_master WHERE name='objects_by_digest'").fetchone() == (
            "CREATE INDEX objects_by_digest ON objects (substr(digest, 1, 8))",)  # a digest's first 8 bytes
        columns = [row[0] for row in connection.execute("SELECT columns FROM objects WHERE kind='BenchmarkRun'")]
        assert columns and all("sha256:" not in text and text.count("\x01") == 8 for text in columns)
        assert {type(row[0]) for row in connection.execute(
            "SELECT annotations FROM objects WHERE kind='BenchmarkRun'")} == {bytes, str}  # short ones as text
        assert connection.execute("SELECT count(*) FROM objects WHERE revision IS NOT NULL AND recorded IS NULL"
                                  ).fetchone()[0] > 0
    finally:
        connection.close()
    # and it is written as a new one: a name's labels replaced, a run deleted
    run = next(e for e in entries if e.kind == "BenchmarkRun" and e.labels.get("suite"))
    manifest = json.loads(kidx("get", "run", run.name, "-o", "json", store_path=upgraded).out)
    manifest["metadata"]["labels"]["suite"] = "s999"
    relabeled = kidx("apply", "-f", "-", stdin=json.dumps(manifest), store_path=upgraded)
    assert relabeled.code == 0, relabeled
    assert kidx("get", "runs", "-l", f"suite={run.labels['suite']}", "-o", "name", store_path=upgraded).out.count(
        run.name) == 0
    assert kidx("get", "runs", "-l", "suite=s999", "-o", "name", store_path=upgraded).out.strip().endswith(run.name)
    assert kidx("delete", "run", run.name, store_path=upgraded).code == 0
    checked = kidx("fsck", store_path=upgraded)
    assert checked.code == 0 and "no problems found" in checked.out, checked
    history = kidx("history", "run", run.name, store_path=upgraded).out.splitlines()
    assert [line.split()[:2] for line in history[1:]] == [["1", "applied"], ["2", "applied"], ["3", "deleted"]]


def test_a_failed_upgrade_leaves_a_schema_2_store_as_it_was(kidx, tmp_path, monkeypatch):
    store = copy_of_old_store(tmp_path / "store", source=SCHEMA_2_STORE)
    upgrade = sqlite_catalog.SQLiteCatalog._upgrade

    def upgrade_then_fail(self):
        upgrade(self)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite_catalog.SQLiteCatalog, "_upgrade", upgrade_then_fail)
    result = kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace('"0.6.1"', '"0.6.3"'), store_path=store)
    assert result.code == 1 and "upgraded" not in result.err, result
    assert schema_version(store) == "2"
    with Store(store).reading() as catalog:
        assert "sha256:" in (catalog.get("BenchmarkRun", SEED_RUN_NAME).columns or "sha256:")
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        assert connection.execute("SELECT count(*) FROM sqlite_master WHERE name='labels_by_object'").fetchone() == (1,)
        assert {type(row[0]) for row in connection.execute("SELECT annotations FROM objects")} == {str}
    finally:
        connection.close()

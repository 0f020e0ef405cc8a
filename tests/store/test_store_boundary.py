"""The storage boundary: typed queries compiled by the SQLite backend, the write context,
kidx's own errors for a busy store, stores written before the boundary, and no SQL
outside ``kidx/store/``."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_ENVIRONMENT_DIGEST, SEED_PROTOCOL_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.identity.canonical import canonical_json, digest_bytes
from kidx.store.catalog import (
    CatalogQuery,
    Change,
    Entry,
    FieldCondition,
    ReferenceCondition,
    ReferencedFieldCondition,
)
from kidx.store.store import Store, utc_now

# the typed queries run on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends
API = "kernelindex.dev/v1alpha1"


class Label:
    """A label requirement in the store's neutral form (what kidx.query's Requirement is)."""

    def __init__(self, key, operator, *values):
        self.key, self.operator, self.values = key, operator, tuple(values)


def workload(name: str, seq, labels=None, title=None) -> dict:
    metadata = {"name": name, "labels": labels or {}}
    if title:
        metadata["title"] = title
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata,
            "spec": {"operation": "rope", "parameters": {"seq": seq}}}


def run_of(name: str, workload_name: str, labels=None) -> dict:
    seed = json.loads(SEED_BUNDLE.read_text())
    run = json.loads(json.dumps(seed["run"]))
    run["metadata"] = {"name": name, "labels": labels or {}}
    run["spec"]["workloadRef"] = {"name": workload_name}
    run["spec"].pop("workloadDigest", None)
    run["spec"]["sourceNative"]["externalId"] = name
    return run


@pytest.fixture
def queried(kidx, store):
    seed = json.loads(SEED_BUNDLE.read_text())
    documents = [seed["protocol"], seed["environment"],
                 workload("wl-small", 1024, {"size": "1"}, "Small"), workload("wl-big", 16384, {"size": "16"}),
                 workload("wl-odd", "16384x", {"size": "x"}),
                 run_of("r-a", "wl-small", {"tier": "a", "n": "5"}), run_of("r-b", "wl-big", {"tier": "b", "n": "50"}),
                 run_of("r-c", "wl-big", {"n": "x"}), run_of("r-d", "wl-odd")]
    code, _, err = kidx("apply", "-f", "-", stdin="".join(json.dumps(d) for d in documents))
    assert code == 0, err
    the_store = Store(store)
    yield the_store
    the_store.close()


def names(store: Store, **query) -> list[str]:
    return [entry.name for entry in store.catalog().list(CatalogQuery(**query))]


def test_query_parts(queried):
    digest = queried.catalog().get("Workload", "wl-big").digest
    assert names(queried, kind="Workload") == ["wl-big", "wl-odd", "wl-small"]
    assert names(queried, kind="Workload", names=("wl-small", "wl-big", "nope")) == ["wl-big", "wl-small"]
    assert names(queried, kind="Workload", name_prefix="wl-s") == ["wl-small"]
    assert names(queried, digests=(digest,)) == ["wl-big"]
    assert names(queried, digest_prefix=digest[7:20]) == ["wl-big"]
    assert names(queried, kind="BenchmarkRun", limit=2) == ["r-a", "r-b"]
    assert [(e.kind, e.name) for e in queried.catalog().list(CatalogQuery(order="kind,name", limit=3))] == [
        ("BenchmarkProtocol", "liger-bench-do-bench-backward"), ("BenchmarkRun", "r-a"), ("BenchmarkRun", "r-b")]


@pytest.mark.parametrize("label, expected", [
    (Label("tier", "=", "a"), ["r-a"]),
    (Label("tier", "!=", "a"), ["r-b", "r-c", "r-d"]),
    (Label("tier", "in", "a", "b"), ["r-a", "r-b"]),
    (Label("tier", "notin", "a", "b"), ["r-c", "r-d"]),
    (Label("tier", "exists"), ["r-a", "r-b"]),
    (Label("tier", "!"), ["r-c", "r-d"]),
    (Label("n", "gt", "6"), ["r-b"]),  # "x" is not a number: neither greater nor less
    (Label("n", "lt", "6"), ["r-a"]),
])
def test_label_requirements_are_exact(queried, label, expected):
    assert names(queried, kind="BenchmarkRun", labels=(label,)) == expected


def test_field_conditions_on_metadata_and_spec(queried):
    assert names(queried, kind="Workload", fields=(FieldCondition(("metadata", "name"), "=", "wl-big"),)) == ["wl-big"]
    assert names(queried, kind="Workload", fields=(FieldCondition(("metadata", "title"), "!=", ""),)) == ["wl-small"]
    assert names(queried, kind="Workload", fields=(FieldCondition(("metadata", "title"), "=", ""),)) == ["wl-big", "wl-odd"]
    # the SQLite catalog leaves spec conditions to Store.select, which reads the objects
    query = CatalogQuery(kind="Workload", fields=(FieldCondition(("spec", "parameters", "seq"), "=", "16384"),))
    assert [e.name for e in queried.select(query)] == ["wl-big"]
    query = CatalogQuery(kind="Workload", fields=(FieldCondition(("spec", "parameters", "seq"), "!=", "16384"),))
    assert [e.name for e in queried.select(query)] == ["wl-odd", "wl-small"]


def test_reference_conditions(queried):
    big = queried.catalog().get("Workload", "wl-big").digest
    assert names(queried, kind="BenchmarkRun", references=(ReferenceCondition(digests=(big,)),)) == ["r-b", "r-c"]
    assert names(queried, kind="BenchmarkRun", references=(ReferenceCondition(digest_prefix=big[7:19]),)) == ["r-b", "r-c"]
    assert names(queried, kind="BenchmarkRun",
                 references=(ReferenceCondition(digests=(big,), field="protocolDigest"),)) == []
    by_label = ReferenceCondition(target_kind="Workload", target_labels=(Label("size", "in", "1", "x"),))
    assert names(queried, kind="BenchmarkRun", references=(by_label,)) == ["r-a", "r-d"]
    numeric = ReferenceCondition(target_kind="Workload", target_labels=(Label("size", "gt", "8"),))
    assert names(queried, kind="BenchmarkRun", references=(numeric,)) == ["r-b", "r-c"]
    assert names(queried, kind="BenchmarkRun", references=(ReferenceCondition(),)) == []


def _make_index_stale(store_path: Path) -> None:
    """A spec index not known to be complete, as a write by an older kidx left a schema 1
    store: a revision recorded after the index's mark (here: the last revision id moved on)."""
    connection = sqlite3.connect(store_path / "catalog.sqlite", isolation_level=None)
    connection.execute("UPDATE info SET value = CAST(value + 1 AS TEXT) WHERE key = 'last_revision'")
    connection.close()


@pytest.mark.parametrize("source", ["index", pytest.param("objects", marks=pytest.mark.sqlite_only)])
@pytest.mark.parametrize("path, operator, value, expected", [
    (("spec", "parameters", "seq"), "=", "16384", ["r-b", "r-c"]),
    (("spec", "parameters", "seq"), "!=", "16384", ["r-a", "r-d"]),
    (("spec", "parameters", "seq"), "=", "16384x", ["r-d"]),
    (("spec", "parameters", "missing"), "=", "", ["r-a", "r-b", "r-c", "r-d"]),
    (("spec", "operation"), "=", "rope", ["r-a", "r-b", "r-c", "r-d"]),
    (("metadata", "name"), "=", "wl-small", ["r-a"]),
    (("metadata", "name"), "!=", "wl-small", ["r-b", "r-c", "r-d"]),
])
def test_reference_following_conditions(queried, store, source, path, operator, value, expected):
    if source == "objects":
        _make_index_stale(store)
    condition = ReferencedFieldCondition("workloadDigest", "Workload", path, operator, value)
    query = CatalogQuery(kind="BenchmarkRun", referenced_fields=(condition,))
    catalog = queried.catalog()
    assert [e.name for e in catalog.list(query)] == expected
    sql, _, _ = catalog.compile(query)
    assert ("spec_leaves" in sql) == (source == "index" and path[0] == "spec")


@pytest.mark.sqlite_only  # SQLite's own plans, index catch-up and locks
def test_reference_following_uses_the_indexes(queried):
    catalog = queried.catalog()
    for condition in (
        ReferencedFieldCondition("workloadDigest", "Workload", ("spec", "parameters", "seq"), "=", "16384"),
        ReferencedFieldCondition("workloadDigest", "Workload", ("spec", "parameters", "seq"), "!=", "16384"),
        ReferencedFieldCondition("protocolDigest", "BenchmarkProtocol", ("metadata", "name"), "=", "p"),
    ):
        sql, parameters, _ = catalog.compile(CatalogQuery(kind="BenchmarkRun", referenced_fields=(condition,)))
        plan = [row[-1] for row in catalog.connection.execute("EXPLAIN QUERY PLAN " + sql, parameters)]
        # refs is a view of ref_targets (each (field, target) once) and ref_links
        assert not any(step.startswith(("SCAN ref_links", "SCAN ref_targets", "SCAN spec_leaves")) for step in plan), plan
        assert any(step.startswith("SEARCH ref_targets USING COVERING INDEX sqlite_autoindex_ref_targets_1 "
                                   "(target=? AND field=?)") for step in plan), plan
        assert any(step.startswith("SEARCH ref_links USING PRIMARY KEY (target_id=?)") for step in plan), plan
        if condition.path[0] == "spec":
            assert any(step.startswith("SEARCH spec_leaves USING PRIMARY KEY (path=? AND value=?)")
                       for step in plan), plan
        else:
            assert any("SEARCH objects USING INDEX sqlite_autoindex_objects_1 (kind=? AND name=?)" in step
                       for step in plan), plan


@pytest.mark.sqlite_only  # SQLite's own plans, index catch-up and locks
def test_a_stale_index_is_read_around_and_caught_up_by_the_next_write(kidx, queried, store):
    _make_index_stale(store)
    before = (store / "catalog.sqlite").read_bytes()
    condition = ReferencedFieldCondition("workloadDigest", "Workload", ("spec", "parameters", "seq"), "=", "1024")
    assert names(queried, kind="BenchmarkRun", referenced_fields=(condition,)) == ["r-a"]
    queried.close()
    assert (store / "catalog.sqlite").read_bytes() == before  # a read never writes
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("wl-new", 77)))[0] == 0
    fresh = Store(store)
    assert fresh.catalog()._spec_index_fresh()
    assert names(fresh, kind="BenchmarkRun", referenced_fields=(condition,)) == ["r-a"]
    fresh.close()


def test_reference_following_protocol_name(queried):
    condition = ReferencedFieldCondition("protocolDigest", "BenchmarkProtocol", ("metadata", "name"), "=",
                                         "liger-bench-do-bench-backward")
    assert names(queried, kind="BenchmarkRun", referenced_fields=(condition,)) == ["r-a", "r-b", "r-c", "r-d"]
    other = ReferencedFieldCondition("protocolDigest", "BenchmarkProtocol", ("metadata", "name"), "=", "x")
    assert names(queried, kind="BenchmarkRun", referenced_fields=(other,)) == []


def test_dotted_reference_path_builds_the_condition():
    from kidx.kinds.registry import registry
    from kidx.query.references import referenced_field_condition

    run = registry().by_kind("BenchmarkRun")
    assert referenced_field_condition(run, "workload.spec.parameters.seq", "=", "16384") == ReferencedFieldCondition(
        "workloadDigest", "Workload", ("spec", "parameters", "seq"), "=", "16384")
    assert referenced_field_condition(run, "protocol.metadata.name", "!=", "p") == ReferencedFieldCondition(
        "protocolDigest", "BenchmarkProtocol", ("metadata", "name"), "!=", "p")
    assert referenced_field_condition(run, "spec.status", "=", "x") is None


def test_label_keys_and_values(queried):
    catalog = queried.catalog()
    assert catalog.label_keys("s") == ["size"]
    assert catalog.label_keys() == ["n", "size", "tier"]
    assert catalog.label_values("size", "1") == ["1", "16"]


def test_many_objects_by_digest(queried):
    digests = [SEED_PROTOCOL_DIGEST, SEED_ENVIRONMENT_DIGEST, "sha256:" + "0" * 64]
    found = queried.identities(digests)
    assert sorted(found) == sorted(digests[:2])
    assert found[SEED_PROTOCOL_DIGEST]["kind"] == "BenchmarkProtocol"
    names_by_digest = queried.catalog().by_digests(digests)
    assert {d: [e.name for e in es] for d, es in names_by_digest.items()} == {
        SEED_PROTOCOL_DIGEST: ["liger-bench-do-bench-backward"],
        SEED_ENVIRONMENT_DIGEST: ["liger-bench-nvidia-h100-80gb-hbm3"],
    }


def test_referenced_manifests(queried, kidx):
    catalog = queried.catalog()
    big, small = catalog.get("Workload", "wl-big"), catalog.get("Workload", "wl-small")
    assert kidx("delete", "workload", "wl-small")[0] == 0
    found = queried.referenced_manifests([big.digest, small.digest, "sha256:" + "1" * 64], "Workload")
    assert sorted(found) == sorted([big.digest, small.digest])
    assert found[big.digest]["metadata"]["name"] == "wl-big"
    assert found[big.digest]["spec"]["parameters"] == {"seq": 16384}
    assert found[small.digest]["metadata"] == {"digest": small.digest}  # no name points at it now
    assert found[small.digest]["spec"]["parameters"] == {"seq": 1024}


# --- the write context -------------------------------------------------------------------


def _entry(name: str, digest: str) -> Entry:
    return Entry(kind="Workload", name=name, digest=digest, title=None, labels={}, annotations={},
                 created="2026-01-01T00:00:00Z", generation=1)


def test_write_is_all_or_nothing(tmp_path):
    store = Store(tmp_path / "s")
    data = canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": "x"}})
    digest = digest_bytes(data)
    with pytest.raises(RuntimeError):
        with store.write() as transaction:
            transaction.add_object(digest, data)
            transaction.put([Change(_entry("w", digest), [])], "2026-01-01T00:00:00Z")
            raise RuntimeError("interrupted")
    assert store.catalog().get("Workload", "w") is None
    assert store.catalog().revisions("Workload", "w") == []
    with store.write() as transaction:
        transaction.add_object(digest, data)
        transaction.put([Change(_entry("w", digest), [])], "2026-01-01T00:00:00Z")
    assert store.catalog().get("Workload", "w").digest == digest
    store.close()


def test_objects_are_flushed_before_the_catalog_commits(tmp_path, monkeypatch):
    store = Store(tmp_path / "s")
    order: list[str] = []
    catalog = store.catalog(write=True)
    monkeypatch.setattr(store.objects, "flush", lambda: order.append("flush"))
    real_commit = catalog.commit
    monkeypatch.setattr(catalog, "commit", lambda: (order.append("commit"), real_commit()))
    data = canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": "y"}})
    with store.write() as transaction:
        transaction.add_object(digest_bytes(data), data)
        transaction.put([Change(_entry("y", digest_bytes(data)), [])], "2026-01-01T00:00:00Z")
    assert order == ["flush", "commit"]
    store.close()


def test_lists_longer_than_one_statement_binds(store):
    """Lists of names and digests longer than SQLite binds in one statement go to it in
    chunks, and to PostgreSQL as one array: every one is found, and absent and repeated
    ones change nothing."""
    the_store = Store(store)
    bodies = [canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": "op", "index": i}})
              for i in range(1100)]
    digests = [digest_bytes(body) for body in bodies]
    names = [f"w{i:04}" for i in range(1100)]
    with the_store.write() as transaction:
        for digest, body in zip(digests, bodies, strict=True):
            transaction.add_object(digest, body)
        transaction.put([Change(_entry(name, digest), []) for name, digest in zip(names, digests, strict=True)],
                        "2026-01-01T00:00:00Z")
    catalog = the_store.catalog()
    found = catalog.get_many("Workload", [*reversed(names), "absent", names[0]])
    assert {name: entry.digest for name, entry in found.items()} == dict(zip(names, digests, strict=True))
    assert catalog.digests_present([*digests, "sha256:" + "0" * 64, digests[7]]) == set(digests)
    assert catalog.get_many("Workload", []) == {} and catalog.digests_present([]) == set()
    the_store.close()


def test_a_reference_named_twice_is_one_row(store):
    """A spec may point at one object twice through one field: the catalog keeps one
    reference row (what fsck and the referrer counts read)."""
    the_store = Store(store)
    target = canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": "t"}})
    referrer = canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": "r"}})
    target_digest, referrer_digest = digest_bytes(target), digest_bytes(referrer)
    twice = [("workloadDigest", target_digest), ("workloadDigest", target_digest)]
    with the_store.write() as transaction:
        transaction.add_object(target_digest, target)
        transaction.add_object(referrer_digest, referrer)
        transaction.put([Change(_entry("t", target_digest), []), Change(_entry("r", referrer_digest), twice)],
                        "2026-01-01T00:00:00Z")
    catalog = the_store.catalog()
    assert catalog.referrer_counts(target_digest) == [("Workload", 1)]
    indexed, stray_labels, stray_references = catalog.index_rows()
    assert indexed[("Workload", "r")] == ({}, {("workloadDigest", target_digest)})
    assert (stray_labels, stray_references) == (0, 0)
    the_store.close()


def test_printer_columns_after_a_rolled_back_write_name_their_own_references(store):
    """A write keeps the ids of the reference targets its rows' printer columns are packed
    with; one that rolls back gives its new ids up, and a later write that takes them for
    other targets leaves each row's columns naming its own references."""
    the_store = Store(store)
    bodies = {name: canonical_json({"apiVersion": API, "kind": "Workload", "spec": {"operation": name}})
              for name in ("a", "b", "r1", "r2", "r3")}
    digests = {name: digest_bytes(body) for name, body in bodies.items()}

    def referrer(name: str, target: str) -> Change:
        columns = f'0badf00d:["{digests[target]}",1]'
        entry = _entry(name, digests[name])._replace(columns=columns)
        return Change(entry, [("workloadDigest", digests[target])])

    with pytest.raises(RuntimeError):
        with the_store.write() as transaction:
            transaction.add_object(digests["r1"], bodies["r1"])
            transaction.put([referrer("r1", "a")], "2026-01-01T00:00:00Z")
            raise RuntimeError("interrupted")
    for name, target in (("r2", "b"), ("r3", "a")):
        with the_store.write() as transaction:
            for stored in (name, target):
                transaction.add_object(digests[stored], bodies[stored])
            transaction.put([referrer(name, target)], "2026-01-01T00:00:00Z")
    catalog = the_store.catalog()
    assert catalog.get("Workload", "r1") is None
    assert catalog.get("Workload", "r2").columns == f'0badf00d:["{digests["b"]}",1]'
    assert catalog.get("Workload", "r3").columns == f'0badf00d:["{digests["a"]}",1]'
    the_store.close()


@pytest.mark.sqlite_only  # SQLite's own plans, index catch-up and locks
def test_a_held_write_lock_is_reported_as_busy(kidx, store, monkeypatch):
    from kidx.store import sqlite_catalog

    assert kidx("apply", "-f", str(SEED_BUNDLE))[0] == 0
    monkeypatch.setattr(sqlite_catalog, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(store / "catalog.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        changed = SEED_BUNDLE.read_text().replace("0.6.1", "0.6.9")
        assert kidx("apply", "-f", "-", stdin=changed) == (
            1, "", "error: the store's catalog cannot be used: database is locked (is another kidx writing? try again)\n")
        assert kidx("get", "runs", "-o", "name") == (0, f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}\n", "")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with pytest.raises(Exception) as raised:
        with Store(store).write():
            raise KeyError("x")
    assert raised.type is KeyError


# --- a store written before the boundary --------------------------------------------------

# The catalog schema as kidx wrote it before the storage boundary existed (schema 1).
PRE_BOUNDARY_SCHEMA = """
CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, digest TEXT NOT NULL,
    title TEXT, labels TEXT NOT NULL, annotations TEXT NOT NULL, created TEXT NOT NULL, generation INTEGER NOT NULL,
    columns TEXT, UNIQUE (kind, name));
CREATE INDEX objects_by_digest ON objects (digest);
CREATE TABLE labels (object_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (key, value, object_id)) WITHOUT ROWID;
CREATE INDEX labels_by_object ON labels (object_id);
CREATE TABLE refs (object_id INTEGER NOT NULL, field TEXT NOT NULL, target TEXT NOT NULL,
    PRIMARY KEY (target, object_id, field)) WITHOUT ROWID;
CREATE INDEX refs_by_object ON refs (object_id);
CREATE TABLE revisions (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, event TEXT NOT NULL,
    digest TEXT, title TEXT, labels TEXT, annotations TEXT, generation INTEGER, recorded TEXT NOT NULL);
CREATE INDEX revisions_by_name ON revisions (kind, name, id);
INSERT INTO info VALUES ('schema', '1');
"""


def _write_pre_boundary_store(root: Path) -> None:
    """The seed bundle as the earlier code stored it: object files plus the catalog rows."""
    seed = json.loads(SEED_BUNDLE.read_text())
    root.mkdir(parents=True)
    connection = sqlite3.connect(root / "catalog.sqlite", isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(PRE_BOUNDARY_SCHEMA)
    now = utc_now()  # ages then print alike in both stores
    digests = {"protocol": SEED_PROTOCOL_DIGEST, "environment": SEED_ENVIRONMENT_DIGEST, "run": SEED_RUN_DIGEST}
    for number, key in enumerate(("protocol", "environment", "run"), start=1):
        manifest = seed[key]
        spec = manifest["spec"]
        data = canonical_json({"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "spec": spec})
        assert digest_bytes(data) == digests[key]
        path = root / "objects" / "sha256" / digests[key][7:9] / digests[key][9:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        metadata = manifest["metadata"]
        labels = json.dumps(metadata.get("labels") or {}, sort_keys=True, separators=(",", ":"))
        connection.execute(
            "INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, '{}', ?, 1, NULL)",
            (number, manifest["kind"], metadata["name"], digests[key], metadata.get("title"), labels, now))
        for label_key, value in (metadata.get("labels") or {}).items():
            connection.execute("INSERT INTO labels VALUES (?, ?, ?)", (number, label_key, value))
        for field, target in spec.items():
            if field.endswith("Digest"):
                connection.execute("INSERT INTO refs VALUES (?, ?, ?)", (number, field, target))
        connection.execute(
            "INSERT INTO revisions (kind, name, event, digest, title, labels, annotations, generation, recorded) "
            "VALUES (?, ?, 'applied', ?, ?, ?, '{}', 1, ?)",
            (manifest["kind"], metadata["name"], digests[key], metadata.get("title"), labels, now))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


def _fingerprint(root: Path) -> dict[str, str]:
    """sha256 of every file; a reader's shared-memory index and an empty WAL are not data."""
    found = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}
    if found.get("catalog.sqlite-wal") == hashlib.sha256(b"").hexdigest():
        del found["catalog.sqlite-wal"]
    return found


@pytest.mark.sqlite_only  # a folder store written by older kidx
def test_a_store_written_before_the_boundary_reads_identically(kidx, tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    _write_pre_boundary_store(old)
    assert kidx("apply", "-f", str(SEED_BUNDLE), store_path=new)[0] == 0
    before = _fingerprint(old)
    protocol = ReferencedFieldCondition("protocolDigest", "BenchmarkProtocol", ("metadata", "name"), "=",
                                        "liger-bench-do-bench-backward")
    for args in (["get", "all", "-o", "name"], ["get", "runs", "-o", "wide"], ["get", "runs", "-l", "liger_version=0.6.1"],
                 ["get", "runs", "--references", "environment/liger-bench-nvidia-h100-80gb-hbm3", "-o", "name"],
                 ["get", "runs", "--field-selector", "spec.status=passed", "-o", "name"],
                 ["get", "env", "-o", "yaml"], ["describe", "runs"]):
        old_result = kidx(*args, store_path=old)
        new_result = kidx(*args, store_path=new)
        assert old_result[0] == 0, (args, old_result)
        ignore_times = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\b\d+[smhdy]\b")
        assert ignore_times.sub("T", old_result[1]) == ignore_times.sub("T", new_result[1]), args
    with Store(old).reading() as catalog:
        assert [e.name for e in catalog.list(CatalogQuery(kind="BenchmarkRun", referenced_fields=(protocol,)))] == [
            SEED_RUN_NAME]
    assert _fingerprint(old) == before  # reading wrote nothing
    # and it takes writes: history continues from the old revisions
    assert kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text().replace("0.6.1", "0.6.2"), store_path=old)[0] == 0
    code, out, _ = kidx("history", "run", SEED_RUN_NAME, store_path=old)
    assert code == 0 and len(out.splitlines()) == 3, out
    # that write added the spec index, filled from the objects the runs refer to
    migrated = Store(old)
    catalog = migrated.catalog()
    assert catalog._spec_index_fresh()
    product = ReferencedFieldCondition("environmentDigest", "ExecutionEnvironment", ("spec", "hardware", "product"),
                                       "=", "NVIDIA H100")
    query = CatalogQuery(kind="BenchmarkRun", referenced_fields=(product,))
    assert "spec_leaves" in catalog.compile(query)[0]
    assert [e.name for e in catalog.list(query)] == [SEED_RUN_NAME]
    indexed = {catalog.dialect.digest_text(row[0])
               for row in catalog.connection.execute("SELECT digest FROM spec_indexed")}
    assert indexed == {SEED_PROTOCOL_DIGEST, SEED_ENVIRONMENT_DIGEST}  # the workload is not in the store
    migrated.close()


# --- one boundary ----------------------------------------------------------------------


def test_no_sql_outside_the_store():
    """SQL and database drivers live in kidx/store/ only."""
    offenders = []
    for path in sorted((REPO / "kidx").rglob("*.py")):
        if path.parent.name == "store" and path.parent.parent.name == "kidx":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"\bimport sqlite3\b|\bsqlite3\.|\bpsycopg\b|\bSELECT\s+\w|\bINSERT INTO\b|\bBEGIN IMMEDIATE\b", text):
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


@pytest.mark.parametrize("labels, expected", [
    ((Label("tier", "!=", "a"), Label("tier", "!=", "b")), ["r-c", "r-d"]),
    ((Label("tier", "in", "a", "b"), Label("tier", "!=", "b")), ["r-a"]),
    ((Label("tier", "in", "a", "b"), Label("tier", "=", "b")), ["r-b"]),
    ((Label("tier", "=", "a"), Label("tier", "=", "b")), []),
    ((Label("tier", "exists"), Label("tier", "notin", "a", "x")), ["r-b"]),
    ((Label("tier", "exists"), Label("tier", "!")), []),
    ((Label("tier", "!"), Label("n", "!=", "5"), Label("n", "!=", "50")), ["r-c", "r-d"]),
    ((Label("n", "gt", "6"), Label("n", "in", "5", "50", "x")), ["r-b"]),
    ((Label("n", "gt", "4"), Label("n", "lt", "60"), Label("tier", "!=", "b")), ["r-a"]),
])
def test_requirements_on_one_key_are_one_set_condition(queried, labels, expected):
    """Requirements sharing a key are answered together, exactly as each would be."""
    assert names(queried, kind="BenchmarkRun", labels=labels) == expected


def test_a_selector_of_thousands_of_requirements_is_a_few_clauses_with_its_values_in_one_list(queried):
    """8,000 ``tier!=…`` (a generated selector) compile to one condition on the key, whose
    values travel as one list: the SQL does not grow with them, and the answer is exact."""
    labels = tuple(Label("tier", "!=", f"x{index}") for index in range(8000)) + (Label("tier", "!=", "a"),)
    catalog = queried.catalog()
    sql, parameters, _ = catalog.compile(CatalogQuery(kind="BenchmarkRun", labels=labels))
    assert len(sql) < 1000 and len(parameters) < 10, (len(sql), len(parameters))
    assert names(queried, kind="BenchmarkRun", labels=labels) == ["r-b", "r-c", "r-d"]
    # a thousand keys: two set conditions, the values and keys as list parameters
    many = tuple(Label(f"k{index}", "!=", "x") for index in range(1000)) + (Label("n", "exists"),)
    sql, parameters, _ = catalog.compile(CatalogQuery(kind="BenchmarkRun", labels=many + labels))
    assert len(sql) < 2000 and len(parameters) < 10, (len(sql), len(parameters))
    assert names(queried, kind="BenchmarkRun", labels=many + labels) == ["r-b", "r-c"]
    wanted = tuple(Label(f"k{index}", "!", ) for index in range(20)) + (
        Label("n", "in", "5", "50"), Label("tier", "exists"), Label("tier", "!=", "a"))
    assert len(catalog.compile(CatalogQuery(kind="BenchmarkRun", labels=wanted))[0]) < 2000
    assert names(queried, kind="BenchmarkRun", labels=wanted) == ["r-b"]
    assert names(queried, kind="BenchmarkRun", labels=(*wanted, Label("n", "=", "7"))) == []

"""The PostgreSQL store on its own: the driver extra, URLs and passwords, the schema's
guarantees, and many processes writing and reading at once (every CLI acceptance test
also runs on PostgreSQL: see ``both_backends`` in conftest.py)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, SEED_RUN_DIGEST

SEED = json.loads((REPO / "docs" / "examples" / "seed-bundle.json").read_text(encoding="utf-8"))
RUN = "benchmarkrun.kernelindex.dev"


def kidx_process(store, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kidx", *args], capture_output=True, text=True, env=environment, cwd=REPO,
        timeout=timeout,
    )


def start(store, folder: Path, label: str, *args: str) -> subprocess.Popen:
    """A kidx process in the background; output to files, so a full pipe never blocks it."""
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"}
    out, err = open(folder / f"{label}.out", "wb"), open(folder / f"{label}.err", "wb")
    with out, err:
        return subprocess.Popen([sys.executable, "-m", "kidx", *args], stdout=out, stderr=err, env=environment, cwd=REPO)


def finished(process: subprocess.Popen, folder: Path, label: str) -> tuple[int, str, str]:
    code = process.wait(timeout=120)
    return code, (folder / f"{label}.out").read_text(), (folder / f"{label}.err").read_text()


def seed_file(tmp_path: Path) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(SEED), encoding="utf-8")
    return path


def run_manifest(name: str, median: int) -> dict:
    run = copy.deepcopy(SEED["run"])
    run["metadata"]["name"] = name
    run["spec"]["timing"]["latencyNs"]["median"] = median
    return run


def write_list(path: Path, items: list[dict]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


def sql(store, statement: str, parameters=()):
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as connection:
        cursor = connection.execute(statement, parameters)
        return cursor.fetchall() if cursor.description else []


# --- the driver, URLs and passwords ---------------------------------------------------------


def test_without_psycopg_a_postgres_store_says_how_to_install_it(kidx, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    for url in ("postgresql://someone@db.example.org/bench", "postgres://db.example.org/bench"):
        assert kidx("get", "runs", store_path=url) == (
            1,
            "",
            "error: a PostgreSQL store needs the psycopg driver, which is not installed: "
            "pip install '.[postgres]' from a checkout of kidx\n",
        )


def test_the_store_can_come_from_the_environment(postgres_store, tmp_path):
    assert kidx_process(postgres_store, "apply", "-f", str(seed_file(tmp_path))).returncode == 0
    completed = kidx_process(postgres_store, "get", "runs", "-o", "name")
    assert (completed.returncode, completed.stdout, completed.stderr) == (
        0, f"{RUN}/{SEED['run']['metadata']['name']}\n", "",
    )
    assert postgres_store.exists()


def test_a_password_is_never_printed(postgres_server, kidx):
    url = f"postgresql://nobody:s3cr%40t-pw@/postgres?host={postgres_server.folder}"
    code, out, err = kidx("get", "runs", store_path=url)
    assert code == 1 and out == ""
    assert err.startswith(f"error: cannot connect to the store at postgresql://nobody:***@/postgres?host={postgres_server.folder}: ")
    assert 'role "nobody" does not exist' in err
    assert "s3cr" not in err and "Traceback" not in err


def test_a_password_in_the_query_string_is_masked_too():
    from kidx.store.postgres_url import masked, scrubbed

    assert masked("postgresql://u@h/db?sslmode=require&password=pw1&x=1") == (
        "postgresql://u@h/db?sslmode=require&password=***&x=1"
    )
    assert scrubbed("failed for pw1 at postgresql://u:pw1@h/db", "postgresql://u:pw1@h/db") == (
        "failed for *** at postgresql://u:***@h/db"
    )


def test_an_unreachable_server_is_a_clean_error(kidx, tmp_path):
    code, out, err = kidx("get", "runs", store_path=f"postgresql://u:pw@/db?host={tmp_path}&connect_timeout=2")
    assert code == 1 and out == ""
    assert err.startswith(f"error: cannot connect to the store at postgresql://u:***@/db?host={tmp_path}&connect_timeout=2: ")
    assert "Traceback" not in err


# --- the schema's guarantees ----------------------------------------------------------------


def stored_objects(store) -> dict[bytes, bytes]:
    return {bytes(digest): bytes(content) for digest, content in sql(store, "SELECT digest, content FROM kidx.objects")}


def test_objects_are_stored_packed_under_32_byte_digests_and_read_as_their_exact_bytes(postgres_store, kidx,
                                                                                         tmp_path):
    """Schema 4: a small first write packs its objects without a dictionary (first byte 0,
    raw deflate); each reads back as its exact canonical bytes."""
    import zlib

    from kidx.identity.canonical import canonical_json

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    stored = stored_objects(postgres_store)
    assert len(stored) == 3 and {len(digest) for digest in stored} == {32}  # protocol, environment, run
    content = stored[bytes.fromhex(SEED_RUN_DIGEST[7:])]
    expected = {"apiVersion": SEED["run"]["apiVersion"], "kind": "BenchmarkRun", "spec": SEED["run"]["spec"]}
    assert content[0] == 0 and zlib.decompress(content[1:], -15) == canonical_json(expected)
    assert len(content) < len(canonical_json(expected)) * 0.6
    assert sql(postgres_store, "SELECT count(*) FROM kidx.text_dictionaries WHERE id = 2") == [(0,)]
    code, out, _ = kidx("get", "run", SEED["run"]["metadata"]["name"], "-o", "json", store_path=postgres_store)
    assert code == 0 and json.loads(out)["spec"] == SEED["run"]["spec"]


def test_the_first_write_of_many_objects_makes_the_dictionary_every_later_object_is_packed_with(
        postgres_store, tmp_path):
    import hashlib
    import zlib

    from kidx.store.object_packing import WORKER_FROM

    count = WORKER_FROM + 8  # packed by a process of their own (kidx.store.object_packing.Packing)
    runs = [run_manifest(f"packed-{index:04d}", 1000 + index) for index in range(count)]
    path = write_list(tmp_path / "runs.json", [SEED["protocol"], SEED["environment"], *runs])
    assert kidx_process(postgres_store, "apply", "-f", str(path)).returncode == 0
    ((dictionary,),) = sql(postgres_store, "SELECT dictionary FROM kidx.text_dictionaries WHERE id = 2")
    stored = stored_objects(postgres_store)
    assert {content[0] for content in stored.values()} == {2}  # every object of the write, with it
    for digest, content in stored.items():
        unpacker = zlib.decompressobj(-15, zdict=bytes(dictionary))
        assert hashlib.sha256(unpacker.decompress(content[1:])).digest() == digest
    # about a fifth of the exact bytes: runs that differ in a name and a median
    exact = sum(len(zlib.decompressobj(-15, zdict=bytes(dictionary)).decompress(c[1:])) for c in stored.values())
    assert sum(len(content) for content in stored.values()) < exact / 4
    # a later write, however small, packs with it; the dictionary is never made again
    one = write_list(tmp_path / "one.json", [run_manifest("packed-later", 7)])
    assert kidx_process(postgres_store, "apply", "-f", str(one)).returncode == 0
    later = set(stored_objects(postgres_store).items()) - set(stored.items())
    assert [content[0] for _, content in later] == [2]
    assert sql(postgres_store, "SELECT count(*) FROM kidx.text_dictionaries WHERE id = 2") == [(1,)]
    listed = kidx_process(postgres_store, "get", "runs", "-o", "json")
    assert sorted(item["spec"]["timing"]["latencyNs"]["median"] for item in json.loads(listed.stdout)["items"]) == [
        7, *range(1000, 1000 + count)]


def test_a_write_that_made_the_dictionary_and_failed_leaves_no_trace_of_it_in_the_next(postgres_store):
    """The dictionary is made in the write's transaction: a rollback takes it away, and the
    same Store must not pack its next write's objects with a dictionary the database lacks."""
    import hashlib

    from kidx.store.object_packing import DICTIONARY_OBJECTS
    from kidx.store.store import Store

    def objects(prefix: str, count: int) -> dict[str, bytes]:
        made = [json.dumps({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload",
                            "spec": {"operation": f"{prefix}-{index}", "shape": [index, 2 * index]}},
                           separators=(",", ":")).encode() for index in range(count)]
        return {"sha256:" + hashlib.sha256(data).hexdigest(): data for data in made}

    store = Store(postgres_store.url)
    with store.write():  # the schema, so that the failing write is not the store's first
        pass
    failed = objects("failed", DICTIONARY_OBJECTS + 1)
    with pytest.raises(RuntimeError), store.write() as transaction:
        transaction.add_objects(failed)
        store.objects.flush()
        assert sql(postgres_store, "SELECT count(*) FROM kidx.text_dictionaries") == [(0,)]  # not committed yet
        raise RuntimeError("the write fails after its objects went out")
    assert sql(postgres_store, "SELECT count(*) FROM kidx.objects") == [(0,)]
    kept = objects("kept", 3)
    with store.write() as transaction:
        transaction.add_objects(kept)
    assert sql(postgres_store, "SELECT count(*) FROM kidx.text_dictionaries") == [(0,)]
    assert {content[0] for content in stored_objects(postgres_store).values()} == {0}  # packed without one
    assert Store(postgres_store.url).objects.read_many(kept) == kept


def test_a_packed_object_that_does_not_unpack_to_its_digest_is_named_damaged(postgres_store, kidx, tmp_path):
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    bundle = tmp_path / "backup.json"
    assert kidx("export", "-o", str(bundle), store_path=postgres_store)[0] == 0
    run_digest = bytes.fromhex(SEED_RUN_DIGEST[7:])
    sql(postgres_store, "UPDATE kidx.objects SET content = %s WHERE digest = %s", (b"\x02not deflate", run_digest))
    code, out, err = kidx("describe", "run", SEED["run"]["metadata"]["name"], store_path=postgres_store)
    assert (code, out) == (1, "") and f"object {SEED_RUN_DIGEST} is damaged" in err and "Traceback" not in err
    code, out, err = kidx("fsck", store_path=postgres_store)
    assert code == 1 and "damaged-object" in out and SEED_RUN_DIGEST in out, (out, err)
    # fsck keeps a damaged object's bytes before it replaces them, and a database has no folder to keep them in
    code, out, err = kidx("fsck", "--repair", "--from-bundle", str(bundle), store_path=postgres_store)
    assert code == 1 and "not replaced: fsck keeps a damaged object's bytes in the store folder's lost+found/" in out
    # applying its manifest again replaces it, as in a folder store's pack
    code, out, err = kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)
    assert code == 0 and f"object {SEED_RUN_DIGEST} in {postgres_store.url} was damaged (it did not hash to its " \
        "name); written again" in err, (out, err)
    assert kidx("fsck", store_path=postgres_store)[0] == 0
    assert kidx("describe", "run", SEED["run"]["metadata"]["name"], store_path=postgres_store)[0] == 0


def test_a_bulk_write_that_fails_while_its_objects_are_packed_stores_none_of_them(postgres_store, monkeypatch):
    """The worker stopped and waited for, the write rolled back: the next write of the same
    Store commits only its own objects."""
    import hashlib

    from kidx.store import object_packing
    from kidx.store.store import Store

    monkeypatch.setattr(object_packing, "WORKER_FROM", 10)

    def objects(prefix: str, count: int) -> dict[str, bytes]:
        made = [json.dumps({"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload",
                            "spec": {"operation": f"{prefix}-{index}"}}, separators=(",", ":")).encode()
                for index in range(count)]
        return {"sha256:" + hashlib.sha256(data).hexdigest(): data for data in made}

    store = Store(postgres_store.url)
    with store.write():
        pass
    with pytest.raises(RuntimeError, match="the write fails"), store.write() as transaction:
        transaction.add_objects(objects("failed", 100))
        store.objects.backend.start_packing()  # as a bulk put or restore starts it
        time.sleep(0.5)  # the worker has its objects (or has packed them)
        raise RuntimeError("the write fails")
    kept = objects("next", 3)
    with store.write() as transaction:
        transaction.add_objects(kept)
    assert sql(postgres_store, "SELECT count(*) FROM kidx.objects") == [(3,)]
    assert Store(postgres_store.url).objects.read_many(kept) == kept


def test_a_bulk_apply_packs_with_this_kidx_whatever_the_working_folder_holds(postgres_store, tmp_path):
    from kidx.store.object_packing import WORKER_FROM

    elsewhere = tmp_path / "an-older-checkout"
    (elsewhere / "kidx").mkdir(parents=True)
    (elsewhere / "kidx" / "__init__.py").write_text("raise ImportError('not this kidx')\n")
    runs = [run_manifest(f"bulk-{index:05d}", 1000 + index) for index in range(WORKER_FROM + 10)]
    path = write_list(tmp_path / "runs.json", [SEED["protocol"], SEED["environment"], *runs])
    environment = {**os.environ, "KIDX_STORE": str(postgres_store), "NO_COLOR": "1",
                   "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from kidx.cli.app "
                           "import main; sys.argv[1:2] = []; main()", str(REPO), "apply", "-f", str(path), "-o", "name"],
                          capture_output=True, text=True, env=environment, cwd=elsewhere, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "packing" not in done.stderr, done.stderr
    assert sql(postgres_store, "SELECT count(*), min(get_byte(content, 0)), max(get_byte(content, 0)) "
                               "FROM kidx.objects") == [(WORKER_FROM + 12, 2, 2)]


@pytest.mark.parametrize("delay", [0.8, 1.6])
def test_ctrl_c_during_a_bulk_apply_leaves_the_store_and_no_process_behind(postgres_store, tmp_path, delay):
    runs = [run_manifest(f"bulk-{index:05d}", 1000 + index) for index in range(6000)]
    path = write_list(tmp_path / "runs.json", [SEED["protocol"], SEED["environment"], *runs])
    environment = {**os.environ, "KIDX_STORE": str(postgres_store), "NO_COLOR": "1"}
    process = subprocess.Popen([sys.executable, "-m", "kidx", "apply", "-f", str(path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=environment, cwd=REPO, start_new_session=True)
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal sends it: the worker too
    _, err = process.communicate(timeout=60)
    time.sleep(0.3)
    left = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(process.pid)], capture_output=True, text=True)
    assert "Traceback" not in err.decode() and "unexpected" not in err.decode(), err.decode()
    assert process.returncode in (0, 130) and left.stdout.strip() == "", (process.returncode, left.stdout)
    if sql(postgres_store, "SELECT to_regclass('kidx.objects') IS NOT NULL")[0][0]:
        counts = sql(postgres_store, "SELECT (SELECT count(*) FROM kidx.objects), (SELECT count(*) FROM kidx.entries)")
        assert counts in ([(0, 0)], [(6002, 6002)]) and (counts == [(0, 0)]) == (process.returncode == 130)


def test_a_series_newest_runs_are_read_from_the_series_index_up_to_the_limit(postgres_store, kidx, tmp_path):
    """compare's and series' history window (the newest N runs of a series): read newest first
    from the names' (series_id, id) index, N rows of it however long the series."""
    from kidx.store.catalog import RECENT, CatalogQuery, ReferenceCondition
    from kidx.store.store import Store

    runs = [run_manifest(f"series-{number:03d}", 1000 + number) for number in range(150)]
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    assert kidx("apply", "-f", str(write_list(tmp_path / "runs.json", runs)), store_path=postgres_store).code == 0
    references = sql(postgres_store, "SELECT r.field, r.target FROM kidx.refs r JOIN kidx.entries e ON e.id = "
                     "r.object_id WHERE e.name = %s ORDER BY r.field DESC", (SEED["run"]["metadata"]["name"],))
    assert len(references) == 4
    query = CatalogQuery(kind=SEED["run"]["kind"], order=RECENT, limit=10, references=tuple(
        ReferenceCondition(digests=("sha256:" + bytes(target).hex(),), field=field) for field, target in references))
    with Store(postgres_store.url).reading() as catalog:
        assert [entry.name for entry in catalog.list(query)] == [f"series-{number:03d}" for number in range(149, 139, -1)]
        statement, parameters, _ = catalog.compile(query)
        connection = catalog.connection
        connection.execute("SET LOCAL enable_seqscan = off")  # a few hundred rows: the plan a large store gets
        plan = [line for (line,) in connection.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + statement,
                                                        parameters)]
    scans = [line.strip() for line in plan if "entries_by_series" in line]
    assert scans == ["->  Index Scan using entries_by_series on entries o (actual rows=10 loops=1)"], plan


def test_series_tail_reads_the_series_rows_through_the_series_index_and_only_its_newest_objects(
        postgres_store, kidx, tmp_path, monkeypatch):
    """``series --tail N`` on PostgreSQL: the series' catalog rows (no object) found through
    the series index among many other series' runs, and only its N + 1 newest runs read."""
    import hashlib

    from kidx.store.store import Store

    runs = [run_manifest(f"series-{number:03d}", 1000 + number) for number in range(150)]
    for number in range(3000):  # 30 other series of 100 runs
        other = run_manifest(f"other-{number:04d}", 2000 + number)
        other["spec"]["implementationDigest"] = "sha256:" + hashlib.sha256(b"%d" % (number % 30)).hexdigest()
        runs.append(other)
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    assert kidx("apply", "-f", str(write_list(tmp_path / "runs.json", runs)), store_path=postgres_store).code == 0
    sql(postgres_store, "ANALYZE")  # planned with the tables' real sizes, as a large store is
    queries, read = [], []
    select, identities = Store.select, Store.identities
    monkeypatch.setattr(Store, "select", lambda self, query, catalog=None: queries.append(query)
                        or select(self, query, catalog))

    def read_too(digests):
        digests = list(digests)
        read.extend(digests)
        return digests

    monkeypatch.setattr(Store, "identities", lambda self, digests: identities(self, read_too(digests)))
    code, out, err = kidx("series", "--references", SEED["run"]["spec"]["implementationDigest"], "--tail", "3",
                          store_path=postgres_store)
    assert (code, err) == (0, "")
    # all 151 runs were observed at once: the newest are the last by name
    assert [line.split()[-1] for line in out.splitlines()[2:5]] == ["series-147", "series-148", "series-149"]
    digests_of = {"sha256:" + bytes(digest).hex(): name for name, digest in sql(
        postgres_store, "SELECT name, digest FROM kidx.entries WHERE kind = 'BenchmarkRun'")}
    assert sorted(digests_of[digest] for digest in read if digest in digests_of) == [
        "series-146", "series-147", "series-148", "series-149"]
    [query] = queries  # the selection's rows, once
    with Store(postgres_store.url).reading() as catalog:
        statement, parameters, _ = catalog.compile(query)
        plan = [line for (line,) in catalog.connection.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + statement,
                                                                parameters)]
    scans = [line.strip() for line in plan if "on entries" in line or "entries_by_series" in line]
    assert any("entries_by_series" in line and "(actual rows=151 loops=1)" in line for line in scans), plan
    assert not any(line.startswith("->  Seq Scan on entries") or "entries_kind_name_key" in line
                   for line in scans), plan

def test_a_bulk_write_refreshes_the_planner_statistics_of_what_it_loaded(postgres_store, kidx, tmp_path,
                                                                         monkeypatch):
    """A write that loads ANALYZE_FROM rows into a table analyses it before it commits, so
    the next selection is planned with the table's real size; a smaller one leaves it to
    autovacuum (which this test's server does not run within the test)."""
    from kidx.store import postgres_rows

    monkeypatch.setattr(postgres_rows, "ANALYZE_FROM", 100)
    analysed = "SELECT relname, reltuples FROM pg_class WHERE relname = 'entries'"
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    small = [run_manifest(f"small-{number:03d}", 1000 + number) for number in range(20)]
    assert kidx("apply", "-f", str(write_list(tmp_path / "small.json", small)), store_path=postgres_store).code == 0
    assert sql(postgres_store, analysed) == [("entries", -1.0)]
    bulk = [run_manifest(f"bulk-{number:03d}", 2000 + number) for number in range(120)]
    assert kidx("apply", "-f", str(write_list(tmp_path / "bulk.json", bulk)), store_path=postgres_store).code == 0
    # what the tables hold, counted: 4 references a run, in its series
    (entries,), (links,) = (sql(postgres_store, query)[0] for query in (
        "SELECT count(*) FROM kidx.entries", "SELECT count(*) FROM kidx.refs"))
    assert links == 4 * (1 + 20 + 120) and entries > 141
    assert sql(postgres_store, analysed) == [("entries", float(entries))]


def test_the_database_refuses_bytes_that_do_not_hash_to_their_digest(postgres_store, kidx, tmp_path):
    import psycopg

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    with pytest.raises(psycopg.errors.CheckViolation):
        sql(postgres_store, "INSERT INTO kidx.objects (digest, content) VALUES (%s, %s)", (b"\0" * 32, b"{}"))


def test_a_failed_first_write_creates_nothing(postgres_store, kidx):
    bad = json.dumps({**SEED["run"], "spec": {}})
    code, _, err = kidx("apply", "-f", "-", stdin=bad, store_path=postgres_store)
    assert code == 1 and err.startswith("error: ")
    assert not postgres_store.exists()


def test_names_sort_in_byte_order_whatever_the_database_collation(postgres_server, kidx):
    """A database whose default collation ignores punctuation ("ab" before "a-c") still
    lists names in byte order, as the SQLite catalog does."""
    postgres_server.execute(
        "CREATE DATABASE kidx_shifted LOCALE_PROVIDER icu ICU_LOCALE 'en-u-ka-shifted' TEMPLATE template0"
    )
    try:
        url = postgres_server.url("kidx_shifted")
        names = ["ab", "a-c", "a_b", "a.d"]
        items = [{**SEED["environment"], "metadata": {"name": name}} for name in names]
        listing = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        assert kidx("apply", "-f", "-", stdin=listing, store_path=url)[0] == 0
        out = kidx("get", "environments", "-o", "name", store_path=url)[1]
        assert [line.split("/", 1)[1] for line in out.splitlines()] == ["a-c", "a.d", "a_b", "ab"]
        out = kidx("get", "environments", "-o", "name", "--sort-by", ".metadata.name", store_path=url)[1]
        assert [line.split("/", 1)[1] for line in out.splitlines()] == ["a-c", "a.d", "a_b", "ab"]
    finally:
        postgres_server.drop_database("kidx_shifted")


# --- many clients at once -------------------------------------------------------------------


def test_many_writers_and_readers_at_once_lose_no_revision(postgres_store, kidx, tmp_path):
    """Six processes re-apply one run with different medians, two delete it, two read: every
    successful apply and delete is one revision, in some order, and nothing fails."""
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    name = "contended"
    processes = {}
    for index in range(6):
        path = write_list(tmp_path / f"w{index}.json", [run_manifest(name, 5000 + index)])
        processes[f"apply{index}"] = start(postgres_store, tmp_path, f"apply{index}", "apply", "-f", str(path))
        if index in (2, 4):
            processes[f"delete{index}"] = start(
                postgres_store, tmp_path, f"delete{index}", "delete", "run", name, "--ignore-not-found")
        if index in (1, 3):
            processes[f"get{index}"] = start(postgres_store, tmp_path, f"get{index}", "get", "runs", "-o", "name")
    results = {label: finished(process, tmp_path, label) for label, process in processes.items()}
    for label, (code, _, err) in results.items():
        assert code == 0 and "Traceback" not in err, (label, err)
    applied = sum(1 for label, (_, out, _) in results.items() if label.startswith("apply") and "created" in out
                  or label.startswith("apply") and "configured" in out)
    deleted = sum(1 for label, (_, out, _) in results.items() if label.startswith("delete") and "deleted" in out)
    assert applied == 6  # every median differs from the one before: no apply is "unchanged"
    history = kidx("history", "run", name, store_path=postgres_store)[1].splitlines()[1:]
    assert len(history) == applied + deleted
    events = [line.split()[1] for line in history]
    assert events.count("applied") == 6 and events.count("deleted") == deleted
    assert events[0] == "applied"


def test_concurrent_batches_all_land(postgres_store, tmp_path):
    """Four processes apply 100 new runs each while two list runs: all 400 land."""
    # the store exists before the readers start (reading a store that does not exist is an error)
    first = write_list(tmp_path / "environment.json", [SEED["environment"]])
    assert kidx_process(postgres_store, "apply", "-f", str(first)).returncode == 0
    processes = {}
    for writer in range(4):
        runs = [run_manifest(f"batch{writer}-{index:03d}", 1000 + index) for index in range(100)]
        path = write_list(tmp_path / f"b{writer}.json", [SEED["protocol"], SEED["environment"], *runs])
        processes[f"b{writer}"] = start(postgres_store, tmp_path, f"b{writer}", "apply", "-f", str(path))
    for reader in range(2):
        processes[f"r{reader}"] = start(postgres_store, tmp_path, f"r{reader}", "get", "runs", "--no-headers")
    results = {label: finished(process, tmp_path, label) for label, process in processes.items()}
    for label, (code, _, err) in results.items():
        assert code == 0 and "Traceback" not in err, (label, err)
    names = kidx_process(postgres_store, "get", "runs", "-o", "name").stdout.splitlines()
    assert len(names) == 400
    protocol_lines = [line for label, (_, out, _) in results.items() if label.startswith("b")
                      for line in out.splitlines() if line.startswith("benchmarkprotocol.")]
    assert sorted(line.rsplit(" ", 1)[1] for line in protocol_lines) == ["created", "unchanged", "unchanged", "unchanged"]


def test_a_waiting_writer_says_so_and_then_lands(postgres_store, kidx, tmp_path):
    import psycopg

    from kidx.store.postgres import LOCK_KEY

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    path = write_list(tmp_path / "one.json", [run_manifest("late", 7)])
    with psycopg.connect(postgres_store.url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))  # another writer, mid-command
        process = start(postgres_store, tmp_path, "late", "apply", "-f", str(path))
        deadline = time.monotonic() + 30
        while "waiting" not in (tmp_path / "late.err").read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process.poll() is None  # still waiting
        holder.rollback()
    code, out, err = finished(process, tmp_path, "late")
    assert (code, out) == (0, f"{RUN}/late created\n")
    assert err.splitlines()[0] == "waiting for another writer to finish with the store…"
    assert "Warning: " in err  # the seed run's workload is not in the store: warned as on any store


def test_a_reader_never_waits_for_a_writer(postgres_store, kidx, tmp_path):
    import psycopg

    from kidx.store.postgres import LOCK_KEY

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    with psycopg.connect(postgres_store.url) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        begun = time.monotonic()
        completed = kidx_process(postgres_store, "get", "runs", "-o", "name")
        assert completed.returncode == 0 and completed.stderr == ""
        assert time.monotonic() - begun < 10


# --- export, import bundle and gc on PostgreSQL -------------------------------------------


def test_a_bulk_apply_loads_every_row_once_by_copy(postgres_store, tmp_path):
    """From 64 rows on, names, labels, references, revisions and objects go by COPY: every
    row lands once, and re-applying with new labels replaces the label rows, not adds to them."""
    from kidx.store.postgres import COPY_FROM

    count = 2 * COPY_FROM
    runs = [run_manifest(f"bulk-{index:03d}", 1000 + index) for index in range(count)]
    references = [field for field, value in SEED["run"]["spec"].items()
                  if field.endswith("Digest") and isinstance(value, str)]
    labels = len(SEED["run"]["metadata"]["labels"])
    path = write_list(tmp_path / "bulk.json", [SEED["protocol"], SEED["environment"], *runs])
    assert kidx_process(postgres_store, "apply", "-f", str(path)).returncode == 0

    def counts() -> list[int]:
        return [sql(postgres_store, f"SELECT count(*) FROM kidx.{table}")[0][0]
                for table in ("entries", "objects", "labels", "refs", "revisions")]

    assert counts() == [count + 2, count + 2, count * labels, count * len(references), count + 2]
    for run in runs:
        run["metadata"]["labels"] = {**run["metadata"]["labels"], "batch": "two"}
    write_list(path, runs)
    assert kidx_process(postgres_store, "apply", "-f", str(path)).returncode == 0
    assert counts() == [count + 2, count + 2, count * (labels + 1), count * len(references), 2 * count + 2]
    listed = kidx_process(postgres_store, "get", "runs", "-l", "batch=two", "-o", "name").stdout.splitlines()
    assert listed == [f"{RUN}/bulk-{index:03d}" for index in range(count)]


def without_export_time(path: Path) -> dict:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    assert "exported" in json.dumps(bundle)
    bundle.pop("exported", None)
    return bundle


def test_a_bundle_exported_from_postgres_restores_anywhere_identically(postgres_store, postgres_server, kidx, tmp_path):
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    path = write_list(tmp_path / "more.json", [run_manifest("second", 99)])
    assert kidx("apply", "-f", str(path), store_path=postgres_store)[0] == 0
    assert kidx("delete", "run", "second", store_path=postgres_store)[0] == 0
    bundle = tmp_path / "backup.kidx.json"
    code, _, err = kidx("export", "-o", str(bundle), store_path=postgres_store)
    assert code == 0, err
    other = f"kidx_restored_{os.getpid()}"
    restored_url = postgres_server.create_database(other)
    try:
        for target in (restored_url, str(tmp_path / "restored")):
            code, _, err = kidx("import", "bundle", str(bundle), store_path=target)
            assert code == 0, err
            for arguments in (("get", "all", "-o", "json"), ("history", "run", "second")):
                assert kidx(*arguments, store_path=target) == kidx(*arguments, store_path=postgres_store)
            again = tmp_path / f"again-{len(target)}.json"
            assert kidx("export", "-o", str(again), store_path=target)[0] == 0
            assert without_export_time(again) == without_export_time(bundle)
    finally:
        postgres_server.drop_database(other)


def test_gc_removes_objects_nothing_refers_to(postgres_store, kidx, tmp_path):
    import hashlib

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    stray = b'{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Workload","spec":{"operation":"stray"}}'
    sql(postgres_store, "INSERT INTO kidx.objects (digest, content) VALUES (%s, %s)",
        (hashlib.sha256(stray).digest(), stray))  # what a push killed before its names leaves
    count = "SELECT count(*) FROM kidx.objects"
    before = sql(postgres_store, count)[0][0]
    code, out, err = kidx("gc", store_path=postgres_store)
    assert code == 0, err
    assert "sha256:" + hashlib.sha256(stray).hexdigest() in out + err
    assert sql(postgres_store, count)[0][0] == before - 1
    assert kidx("gc", store_path=postgres_store)[0] == 0
    assert sql(postgres_store, count)[0][0] == before - 1
    assert kidx("describe", "run", SEED["run"]["metadata"]["name"], store_path=postgres_store)[0] == 0


def test_fsck_finds_and_repairs_a_damaged_reference_index(postgres_store, kidx, tmp_path):
    """A name's labels are its row's label ids (schema 3: nothing to disagree with), its
    references its series: a series id lost is found, and rebuilt from the object."""
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store)[0] == 0
    assert kidx("fsck", store_path=postgres_store)[0] == 0
    references, labels = (sql(postgres_store, f"SELECT * FROM kidx.{view} ORDER BY 1, 2") for view in ("refs", "labels"))
    assert len(references) == 4 and ("liger_version", "0.6.1") in [row[1:] for row in labels]
    sql(postgres_store, "UPDATE kidx.entries SET series_id = NULL")
    code, out, err = kidx("fsck", store_path=postgres_store)
    assert code == 1 and "reference-index" in out and "label-index" not in out, (out, err)
    environment = f"--references=environment/{SEED['environment']['metadata']['name']}"
    assert kidx("get", "runs", environment, "-o", "name", store_path=postgres_store)[1] == ""
    code, out, err = kidx("fsck", "--repair", store_path=postgres_store)
    assert code == 0, (out, err)
    assert kidx("fsck", store_path=postgres_store)[0] == 0
    assert kidx("get", "runs", environment, "-o", "name", store_path=postgres_store)[1] == (
        f"{RUN}/{SEED['run']['metadata']['name']}\n")
    assert sql(postgres_store, "SELECT * FROM kidx.refs ORDER BY 1, 2") == references
    assert sql(postgres_store, "SELECT * FROM kidx.labels ORDER BY 1, 2") == labels


def test_a_statement_timeout_is_said_as_one_not_as_a_lost_connection(postgres_store, kidx, tmp_path):
    """A reader held by a lock another session keeps, past the role's statement_timeout."""
    import psycopg

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=str(postgres_store))[0] == 0
    timed = postgres_store.url + "&options=-c%20statement_timeout%3D300"
    with psycopg.connect(postgres_store.url) as holder:
        holder.execute("LOCK TABLE kidx.info IN ACCESS EXCLUSIVE MODE")  # held until the block ends
        code, out, err = kidx("get", "runs", store_path=timed)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: the store at {postgres_store.url}&options=-c%20statement_timeout%3D300 "
                          "cancelled the statement (canceling statement due to statement timeout")
    assert err.endswith("a statement_timeout set for this role or database, or an administrator, stopped it; "
                        "nothing was changed\n")
    assert "lost the connection" not in err

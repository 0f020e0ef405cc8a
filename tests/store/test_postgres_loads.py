"""A PostgreSQL write's bulk loads run behind it (kidx.store.postgres_loader): the server
stores the first names rows while kidx makes the rest, a load's error is the write's, and a
write given up gives its loads up too, leaving the store as it was."""

from __future__ import annotations

import json
import threading
import time

import pytest
from test_postgres import RUN, SEED, run_manifest, seed_file, sql, write_list

# a COPY into the names table running (seen by another connection)
COPYING_NAMES = ("SELECT p.command FROM pg_stat_progress_copy p JOIN pg_class c ON c.oid = p.relid "
                 "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'kidx' AND c.relname = 'entries'")
HOSTILE = ["back\\slash", "tab\there", "new\nline", "carriage\rreturn", "\\N", "\\.", "ends with \\", "é ☃ 𝄞"]


def counts(store) -> list[int]:
    return [sql(store, f"SELECT count(*) FROM kidx.{table}")[0][0] for table in ("entries", "objects", "series")]


def test_names_rows_go_to_the_server_while_the_rest_are_made(postgres_store, kidx, tmp_path, monkeypatch):
    """With 100 rows a chunk, once 300 rows are made the write's COPY into the names table
    is running already (seen by another connection), the first chunks handed to it."""
    from kidx.store import postgres_rows

    monkeypatch.setattr(postgres_rows, "CHUNK", 100, raising=False)
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    made, rows_made, seen = postgres_rows.PostgresRows._indexed_columns, [], []

    def indexed_columns(self, label_rows, ref_rows):  # once per names row made
        rows_made.append(1)
        if len(rows_made) == 300:
            deadline = time.monotonic() + 10
            while not seen and time.monotonic() < deadline:
                seen.extend(row[0] for row in sql(postgres_store, COPYING_NAMES))
                time.sleep(0.01)
        return made(self, label_rows, ref_rows)

    monkeypatch.setattr(postgres_rows.PostgresRows, "_indexed_columns", indexed_columns)
    runs = [run_manifest(f"streamed-{number:04d}", 3000 + number) for number in range(450)]
    assert kidx("apply", "-f", str(write_list(tmp_path / "runs.json", runs)), store_path=postgres_store).code == 0
    assert seen == ["COPY FROM"], "no COPY into the names table ran while the rows were made"
    listed = kidx("get", "runs", "-o", "name", store_path=postgres_store).out.splitlines()
    assert listed == sorted([f"{RUN}/{SEED['run']['metadata']['name']}"]
                            + [f"{RUN}/streamed-{number:04d}" for number in range(450)])


def test_hostile_strings_in_names_rows_copied_in_many_chunks_read_back_exactly(postgres_store, kidx, tmp_path,
                                                                              monkeypatch):
    """Titles, labels and annotations holding what COPY's text format escapes (backslash,
    tab, newline, carriage return, \\N, \\.) come back as given from rows sent in chunks."""
    from kidx.store import postgres_rows

    monkeypatch.setattr(postgres_rows, "CHUNK", 70, raising=False)
    runs = []
    for number in range(300):
        run = run_manifest(f"hostile-{number:03d}", 5000 + number)
        text = HOSTILE[number % len(HOSTILE)] + f" {number}"
        run["metadata"]["title"] = text
        run["metadata"]["annotations"] = {"note": text, "long": text * 20}
        run["metadata"]["labels"] = {**run["metadata"]["labels"], "n": str(number)}
        runs.append(run)
    path = write_list(tmp_path / "runs.json", [SEED["protocol"], SEED["environment"], *runs])
    assert kidx("apply", "-f", str(path), store_path=postgres_store).code == 0
    code, out, err = kidx("get", "runs", "-o", "json", store_path=postgres_store)
    assert code == 0 and err == ""
    got = {item["metadata"]["name"]: item["metadata"] for item in json.loads(out)["items"]}
    for run in runs:
        metadata = got[run["metadata"]["name"]]
        assert (metadata["title"], metadata["annotations"], metadata["labels"]) == (
            run["metadata"]["title"], run["metadata"]["annotations"], run["metadata"]["labels"])


@pytest.mark.parametrize("table", ["entries", "objects"])
def test_an_error_in_a_load_behind_the_write_fails_the_write_and_stores_nothing(postgres_store, kidx, tmp_path,
                                                                                table):
    """The server refuses a row of a bulk load that runs behind the write (a trigger, here,
    on a late run's names row or object): the apply fails with the server's word, and
    nothing of it is stored."""
    from kidx.identity import digest_of

    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    runs = [run_manifest(f"late-{number:04d}", 7000 + number) for number in range(300)]
    refused = ("NEW.name = 'late-0250'" if table == "entries"
               else f"NEW.digest = '\\x{digest_of(runs[250]).removeprefix('sha256:')}'::bytea")
    sql(postgres_store, "CREATE FUNCTION kidx.refuse() RETURNS trigger LANGUAGE plpgsql AS "
                        "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
    sql(postgres_store, f"CREATE TRIGGER refuse BEFORE INSERT ON kidx.{table} FOR EACH ROW WHEN ({refused}) "
                        "EXECUTE FUNCTION kidx.refuse()")
    before = counts(postgres_store)
    path = write_list(tmp_path / "runs.json", runs)
    code, out, err = kidx("apply", "-f", str(path), store_path=postgres_store)
    assert (code, out) == (1, "")
    assert err.startswith("error: the store at ") and "cannot be used: refused by the test" in err, err
    assert counts(postgres_store) == before
    sql(postgres_store, f"DROP TRIGGER refuse ON kidx.{table}")
    assert kidx("apply", "-f", str(path), store_path=postgres_store).code == 0
    assert counts(postgres_store)[:2] == [before[0] + 300, before[1] + 300]


def test_a_write_given_up_while_its_loads_run_leaves_the_store_as_it_was(postgres_store, kidx, tmp_path,
                                                                       monkeypatch):
    """Ctrl-C while the rows are made, the objects' and first rows' COPYs running: the
    write rolls back, no load thread is left, and the next write stores everything."""
    from kidx.store import postgres_rows

    monkeypatch.setattr(postgres_rows, "CHUNK", 50, raising=False)
    assert kidx("apply", "-f", str(seed_file(tmp_path)), store_path=postgres_store).code == 0
    before = counts(postgres_store)
    threads = threading.active_count()
    made = postgres_rows.PostgresRows._indexed_columns
    calls = []

    def indexed_columns(self, label_rows, ref_rows):
        calls.append(1)
        if len(calls) == 200:
            raise KeyboardInterrupt
        return made(self, label_rows, ref_rows)

    monkeypatch.setattr(postgres_rows.PostgresRows, "_indexed_columns", indexed_columns)
    runs = [run_manifest(f"given-up-{number:04d}", 9000 + number) for number in range(400)]
    path = write_list(tmp_path / "runs.json", runs)
    assert kidx("apply", "-f", str(path), store_path=postgres_store) == (130, "", "error: interrupted\n")
    assert counts(postgres_store) == before
    assert threading.active_count() == threads
    monkeypatch.setattr(postgres_rows.PostgresRows, "_indexed_columns", made)
    assert kidx("apply", "-f", str(path), store_path=postgres_store).code == 0
    assert counts(postgres_store)[:2] == [before[0] + 400, before[1] + 400]


def test_rows_handed_after_a_statement_go_by_a_new_copy_in_order(postgres_store, monkeypatch):
    """A statement of the write while a stream is open waits for the rows handed so far
    (the stream's COPY ends); rows appended after go by a new COPY, all in order."""
    from kidx.store import postgres_rows
    from kidx.store.postgres import Connection

    monkeypatch.setattr(postgres_rows, "CHUNK", 10, raising=False)
    connection = Connection(postgres_store.url)
    try:
        connection.execute("CREATE TEMPORARY TABLE streamed (n integer, t text)")
        rows = postgres_rows.StreamedRows(connection, "streamed", "n, t", lambda row: row)
        for number in range(25):
            rows.append((number, HOSTILE[number % len(HOSTILE)]))
        assert connection.execute("SELECT count(*) FROM streamed").fetchone() == (20,)  # two chunks handed
        for number in range(25, 40):
            rows.append((number, HOSTILE[number % len(HOSTILE)]))
        rows.close()
        assert rows.sent == 40
        assert connection.execute("SELECT n, t FROM streamed ORDER BY n").fetchall() == [
            (number, HOSTILE[number % len(HOSTILE)]) for number in range(40)]
    finally:
        connection.close()

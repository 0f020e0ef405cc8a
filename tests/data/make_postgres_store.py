"""Write the PostgreSQL store of an older catalog schema kept in tests/data/postgres-schema-VERSION/
(see its README.md), with the kidx on the path.

    python tests/data/make_postgres_store.py VERSION OUT

It starts a throwaway server (tests/pg_server.py), writes the same history as the SQLite
test stores (make_sqlite_store.write_history) and saves every table of the ``kidx``
schema to OUT as PostgreSQL's COPY text (``TABLE name (columns)``, the rows, ``\\.``);
``load`` puts them back into a database where that version's tables were made. It must
be run by a kidx that writes that schema (1: kidx up to commit a478ae8), and refuses to
run with another one.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = next(folder for folder in HERE.parents if (folder / "pyproject.toml").exists())  # the checkout
# the tables in an order their rows can be loaded in, and the columns saved
TABLES = ("info", "objects", "entries", "labels", "refs", "revisions", "spec_leaves", "spec_indexed")


def dump(url: str) -> str:
    """Every table of the store at ``url`` as COPY text, each ordered by all its columns."""
    import psycopg

    parts = []
    with psycopg.connect(url) as connection:
        for table in TABLES:
            columns = [row[0] for row in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'kidx' AND table_name = %s "
                "ORDER BY ordinal_position", (table,))]
            listed = ", ".join(columns)
            parts.append(f"TABLE {table} ({listed})\n")
            with connection.cursor() as cursor, cursor.copy(
                    f"COPY (SELECT {listed} FROM kidx.{table} ORDER BY {listed}) TO STDOUT") as copy:
                parts.extend(bytes(block).decode() for block in copy)
            parts.append("\\.\n")
    return "".join(parts)


def load(connection, text: str) -> None:
    """Rows saved by ``dump`` into the tables of a store of their version (made already)."""
    lines = iter(text.split("\n"))  # COPY text writes a newline in a value as \n
    for head in lines:
        if not head:
            continue
        table, _, columns = head.removeprefix("TABLE ").partition(" ")
        rows = []
        for line in lines:  # a row's text never is "\." alone: COPY writes a backslash as two
            if line == "\\.":
                break
            rows.append(line + "\n")
        with connection.cursor() as cursor, cursor.copy(f"COPY kidx.{table} {columns} FROM STDIN") as copy:
            copy.write("".join(rows))


def main() -> int:
    from kidx.store import postgres

    version, out = sys.argv[1], Path(sys.argv[2])
    if postgres.SCHEMA_VERSION != version:
        sys.exit(f"this kidx writes schema {postgres.SCHEMA_VERSION}; run it with one that writes schema {version}")
    sys.path.append(str(REPO / "tests"))
    sys.path.append(str(HERE))
    from make_sqlite_store import write_history
    from pg_server import PostgresServer, server_binaries

    binaries = server_binaries()
    if binaries is None:
        sys.exit("no PostgreSQL server binaries (initdb, pg_ctl) found")
    server = PostgresServer(binaries)
    server.start()
    try:
        url = server.create_database("kidx_schema")
        write_history(url)
        out.write_text(dump(url), encoding="utf-8")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the store of an older catalog schema kept in tests/data/sqlite-schema-VERSION/
(see its README.md), with the kidx on the path.

    python tests/data/make_sqlite_store.py VERSION OUT

It must be run by a kidx that writes that schema (1: kidx up to commit 3084932; 2: from
3084932 up to ceb9452), and refuses to run with another one.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = next(folder for folder in HERE.parents if (folder / "pyproject.toml").exists())  # the checkout
SEED_BUNDLE = REPO / "docs" / "examples" / "seed-bundle.json"


def kidx(store: Path | str, *args: str, stdin: str | None = None) -> None:
    """kidx on ``store`` (a folder, or a PostgreSQL URL)."""
    location = str(store.resolve()) if isinstance(store, Path) else store
    # run outside the repository, so that the kidx on PYTHONPATH is the one that runs
    subprocess.run([sys.executable, "-m", "kidx", *args, "--store", location], input=stdin, text=True,
                   check=True, stdout=subprocess.DEVNULL, cwd="/")


def main() -> int:
    from kidx.store import sqlite_catalog

    version, store = sys.argv[1], Path(sys.argv[2])
    if sqlite_catalog.SCHEMA_VERSION != version:
        sys.exit(f"this kidx writes schema {sqlite_catalog.SCHEMA_VERSION}; run it with one that writes schema {version}")
    shutil.rmtree(store, ignore_errors=True)
    write_history(store)
    connection = sqlite3.connect(store / "catalog.sqlite")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    for leftover in ("catalog.sqlite-wal", "catalog.sqlite-shm"):
        (store / leftover).unlink(missing_ok=True)
    return 0


def write_history(store: Path | str) -> None:
    """The test stores' contents (also tests/data/make_postgres_store.py's): the seed, a second
    revision of its run, generated runs, a metadata-only change, a workload deleted and
    applied again, a run deleted."""
    sys.path.append(str(REPO / "bench"))  # the generator (after the kidx already imported)
    from bench_store import generate

    seed = SEED_BUNDLE.read_text()
    kidx(store, "apply", "-f", str(SEED_BUNDLE))
    kidx(store, "apply", "-f", "-", stdin=seed.replace('"0.6.1"', '"0.6.2"'))  # a second revision of the run
    data = generate(12, 20261201, n_workloads=3, n_impls=2)
    items = data.shared + data.runs
    kidx(store, "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    run = data.runs[0]
    run["metadata"]["annotations"]["kernelindex.dev/source-line"] = "9999"  # metadata only: same digest
    kidx(store, "apply", "-f", "-", stdin=json.dumps(run))
    workload = next(item for item in data.shared if item["kind"] == "Workload")
    kidx(store, "delete", "workload", workload["metadata"]["name"])  # runs still refer to it
    kidx(store, "apply", "-f", "-", stdin=json.dumps(workload))  # and back: applied, deleted, applied
    kidx(store, "delete", "run", data.runs[1]["metadata"]["name"])  # gone, with its history


if __name__ == "__main__":
    sys.exit(main())

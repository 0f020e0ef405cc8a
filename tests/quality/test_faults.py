"""Fault injection: kidx killed (SIGKILL) at each stage of apply, import liger, delete, gc,
export, import bundle and pull leaves a store that fsck finds consistent, holding all of the
command or none of it.

``KIDX_TEST_CRASH_AT=STAGE`` (kidx/store/faults.py) makes kidx kill itself at a named
point: ``objects`` (first object file written or removed), ``planned`` (a pull has
decided, holding the write lock), ``catalog`` (changes made,
not committed), ``commit`` (just committed), ``after-commit`` (work done, outcome not
printed), ``export-written`` (bundle written to its temporary file). A command that does
not reach the stage runs to its end, and then what it reported must be what is stored.
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
from conftest import LIGER_DATA, REPO, SEED_BUNDLE, SEED_RUN_NAME

SEED = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))
CUTEDSL = str(LIGER_DATA / "all_benchmark_data_cutedsl.csv")
STAGES = ("objects", "planned", "catalog", "commit", "after-commit", "export-written")
KILLED = -signal.SIGKILL


def kidx_process(store: Path, *args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"}
    environment.pop("KIDX_TEST_CRASH_AT", None)
    if crash_at is not None:
        environment["KIDX_TEST_CRASH_AT"] = crash_at
    return subprocess.run([sys.executable, "-m", "kidx", *args], capture_output=True, text=True,
                          env=environment, cwd=REPO, timeout=120)


def state(store: Path) -> dict:
    """What the catalog holds, times left out (a re-run records other times)."""
    connection = sqlite3.connect(store / "catalog.sqlite")
    try:
        return {
            "names": sorted(connection.execute("SELECT kind, name, digest, title, labels, generation FROM objects")),
            "revisions": list(connection.execute(
                "SELECT kind, name, event, digest, labels, generation FROM revisions ORDER BY id")),
        }
    finally:
        connection.close()


def fsck(store: Path) -> dict:
    result = kidx_process(store, "fsck", "-o", "json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["problems"] == [], report["problems"]
    assert {note["check"] for note in report["notes"]} <= {"orphaned-object", "temporary-file", "dangling-reference"}
    return report


def batch_file(folder: Path) -> Path:
    """The seed's protocol relabelled, and 30 new runs."""
    protocol = json.loads(json.dumps(SEED["protocol"]))
    protocol["metadata"]["labels"] = {"tier": "gold"}
    runs = []
    for index in range(30):
        run = json.loads(json.dumps(SEED["run"]))
        run["metadata"]["name"] = f"fault-run-{index:02d}"
        run["spec"]["timing"]["latencyNs"]["median"] = 1000 + index
        runs.append(run)
    path = folder / "batch.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [protocol, *runs]}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A store holding the seed, with one orphaned object and a stray temporary file."""
    folder = tmp_path_factory.mktemp("fault-template")
    store = folder / "store"
    assert kidx_process(store, "apply", "-f", str(SEED_BUNDLE)).returncode == 0
    orphan = b'{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Workload","spec":{"operation":"orphan"}}'
    import hashlib

    hexdigest = hashlib.sha256(orphan).hexdigest()
    (store / "objects" / "sha256" / hexdigest[:2]).mkdir(exist_ok=True)
    (store / "objects" / "sha256" / hexdigest[:2] / hexdigest[2:]).write_bytes(orphan)
    (store / "objects" / "sha256" / hexdigest[:2] / ".tmp-1-00000000-1").write_bytes(b"{")
    return store


@pytest.fixture(scope="module")
def bundle(template) -> Path:
    """An export of the template after an import of the cuteDSL CSV: restoring it into the
    template leaves the seed's names unchanged and restores the rest."""
    store = template.parent / "bundle-source"
    shutil.copytree(template, store)
    assert kidx_process(store, "import", "liger", CUTEDSL).returncode == 0
    path = template.parent / "cutedsl.kidx.json"
    assert kidx_process(store, "export", "-o", str(path)).returncode == 0
    return path


def commands(folder: Path, bundle: Path) -> dict[str, list[str]]:
    folder.mkdir(exist_ok=True)
    return {
        "import-bundle": ["import", "bundle", str(bundle)],
        "apply": ["apply", "-f", str(batch_file(folder))],
        "import": ["import", "liger", CUTEDSL],
        "delete": ["delete", f"run/{SEED_RUN_NAME}", "env/liger-bench-nvidia-h100-80gb-hbm3"],
        "gc": ["gc"],
        "export": ["export", "-o", str(folder / "backup.kidx.json")],
        "pull": ["pull", str(bundle.parent / "bundle-source")],  # the template plus the cuteDSL import
    }


_uninterrupted: dict[str, tuple[Path, subprocess.CompletedProcess]] = {}


def uninterrupted(command: str, template: Path, bundle: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """The store after the command ran undisturbed on a copy of the template, and its output
    (once per command)."""
    if command not in _uninterrupted:
        folder = template.parent / f"reference-{command}"
        shutil.copytree(template, folder / "store")
        completed = kidx_process(folder / "store", *commands(folder, bundle)[command])
        assert completed.returncode == 0, completed.stderr
        _uninterrupted[command] = (folder / "store", completed)
    return _uninterrupted[command]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("command", ["apply", "import", "delete", "gc", "export", "import-bundle", "pull"])
def test_killed_at_each_stage(command, stage, template, bundle, tmp_path):
    arguments = commands(tmp_path / "crash", bundle)[command]
    reference, completed = uninterrupted(command, template, bundle)
    before_store = tmp_path / "store"
    shutil.copytree(template, before_store)
    before = state(before_store)

    crashed = kidx_process(before_store, *arguments, crash_at=stage)
    assert "Traceback" not in crashed.stderr
    assert crashed.returncode in (KILLED, 0), crashed.stderr
    fsck(before_store)
    after = state(before_store)
    if crashed.returncode == 0:
        # the stage is not part of this command: it ran to its end and reported the truth
        assert (crashed.stdout, after) == (completed.stdout, state(reference))
    elif stage in ("objects", "planned", "catalog"):
        assert after == before  # nothing of it committed
    else:
        assert after == state(reference)  # all of it committed
    if command == "gc" and crashed.returncode == KILLED and stage == "objects":
        # killed after its first removal: the rest is still there for the next gc
        assert kidx_process(before_store, "gc").stdout.count(" removed") == 1
    if command == "export":
        bundle = tmp_path / "crash" / "backup.kidx.json"
        if crashed.returncode == KILLED and stage == "export-written":
            assert not bundle.exists()  # never a partial bundle under the name asked for
        else:
            assert json.loads(bundle.read_bytes())["counts"]["names"] == 3
    # running the command again reports what the store now holds, and ends in the same state
    committed = crashed.returncode == 0 or stage in ("commit", "after-commit")
    again = kidx_process(before_store, *commands(tmp_path / "again", bundle)[command])
    if command in ("apply", "import", "import-bundle", "pull") and committed:
        assert again.stdout.splitlines() == [f"{line.rsplit(' ', 1)[0]} unchanged" for line in completed.stdout.splitlines()]
    elif command == "delete" and committed:
        assert again.returncode == 1 and again.stdout == "" and again.stderr.count("(NotFound)") == 2
    elif command in ("apply", "import", "import-bundle", "delete", "pull"):
        assert (again.returncode, again.stdout) == (0, completed.stdout)
    assert again.returncode == 0 or command == "delete", again.stderr
    assert state(before_store) == state(reference)
    fsck(before_store)

"""kidx push / kidx pull between stores: folder <-> folder and folder <-> PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LIGER_DATA, REPO, SEED_RUN_NAME

LIGER = LIGER_DATA
LIGER_FILES = [LIGER / "all_benchmark_data.csv", LIGER / "all_benchmark_data_cutedsl.csv",
               LIGER / "all_benchmark_data_cutile.csv"]
P, E, R = "benchmarkprotocol.kernelindex.dev", "executionenvironment.kernelindex.dev", "benchmarkrun.kernelindex.dev"
SEED_PROTOCOL, SEED_ENVIRONMENT = "liger-bench-do-bench-backward", "liger-bench-nvidia-h100-80gb-hbm3"


@pytest.fixture(params=["folder", "postgresql"])
def remote(request, tmp_path):
    """The other store: a folder, or a PostgreSQL database."""
    if request.param == "folder":
        yield tmp_path / "remote"
    else:
        yield request.getfixturevalue("postgres_store")


@pytest.fixture
def local(tmp_path) -> Path:
    return tmp_path / "local"


@pytest.fixture
def seeded(kidx, local, seed_bundle, tmp_path) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed_bundle), encoding="utf-8")
    assert kidx("apply", "-f", str(path), store_path=local)[0] == 0
    return local


def with_median(kidx, store, median: int) -> None:
    out = kidx("get", "run", SEED_RUN_NAME, "-o", "json", store_path=store)[1]
    run = json.loads(out)
    run["spec"]["timing"]["latencyNs"]["median"] = median
    for key in ("digest", "creationTimestamp", "generation"):
        run["metadata"].pop(key)
    code, _, err = kidx("apply", "-f", "-", stdin=json.dumps(run), store_path=store)
    assert code == 0, err


def digest_of_run(kidx, store) -> str:
    return json.loads(kidx("get", "run", SEED_RUN_NAME, "-o", "json", store_path=store)[1])["metadata"]["digest"]


def state(store) -> dict:
    """Everything a store says about its names: entries, every revision, the objects."""
    from kidx.kinds.registry import registry
    from kidx.store.catalog import CatalogQuery
    from kidx.store.store import Store

    the_store = Store(str(store))
    try:
        catalog = the_store.catalog()
        entries, revisions = {}, {}
        for info in registry().kinds:
            for entry in catalog.list(CatalogQuery(kind=info.kind)):
                entries[(entry.kind, entry.name)] = entry._replace(id=None)
                revisions[(entry.kind, entry.name)] = catalog.revisions(entry.kind, entry.name)
        objects = sorted(the_store.objects.digests())
    finally:
        the_store.close()
    return {"entries": entries, "revisions": revisions, "objects": objects}


SEED_CREATED = f"{P}/{SEED_PROTOCOL} created\n{R}/{SEED_RUN_NAME} created\n{E}/{SEED_ENVIRONMENT} created\n"
SEED_UNCHANGED = SEED_CREATED.replace(" created", " unchanged")


def test_push_copies_everything_then_reports_it_unchanged(kidx, seeded, remote):
    assert kidx("push", str(remote), store_path=seeded) == (
        0, SEED_CREATED, f"{remote}: copied 3 objects; 3 names changed, 0 unchanged\n",
    )
    assert state(remote) == state(seeded)
    assert kidx("push", str(remote), store_path=seeded) == (
        0, SEED_UNCHANGED, f"{remote}: copied 0 objects; 0 names changed, 3 unchanged\n",
    )
    assert kidx("get", "run", SEED_RUN_NAME, "-o", "name", store_path=remote) == (0, f"{R}/{SEED_RUN_NAME}\n", "")


def test_pull_is_push_the_other_way(kidx, seeded, remote, tmp_path):
    assert kidx("push", str(remote), store_path=seeded)[0] == 0
    other = tmp_path / "other"
    assert kidx("pull", str(remote), store_path=other) == (
        0, SEED_CREATED, f"{other}: copied 3 objects; 3 names changed, 0 unchanged\n",
    )
    assert state(other) == state(seeded)


def test_dry_run_shows_the_plan_and_writes_nothing(kidx, seeded, remote):
    assert kidx("push", str(remote), "--dry-run", store_path=seeded) == (
        0,
        SEED_CREATED.replace("created\n", "created (dry run)\n"),
        f"{remote}: would copy 3 objects; 3 names changed, 0 unchanged\n",
    )
    assert not remote.exists()


def test_referenced_objects_travel_with_the_selected_runs(kidx, seeded, remote):
    assert kidx("push", str(remote), "runs", store_path=seeded) == (
        0, f"{R}/{SEED_RUN_NAME} created\n{P}/{SEED_PROTOCOL} created\n{E}/{SEED_ENVIRONMENT} created\n",
        f"{remote}: copied 3 objects; 3 names changed, 0 unchanged\n",
    )
    assert state(remote) == state(seeded)
    assert kidx("describe", "run", SEED_RUN_NAME, store_path=remote)[0] == 0


def test_changes_fast_forward_with_their_revisions(kidx, seeded, remote):
    assert kidx("push", str(remote), store_path=seeded)[0] == 0
    with_median(kidx, seeded, 12345)
    assert kidx("delete", "environment", SEED_ENVIRONMENT, store_path=seeded)[0] == 0
    assert kidx("push", str(remote), store_path=seeded) == (
        0,
        f"{P}/{SEED_PROTOCOL} unchanged\n{R}/{SEED_RUN_NAME} configured\n{E}/{SEED_ENVIRONMENT} deleted\n",
        f"{remote}: copied 1 object; 2 names changed, 1 unchanged\n",
    )
    assert state(remote) == state(seeded)
    assert kidx("history", "run", SEED_RUN_NAME, store_path=remote) == kidx(
        "history", "run", SEED_RUN_NAME, store_path=seeded)


def test_a_name_changed_on_both_sides_is_a_conflict(kidx, seeded, remote):
    assert kidx("push", str(remote), store_path=seeded)[0] == 0
    with_median(kidx, seeded, 111)
    with_median(kidx, remote, 222)
    ours, theirs = digest_of_run(kidx, seeded), digest_of_run(kidx, remote)
    before = state(remote)
    assert kidx("push", str(remote), store_path=seeded) == (
        1,
        "",
        f"error: {R}/{SEED_RUN_NAME} changed in both stores since they last agreed: "
        f"{seeded} has {ours}, {remote} has {theirs}\n"
        f"error: 1 name changed in both stores; nothing was copied (--force gives {remote} the state from {seeded})\n",
    )
    assert state(remote) == before
    assert kidx("push", str(remote), "--force", "--dry-run", store_path=seeded)[1] == (
        f"{P}/{SEED_PROTOCOL} unchanged (dry run)\n{R}/{SEED_RUN_NAME} forced (dry run)\n"
        f"{E}/{SEED_ENVIRONMENT} unchanged (dry run)\n"
    )
    assert state(remote) == before
    assert kidx("push", str(remote), "--force", store_path=seeded)[0] == 0
    assert digest_of_run(kidx, remote) == ours
    events = [line.split()[1:3] for line in kidx("history", "run", SEED_RUN_NAME, store_path=remote)[1].splitlines()[1:]]
    assert events == [["applied", "1"], ["applied", "2"], ["applied", "3"]]  # its own change is kept
    assert kidx("push", str(remote), store_path=seeded)[1] == SEED_UNCHANGED
    # they agree again: a later change on one side is no conflict
    with_median(kidx, seeded, 444)
    assert kidx("push", str(remote), store_path=seeded) == (
        0, SEED_UNCHANGED.replace(f"{SEED_RUN_NAME} unchanged", f"{SEED_RUN_NAME} configured"),
        f"{remote}: copied 1 object; 1 name changed, 2 unchanged\n",
    )
    assert digest_of_run(kidx, remote) == digest_of_run(kidx, seeded)
    assert kidx("delete", "run", SEED_RUN_NAME, store_path=seeded)[0] == 0
    assert kidx("push", str(remote), "run", SEED_RUN_NAME, store_path=seeded) == (
        0, f"{R}/{SEED_RUN_NAME} deleted\n", f"{remote}: copied 0 objects; 1 name changed, 0 unchanged\n",
    )
    assert [line.split()[1] for line in kidx("history", "run", SEED_RUN_NAME, store_path=remote)[1].splitlines()[1:]] == [
        "applied", "applied", "applied", "applied", "deleted"]


def with_labels(kidx, store, labels: dict, annotations: dict | None = None) -> None:
    run = json.loads(kidx("get", "run", SEED_RUN_NAME, "-o", "json", store_path=store)[1])
    run["metadata"]["labels"] = {**run["metadata"].get("labels", {}), **labels}
    if annotations is not None:
        run["metadata"]["annotations"] = annotations
    for key in ("digest", "creationTimestamp", "generation"):
        run["metadata"].pop(key)
    code, _, err = kidx("apply", "-f", "-", stdin=json.dumps(run), store_path=store)
    assert code == 0, err


def test_a_conflict_in_labels_or_annotations_only_says_what_differs(kidx, seeded, remote):
    """Both stores hold the same object; what changed on both sides is metadata: the
    conflict names each differing label and annotation instead of two equal digests."""
    assert kidx("push", str(remote), store_path=seeded)[0] == 0
    digest = digest_of_run(kidx, seeded)
    with_labels(kidx, seeded, {"tier": "gold"}, {"note": "rerun"})
    with_labels(kidx, remote, {"tier": "silver", "owner": "ci"})
    before = state(remote)
    code, out, err = kidx("push", str(remote), store_path=seeded)
    assert (code, out) == (1, "")
    assert err == (
        f"error: {R}/{SEED_RUN_NAME} changed in both stores since they last agreed: both have {digest}, but "
        f"label owner is (none) in {seeded}, 'ci' in {remote}; label tier is 'gold' in {seeded}, 'silver' in "
        f"{remote}; annotation note is 'rerun' in {seeded}, (none) in {remote}\n"
        f"error: 1 name changed in both stores; nothing was copied (--force gives {remote} the state from {seeded})\n"
    )
    assert state(remote) == before
    code, out, err = kidx("pull", str(remote), store_path=seeded)
    assert code == 1 and f"both have {digest}, but label owner is 'ci' in {remote}, (none) in {seeded}" in err


def test_a_source_missing_an_object_is_a_clear_error_naming_it(kidx, seeded, remote):
    """The run's object file was lost from the source (a KeyError once): push says which
    object of which name is missing, where, suggests fsck, and writes nothing."""
    from conftest import SEED_RUN_DIGEST

    object_file = seeded / "objects" / "sha256" / SEED_RUN_DIGEST[7:9] / SEED_RUN_DIGEST[9:]
    object_file.unlink()
    for extra in ((), ("--dry-run",)):
        code, out, err = kidx("push", str(remote), *extra, store_path=seeded)
        assert (code, out) == (1, "")
        assert err.splitlines()[-1] == (
            f'error: benchmarkruns.kernelindex.dev "{SEED_RUN_NAME}" (revision 1) names object {SEED_RUN_DIGEST}, '
            f"which is missing: {object_file}; nothing was copied (run 'kidx fsck --store {seeded}' to see what "
            "else is damaged)"
        )
        assert "unexpected" not in err and "KeyError" not in err
    assert not remote.exists()


def test_the_same_objects_applied_to_both_stores_agree(kidx, seeded, remote, seed_bundle, tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed_bundle), encoding="utf-8")
    assert kidx("apply", "-f", str(path), store_path=remote)[0] == 0
    assert kidx("push", str(remote), store_path=seeded) == (
        0, SEED_UNCHANGED, f"{remote}: copied 0 objects; 0 names changed, 3 unchanged\n",
    )


def test_a_newer_destination_is_left_alone(kidx, seeded, remote):
    assert kidx("push", str(remote), store_path=seeded)[0] == 0
    with_median(kidx, remote, 333)
    theirs = digest_of_run(kidx, remote)
    assert kidx("push", str(remote), store_path=seeded)[1] == SEED_UNCHANGED
    assert digest_of_run(kidx, remote) == theirs


def test_a_store_cannot_be_pushed_to_itself(kidx, seeded):
    assert kidx("push", str(seeded), store_path=seeded) == (
        1, "", f"error: the source and the destination are the same store ({seeded})\n",
    )


def test_an_unknown_name_is_not_found(kidx, seeded, remote):
    code, out, err = kidx("push", str(remote), "run", "nope", store_path=seeded)
    assert (code, out) == (1, "")
    assert err == 'Error (NotFound): benchmarkruns.kernelindex.dev "nope" not found\n'
    assert not remote.exists()


# --- a whole import, round trip, and interrupted ------------------------------------------


@pytest.fixture(scope="module")
def liger_store(tmp_path_factory) -> Path:
    """The three published Liger files, imported once into a folder store."""
    store = tmp_path_factory.mktemp("liger") / "store"
    completed = subprocess.run(
        [sys.executable, "-m", "kidx", "import", "liger", *map(str, LIGER_FILES), "--store", str(store)],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "NO_COLOR": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    return store


@pytest.mark.slow
def test_a_liger_import_round_trips_through_postgres(kidx, liger_store, postgres_store, tmp_path):
    code, out, err = kidx("push", str(postgres_store), store_path=liger_store)
    assert code == 0, err
    assert len(out.splitlines()) == 7 + 6 + 114 + 329 + 3897
    assert err == f"{postgres_store}: copied 4353 objects; 4353 names changed, 0 unchanged\n"
    back = tmp_path / "back"
    code, _, err = kidx("pull", str(postgres_store), store_path=back)
    assert (code, err) == (0, f"{back}: copied 4353 objects; 4353 names changed, 0 unchanged\n")
    original = state(liger_store)
    assert state(postgres_store) == original
    assert state(back) == original
    code, out, err = kidx("push", str(postgres_store), store_path=back)
    assert (code, err) == (0, f"{postgres_store}: copied 0 objects; 0 names changed, 4353 unchanged\n")
    assert kidx("get", "runs", "-l", "kernel=llama4_rope", "--no-headers", store_path=back) == kidx(
        "get", "runs", "-l", "kernel=llama4_rope", "--no-headers", store_path=liger_store)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.4, 0.9, 1.6])
def test_a_killed_push_leaves_both_stores_usable_and_a_rerun_completes_it(liger_store, postgres_store, tmp_path,
                                                                          delay):
    environment = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "kidx", "push", str(postgres_store), "--store", str(liger_store)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, env=environment)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = state(postgres_store) if postgres_store.exists() else {"entries": {}, "revisions": {}, "objects": []}
    assert partial["entries"] in ({}, state(liger_store)["entries"])  # names all or nothing
    from kidx.store.store import Store

    the_store = Store(str(postgres_store))
    try:
        for digest in partial["objects"]:
            assert the_store.objects.verify(digest)
    finally:
        the_store.close()
    completed = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=environment)
    assert completed.returncode == 0, completed.stderr
    assert state(postgres_store) == state(liger_store)


def test_objects_that_earlier_revisions_refer_to_come_too(kidx, local, remote, seed_bundle):
    def workload(dtype: str) -> dict:
        return {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
                "spec": {"operation": "rope", "dtype": dtype}}

    run = json.loads(json.dumps(seed_bundle["run"]))
    run["metadata"] = {"name": "r"}
    run["spec"].pop("workloadDigest")
    run["spec"]["workloadRef"] = {"name": "w"}
    digests = []
    for dtype in ("bf16", "fp16"):
        documents = [seed_bundle["protocol"], seed_bundle["environment"], workload(dtype), run]
        code, _, err = kidx("apply", "-f", "-", stdin="".join(json.dumps(d) for d in documents), store_path=local)
        assert code == 0, err
        digests.append(json.loads(kidx("get", "workload", "w", "-o", "json", store_path=local)[1])["metadata"]["digest"])
    assert kidx("delete", "workload", "w", store_path=local)[0] == 0  # no name brings its history along
    assert kidx("push", str(remote), "run/r", store_path=local)[0] == 0
    from kidx.store.store import Store

    the_store = Store(str(remote))
    try:
        assert all(the_store.objects.exists(digest) for digest in digests)
    finally:
        the_store.close()
    assert kidx("history", "run", "r", "--revision", "1", "-o", "json", store_path=remote) == kidx(
        "history", "run", "r", "--revision", "1", "-o", "json", store_path=local)

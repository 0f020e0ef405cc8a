"""kidx delete end to end: selection forms, result lines, NotFound, revisions and files kept."""

from __future__ import annotations

import json

import pytest
from conftest import SEED_BUNDLE, SEED_PROTOCOL_DIGEST, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.identity import digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

API = "kernelindex.dev/v1alpha1"
PROTOCOL_NAME = "liger-bench-do-bench-backward"


def workload(name, operation=None, labels=None):
    metadata = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata, "spec": {"operation": operation or name}}


WORKLOADS = [
    workload("wl-a", labels={"app": "web"}),
    workload("wl-b", labels={"app": "api"}),
    workload("wl-c"),
]


def deleted(name, kind="workload"):
    return f'{kind}.kernelindex.dev "{name}" deleted\n'


def not_found(name, plural="workloads"):
    return f'Error (NotFound): {plural}.kernelindex.dev "{name}" not found\n'


@pytest.fixture
def populated(kidx):
    assert kidx("apply", "-f", "-", stdin="".join(json.dumps(w) for w in WORKLOADS))[0] == 0
    return kidx


def remaining(kidx, *types):
    code, out, err = kidx("get", *(types or ("all",)), "-o", "name")
    assert code == 0, err
    return [line.split("/", 1)[1] for line in out.splitlines()]


def store_of(store):
    from kidx.store.store import Store

    return Store(store)


# ---------------------------------------------------------------- selection forms


def test_delete_type_and_names(populated):
    assert populated("delete", "wl", "wl-a", "wl-c") == (0, deleted("wl-a") + deleted("wl-c"), "")
    assert remaining(populated) == ["wl-b"]


@pytest.mark.parametrize("spelling", ["workloads", "workload", "wl", "Workload", "WORKLOADS", "workloads.kernelindex.dev"])
def test_delete_type_spellings(populated, spelling):
    assert populated("delete", spelling, "wl-b") == (0, deleted("wl-b"), "")


def test_delete_type_slash_name(populated, kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert populated("delete", "wl/wl-b", f"bp/{PROTOCOL_NAME}") == (
        0, deleted("wl-b") + deleted(PROTOCOL_NAME, "benchmarkprotocol"), "",
    )
    assert remaining(populated, "wl,bp") == ["wl-a", "wl-c"]


def test_delete_from_file(populated, tmp_path):
    path = tmp_path / "some.yaml"
    path.write_text(
        f"apiVersion: {API}\nkind: Workload\nmetadata:\n  name: wl-c\nspec:\n  operation: whatever\n---\n"
        f"apiVersion: {API}\nkind: Workload\nmetadata:\n  name: wl-a\nspec:\n  operation: wl-a\n"
    )
    assert populated("delete", "-f", str(path)) == (0, deleted("wl-c") + deleted("wl-a"), "")
    assert remaining(populated) == ["wl-b"]


def test_delete_from_the_file_that_created_them(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert kidx("delete", "-f", str(SEED_BUNDLE)) == (
        0,
        deleted(SEED_RUN_NAME, "benchmarkrun")
        + deleted(PROTOCOL_NAME, "benchmarkprotocol")
        + deleted("liger-bench-nvidia-h100-80gb-hbm3", "executionenvironment"),
        "",
    )
    assert kidx("get", "all") == (0, "", "No resources found\n")


def test_delete_by_selector(populated):
    assert populated("delete", "wl", "-l", "app") == (0, deleted("wl-a") + deleted("wl-b"), "")
    assert remaining(populated) == ["wl-c"]


def test_delete_by_selector_matching_nothing(populated):
    assert populated("delete", "wl", "-l", "app=none") == (0, "No resources found\n", "")
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]


def test_delete_all(populated):
    assert populated("delete", "wl", "--all") == (0, deleted("wl-a") + deleted("wl-b") + deleted("wl-c"), "")
    assert populated("get", "wl") == (0, "", "No resources found\n")


def test_delete_all_when_empty_says_no_resources_found_on_stdout(populated, store):
    assert populated("delete", "impl", "--all") == (0, "No resources found\n", "")


def test_delete_all_on_a_missing_store_creates_nothing(kidx, store):
    assert kidx("delete", "runs", "--all") == (0, "No resources found\n", "")
    assert kidx("delete", "runs", "nope") == (1, "", not_found("nope", "benchmarkruns"))
    assert not store.exists()


def test_delete_output_name(populated):
    assert populated("delete", "wl", "wl-a", "-o", "name") == (0, "workload.kernelindex.dev/wl-a\n", "")


def test_delete_output_other_than_name(populated):
    assert populated("delete", "wl", "wl-a", "-o", "yaml") == (
        1, "", "error: unable to match a printer suitable for the output format \"yaml\", allowed formats are: name\n",
    )
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]


def test_delete_dry_run(populated, store):
    assert populated("delete", "wl", "wl-a", "wl-b", "--dry-run") == (
        0, 'workload.kernelindex.dev "wl-a" deleted (dry run)\nworkload.kernelindex.dev "wl-b" deleted (dry run)\n', "",
    )
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]
    assert [r.event for r in store_of(store).catalog().revisions("Workload", "wl-a")] == ["applied"]


# ---------------------------------------------------------------- argument errors


def test_type_without_names_is_refused(populated):
    assert populated("delete", "wl") == (1, "", "error: resource(s) were provided, but no name was specified\n")
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]


def test_all_and_selector_together_are_refused(populated):
    assert populated("delete", "wl", "--all", "-l", "app") == (
        1, "", "error: cannot set --all and --selector at the same time\n",
    )
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]


def test_names_and_selector_together_are_refused(populated):
    assert populated("delete", "wl", "wl-a", "-l", "app") == (
        1, "", "error: name cannot be provided when a selector is specified\n",
    )


def test_invalid_selector(populated):
    code, out, err = populated("delete", "wl", "-l", "app:web")
    assert (code, out) == (1, "")
    assert err.startswith('error: the provided selector "app:web" is not valid: unable to parse requirement: ')
    assert remaining(populated) == ["wl-a", "wl-b", "wl-c"]


# ---------------------------------------------------------------- NotFound


def test_not_found_others_still_deleted(populated):
    assert populated("delete", "wl", "nope", "wl-a", "gone", "wl-c") == (
        1, deleted("wl-a") + deleted("wl-c"), not_found("nope") + not_found("gone"),
    )
    assert remaining(populated) == ["wl-b"]


def test_not_found_only(populated):
    assert populated("delete", "wl", "nope") == (1, "", not_found("nope"))
    assert populated("delete", "wl/nope") == (1, "", not_found("nope"))


def test_ignore_not_found(populated):
    assert populated("delete", "wl", "nope", "wl-b", "--ignore-not-found") == (0, deleted("wl-b"), "")
    assert populated("delete", "wl", "nope", "--ignore-not-found") == (0, "", "")


def test_deleting_twice(populated):
    assert populated("delete", "wl", "wl-a") == (0, deleted("wl-a"), "")
    assert populated("delete", "wl", "wl-a") == (1, "", not_found("wl-a"))


def test_delete_by_digest_prefix(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert kidx("delete", "bp", SEED_PROTOCOL_DIGEST[7:15]) == (0, deleted(PROTOCOL_NAME, "benchmarkprotocol"), "")


# ---------------------------------------------------------------- history and files


def test_deleted_names_keep_their_revisions(populated, store):
    populated("apply", "-f", "-", stdin=json.dumps(workload("wl-a", "changed", {"app": "web"})))
    assert populated("delete", "wl", "wl-a") == (0, deleted("wl-a"), "")
    first, second = digest_of(WORKLOADS[0]), digest_of(workload("wl-a", "changed"))
    revisions = store_of(store).catalog().revisions("Workload", "wl-a")
    assert [(r.revision, r.event, r.digest, r.generation, r.labels) for r in revisions] == [
        (1, "applied", first, 1, {"app": "web"}),
        (2, "applied", second, 2, {"app": "web"}),
        (3, "deleted", second, 2, {"app": "web"}),
    ]
    assert store_of(store).catalog().get("Workload", "wl-a") is None


def test_object_files_stay_after_delete(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    objects = store_of(store).objects
    before = {digest: objects.read(digest) for digest in objects.digests()}
    assert len(before) == 3
    assert kidx("delete", "run", SEED_RUN_NAME)[0] == 0
    assert kidx("delete", "bp", "--all")[0] == 0
    after = {digest: objects.read(digest) for digest in objects.digests()}
    assert after == before
    assert objects.verify(SEED_RUN_DIGEST) and objects.verify(SEED_PROTOCOL_DIGEST)


def test_reapply_after_delete_says_created(kidx, store):
    kidx("apply", "-f", str(SEED_BUNDLE))
    kidx("delete", "run", SEED_RUN_NAME)
    code, out, _ = kidx("apply", "-f", str(SEED_BUNDLE))
    assert (code, out) == (
        0,
        f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME} created\n"
        f"benchmarkprotocol.kernelindex.dev/{PROTOCOL_NAME} unchanged\n"
        "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3 unchanged\n",
    )
    code, out, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "json")
    assert json.loads(out)["metadata"]["generation"] == 1
    events = [r.event for r in store_of(store).catalog().revisions("BenchmarkRun", SEED_RUN_NAME)]
    assert events == ["applied", "deleted", "applied"]


def test_deleting_a_referenced_object_keeps_the_referrer(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert kidx("delete", "bp", PROTOCOL_NAME)[0] == 0
    code, out, _ = kidx("describe", "run", SEED_RUN_NAME)
    assert code == 0
    assert f"  Protocol Digest:        BenchmarkProtocol <not in store>  {SEED_PROTOCOL_DIGEST[:19]}\n" in out

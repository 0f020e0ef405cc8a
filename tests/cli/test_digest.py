"""kidx digest: '<digest>  <Kind>/<name>' per document, validated like apply, nothing written."""

from __future__ import annotations

import json

from conftest import (
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

from kidx.identity import digest_of

API = "kernelindex.dev/v1alpha1"
SEED_LINES = (
    f"{SEED_RUN_DIGEST}  BenchmarkRun/{SEED_RUN_NAME}\n"
    f"{SEED_PROTOCOL_DIGEST}  BenchmarkProtocol/liger-bench-do-bench-backward\n"
    f"{SEED_ENVIRONMENT_DIGEST}  ExecutionEnvironment/liger-bench-nvidia-h100-80gb-hbm3\n"
)
PROTOCOL = {
    "apiVersion": API, "kind": "BenchmarkProtocol", "metadata": {"name": "p1"},
    "spec": {"harness": {"name": "h"}, "measurement": {"timer": "cuda_events"}},
}


def run_by_name(name="r1", protocol="p1"):
    return {
        "apiVersion": API, "kind": "BenchmarkRun", "metadata": {"name": name},
        "spec": {"status": "passed", "protocolRef": {"name": protocol}},
    }


def pinned_run_digest(protocol_digest):
    return digest_of({"apiVersion": API, "kind": "BenchmarkRun", "spec": {"status": "passed", "protocolDigest": protocol_digest}})


def test_digest_of_the_seed(kidx, store):
    assert kidx("digest", "-f", str(SEED_BUNDLE)) == (0, SEED_LINES, "")
    assert not store.exists()


def test_digest_of_the_seed_from_stdin(kidx, store):
    assert kidx("digest", "-f", "-", stdin=SEED_BUNDLE.read_text()) == (0, SEED_LINES, "")
    assert not store.exists()


def test_digest_is_the_same_after_apply(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert kidx("digest", "-f", str(SEED_BUNDLE)) == (0, SEED_LINES, "")


def test_digest_in_a_real_process(kidx_process, store):
    assert kidx_process("digest", "-f", str(SEED_BUNDLE)) == (0, SEED_LINES, "")
    assert not store.exists()


def test_digest_ignores_metadata(kidx):
    renamed = json.loads(SEED_BUNDLE.read_text())
    for manifest in renamed.values():
        manifest["metadata"]["labels"] = {"other": "labels"}
        manifest["metadata"]["title"] = "another title"
    code, out, err = kidx("digest", "-f", "-", stdin=json.dumps(renamed))
    assert (code, out, err) == (0, SEED_LINES, "")


def test_digest_pins_by_name_references_from_the_batch(kidx, store):
    text = json.dumps(run_by_name()) + json.dumps(PROTOCOL)
    protocol_digest = digest_of(PROTOCOL)
    assert kidx("digest", "-f", "-", stdin=text) == (
        0,
        f"{pinned_run_digest(protocol_digest)}  BenchmarkRun/r1\n{protocol_digest}  BenchmarkProtocol/p1\n",
        "",
    )
    assert not store.exists()


def test_digest_pins_by_name_references_from_the_store(kidx):
    kidx("apply", "-f", "-", stdin=json.dumps(PROTOCOL))
    assert kidx("digest", "-f", "-", stdin=json.dumps(run_by_name())) == (
        0, f"{pinned_run_digest(digest_of(PROTOCOL))}  BenchmarkRun/r1\n", "",
    )
    assert kidx("get", "runs") == (0, "", "No resources found\n")


def test_digest_unknown_by_name_reference_is_an_error(kidx, store):
    kidx("apply", "-f", "-", stdin=json.dumps(PROTOCOL))
    code, out, err = kidx("digest", "-f", "-", stdin=json.dumps(run_by_name(protocol="nope")))
    assert (code, out) == (1, "")
    assert err == (
        'error: STDIN, document 1, line 1: spec.protocolRef.name: Not found: BenchmarkProtocol "nope" is '
        "neither in this batch nor in the store\n"
    )


def test_digest_says_when_the_store_named_to_look_in_does_not_exist(kidx, store, kidx_process):
    """digest needs a store only for by-name references the batch does not satisfy: with
    none, a store named that does not exist is not read; with one, the error says the store
    does not exist rather than that it lacks the name."""
    message = ('error: STDIN, document 1, line 1: spec.protocolRef.name: Not found: BenchmarkProtocol "nope" is not '
               f"in this batch, and there is no store at {store} (--store) to look in\n")
    assert kidx("digest", "-f", "-", stdin=json.dumps(run_by_name(protocol="nope"))) == (1, "", message)
    completed = kidx_process("digest", "-f", "-", stdin=json.dumps(run_by_name(protocol="nope")))
    assert completed == (1, "", message.replace("(--store)", "($KIDX_STORE)"))
    assert kidx("digest", "-f", str(SEED_BUNDLE)) == (0, SEED_LINES, "")
    assert not store.exists()


def test_digest_validates_like_apply(kidx, store, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(f"apiVersion: {API}\nkind: Workload\nmetadata:\n  name: Bad\nspec:\n  operation: 3\n")
    code, out, err = kidx("digest", "-f", str(path))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"error: {path}, document 1, line 6: spec.operation: Invalid value: 3 is not of type 'string'",
        f"error: {path}, document 1, line 4: metadata.name: Invalid value: \"Bad\": a name must be 1 to 253 "
        "characters of lower-case letters, digits, '-', '.' and '_', starting with a letter or digit",
        "error: 2 problems found; nothing was changed",
    ]
    assert not store.exists()


def test_digest_of_a_folder(kidx, tmp_path):
    (tmp_path / "sub").mkdir()
    first = {"apiVersion": API, "kind": "Workload", "metadata": {"name": "a"}, "spec": {"operation": "a"}}
    second = {"apiVersion": API, "kind": "Workload", "metadata": {"name": "b"}, "spec": {"operation": "b"}}
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "sub" / "b.yaml").write_text(json.dumps(second))
    assert kidx("digest", "-f", str(tmp_path)) == (0, f"{digest_of(first)}  Workload/a\n", "")
    assert kidx("digest", "-R", "-f", str(tmp_path)) == (
        0, f"{digest_of(first)}  Workload/a\n{digest_of(second)}  Workload/b\n", "",
    )


def test_digest_needs_f(kidx):
    code, out, err = kidx("digest")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")

"""kidx apply end to end: result lines, inputs, all-or-nothing, references, revisions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import (
    REPO,
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

from kidx.identity import canonical_json, digest_of

# every test here runs on a folder store and on a PostgreSQL store (conftest.py)
pytestmark = pytest.mark.both_backends

API = "kernelindex.dev/v1alpha1"
RUN = f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}"
PROTOCOL = "benchmarkprotocol.kernelindex.dev/liger-bench-do-bench-backward"
ENVIRONMENT = "executionenvironment.kernelindex.dev/liger-bench-nvidia-h100-80gb-hbm3"
SEED_WARNINGS = (
    f"Warning: {RUN}: workloadDigest sha256:acfd1d7e6ca5… is not in the store (no Workload has this digest)\n"
    f"Warning: {RUN}: implementationDigest sha256:7b16e7caa072… is not in the store (no Implementation has this digest)\n"
)


def workload(name: str, operation: str | None = None, labels: dict | None = None, title: str | None = None) -> dict:
    metadata: dict = {"name": name}
    if title is not None:
        metadata["title"] = title
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata, "spec": {"operation": operation or name}}


def workload_yaml(name: str, operation: str | None = None, labels: dict | None = None) -> str:
    text = f"apiVersion: {API}\nkind: Workload\nmetadata:\n  name: {name}\n"
    if labels:
        text += "  labels:\n" + "".join(f"    {k}: {v}\n" for k, v in labels.items())
    return text + f"spec:\n  operation: {operation or name}\n"


PROTOCOL_YAML = f"""\
apiVersion: {API}
kind: BenchmarkProtocol
metadata:
  name: p1
spec:
  harness:
    name: h
  measurement:
    timer: cuda_events
"""
PROTOCOL_P1 = {
    "apiVersion": API, "kind": "BenchmarkProtocol",
    "spec": {"harness": {"name": "h"}, "measurement": {"timer": "cuda_events"}},
}
P1_DIGEST = digest_of(PROTOCOL_P1)


def run_yaml(name: str, spec_lines: str) -> str:
    return f"apiVersion: {API}\nkind: BenchmarkRun\nmetadata:\n  name: {name}\nspec:\n  status: passed\n{spec_lines}"


def catalog(store):
    from kidx.store.store import Store

    return Store(store).catalog()


def stored_json(kidx, *args):
    code, out, err = kidx("get", *args, "-o", "json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------- result lines


def test_apply_seed_creates_three_objects_and_warns_about_dangling_references(kidx, store):
    code, out, err = kidx("apply", "-f", str(SEED_BUNDLE))
    assert (code, out, err) == (0, f"{RUN} created\n{PROTOCOL} created\n{ENVIRONMENT} created\n", SEED_WARNINGS)
    run = stored_json(kidx, "run", SEED_RUN_NAME)
    assert run["metadata"]["digest"] == SEED_RUN_DIGEST
    assert run["metadata"]["generation"] == 1


def test_reapplying_the_seed_reports_unchanged(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    code, out, err = kidx("apply", "-f", str(SEED_BUNDLE))
    assert (code, out, err) == (0, f"{RUN} unchanged\n{PROTOCOL} unchanged\n{ENVIRONMENT} unchanged\n", SEED_WARNINGS)


def test_created_configured_unchanged_in_one_batch(kidx):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a")) + json.dumps(workload("b")))
    batch = json.dumps(workload("a")) + json.dumps(workload("b", "changed")) + json.dumps(workload("c"))
    assert kidx("apply", "-f", "-", stdin=batch) == (
        0,
        "workload.kernelindex.dev/a unchanged\n"
        "workload.kernelindex.dev/b configured\n"
        "workload.kernelindex.dev/c created\n",
        "",
    )


def test_dry_run_on_an_empty_store_writes_nothing(kidx, store):
    code, out, err = kidx("apply", "-f", str(SEED_BUNDLE), "--dry-run")
    assert (code, out, err) == (
        0,
        f"{RUN} created (dry run)\n{PROTOCOL} created (dry run)\n{ENVIRONMENT} created (dry run)\n",
        SEED_WARNINGS,
    )
    assert not store.exists()


@pytest.mark.parametrize("flag", ["--dry-run", "--dry-run=client"])
def test_dry_run_leaves_the_store_unchanged(kidx, store, flag):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a")) + json.dumps(workload("b")))
    before = stored_json(kidx, "wl")
    batch = json.dumps(workload("a", labels={"x": "y"})) + json.dumps(workload("b")) + json.dumps(workload("c"))
    assert kidx("apply", "-f", "-", flag, stdin=batch) == (
        0,
        "workload.kernelindex.dev/a configured (dry run)\n"
        "workload.kernelindex.dev/b unchanged (dry run)\n"
        "workload.kernelindex.dev/c created (dry run)\n",
        "",
    )
    assert stored_json(kidx, "wl") == before
    assert len(catalog(store).revisions("Workload", "a")) == 1
    assert catalog(store).get("Workload", "c") is None


def test_dry_run_server_suffix(kidx, store):
    assert kidx("apply", "-f", "-", "--dry-run=server", stdin=json.dumps(workload("a"))) == (
        0, "workload.kernelindex.dev/a created (server dry run)\n", "",
    )
    assert not store.exists()


def test_bad_dry_run_value(kidx, store):
    code, out, err = kidx("apply", "-f", "-", "--dry-run=maybe", stdin=json.dumps(workload("a")))
    assert (code, out) == (1, "")
    assert err == 'error: Invalid dry-run value (maybe). Must be "none", "server", or "client".\n'
    assert not store.exists()


def test_output_name(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE), "-o", "name") == (
        0, f"{RUN}\n{PROTOCOL}\n{ENVIRONMENT}\n", SEED_WARNINGS,
    )
    assert kidx("apply", "-f", str(SEED_BUNDLE), "-o", "name", "--dry-run") == (
        0, f"{RUN}\n{PROTOCOL}\n{ENVIRONMENT}\n", SEED_WARNINGS,
    )


def test_output_other_than_name_is_refused(kidx, store):
    assert kidx("apply", "-f", str(SEED_BUNDLE), "-o", "yaml") == (
        1, "", "error: unable to match a printer suitable for the output format \"yaml\", allowed formats are: name\n",
    )
    assert not store.exists()


def test_apply_needs_f(kidx, store):
    code, out, err = kidx("apply")
    assert (code, out) == (1, "")
    assert err.startswith("error: ")
    assert not store.exists()


def test_missing_path(kidx, store, tmp_path):
    missing = tmp_path / "nope.yaml"
    assert kidx("apply", "-f", str(missing)) == (1, "", f'error: the path "{missing}" does not exist\n')
    assert not store.exists()


# ---------------------------------------------------------------- inputs


@pytest.fixture
def manifest_folder(tmp_path):
    folder = tmp_path / "manifests"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "c.yaml").write_text(workload_yaml("c"))
    (folder / "a.json").write_text(json.dumps(workload("a")))
    (folder / "b.yml").write_text(workload_yaml("b"))
    (folder / "notes.txt").write_text(json.dumps(workload("txt")))
    (folder / "README").write_text("not a manifest")
    (folder / "sub" / "d.yaml").write_text(workload_yaml("d"))
    (folder / "sub" / "deeper" / "e.json").write_text(json.dumps(workload("e")))
    return folder


def test_folder_reads_yaml_yml_json_children_in_lexical_order(kidx, manifest_folder):
    assert kidx("apply", "-f", str(manifest_folder)) == (
        0,
        "workload.kernelindex.dev/a created\n"
        "workload.kernelindex.dev/b created\n"
        "workload.kernelindex.dev/c created\n",
        "",
    )


def test_folder_recursive(kidx, manifest_folder):
    assert kidx("apply", "-R", "-f", str(manifest_folder), "-o", "name") == (
        0,
        "workload.kernelindex.dev/a\n"
        "workload.kernelindex.dev/b\n"
        "workload.kernelindex.dev/c\n"
        "workload.kernelindex.dev/d\n"
        "workload.kernelindex.dev/e\n",
        "",
    )


def test_an_explicit_file_is_read_whatever_its_extension(kidx, manifest_folder):
    assert kidx("apply", "-f", str(manifest_folder / "notes.txt")) == (
        0, "workload.kernelindex.dev/txt created\n", "",
    )


def test_f_is_repeatable_and_comma_separated(kidx, manifest_folder):
    first = manifest_folder / "c.yaml"
    second = manifest_folder / "a.json"
    third = manifest_folder / "sub" / "d.yaml"
    assert kidx("apply", "-f", f"{first},{second}", "-f", str(third), "-o", "name") == (
        0,
        "workload.kernelindex.dev/c\nworkload.kernelindex.dev/a\nworkload.kernelindex.dev/d\n",
        "",
    )


def test_multi_document_yaml_skips_empty_and_comment_only_documents(kidx):
    text = (
        "---\n# only a comment\n---\n"
        + workload_yaml("a")
        + "---\n---\nnull\n---\n"
        + workload_yaml("b")
        + "...\n"
    )
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "workload.kernelindex.dev/a created\nworkload.kernelindex.dev/b created\n", "",
    )


def test_single_json_document(kidx):
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("a"), indent=2)) == (
        0, "workload.kernelindex.dev/a created\n", "",
    )


def test_concatenated_json_documents(kidx, tmp_path):
    path = tmp_path / "many.json"
    path.write_text(json.dumps(workload("a"), indent=2) + "\n" + json.dumps(workload("b")) + json.dumps(workload("c")))
    assert kidx("apply", "-f", str(path), "-o", "name") == (
        0, "workload.kernelindex.dev/a\nworkload.kernelindex.dev/b\nworkload.kernelindex.dev/c\n", "",
    )


def test_kind_list_json_and_yaml(kidx):
    as_json = json.dumps({"apiVersion": "v1", "kind": "List", "items": [workload("a"), workload("b")]})
    assert kidx("apply", "-f", "-", stdin=as_json) == (
        0, "workload.kernelindex.dev/a created\nworkload.kernelindex.dev/b created\n", "",
    )
    as_yaml = (
        "apiVersion: v1\nkind: List\nitems:\n"
        f"- apiVersion: {API}\n  kind: Workload\n  metadata:\n    name: c\n  spec:\n    operation: c\n"
        "- apiVersion: v1\n  kind: WorkloadList\n  items:\n"
        f"  - apiVersion: {API}\n    kind: Workload\n    metadata:\n      name: d\n    spec:\n      operation: d\n"
    )
    assert kidx("apply", "-f", "-", stdin=as_yaml) == (
        0, "workload.kernelindex.dev/c created\nworkload.kernelindex.dev/d created\n", "",
    )


def test_bundle_form_in_yaml(kidx, seed_bundle):
    text = (
        f"first:\n  apiVersion: {API}\n  kind: Workload\n  metadata:\n    name: a\n  spec:\n    operation: a\n"
        f"second:\n  apiVersion: {API}\n  kind: Workload\n  metadata:\n    name: b\n  spec:\n    operation: b\n"
    )
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "workload.kernelindex.dev/a created\nworkload.kernelindex.dev/b created\n", "",
    )


def test_stdin(kidx):
    assert kidx("apply", "-f", "-", stdin=SEED_BUNDLE.read_text()) == (
        0, f"{RUN} created\n{PROTOCOL} created\n{ENVIRONMENT} created\n", SEED_WARNINGS,
    )


def test_stdin_only_once(kidx, store):
    assert kidx("apply", "-f", "-", "-f", "-", stdin=json.dumps(workload("a"))) == (
        1, "", "error: standard input cannot be used for multiple arguments\n",
    )
    assert not store.exists()


def test_stdin_in_a_real_process(kidx_process):
    assert kidx_process("apply", "-f", "-", stdin=workload_yaml("a")) == (
        0, "workload.kernelindex.dev/a created\n", "",
    )
    assert kidx_process("apply", "-f", "-", stdin=workload_yaml("a")) == (
        0, "workload.kernelindex.dev/a unchanged\n", "",
    )


# ---------------------------------------------------------------- all or nothing

BAD_BATCH = f"""\
apiVersion: {API}
kind: Workload
metadata:
  name: fine
spec:
  operation: fine
---
apiVersion: {API}
kind: ExecutionEnvironment
metadata:
  name: env-a
  labels:
    gpu: -bad
spec:
  hardware:
    vendor: NVIDIA
---
apiVersion: {API}
kind: BenchmarkRun
metadata:
  name: Run_1
spec:
  status: done
  measurements:
  - unit: ns
    value: fast
"""


def test_invalid_batch_lists_every_error_writes_nothing_and_exits_1(kidx, store, tmp_path):
    path = tmp_path / "batch.yaml"
    path.write_text(BAD_BATCH)
    code, out, err = kidx("apply", "-f", str(path))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f'error: {path}, document 2, line 16: spec.hardware.product: Required value: "product" is a required property',
        f'error: {path}, document 2, line 16: spec.hardware.vendor: Invalid value: "NVIDIA" does not match \'^[a-z0-9][a-z0-9-]*$\'',
        f"error: {path}, document 2, line 13: metadata.labels.gpu: Invalid value: \"-bad\": a label value must be empty or 1 to 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
        f'error: {path}, document 3, line 23: spec.status: Unsupported value: "done" is not one of ["passed", "failed", "error", "skipped"]',
        f'error: {path}, document 3, line 25: spec.measurements[0].metric: Required value: "metric" is a required property',
        f'error: {path}, document 3, line 25: spec.measurements[0].statistic: Required value: "statistic" is a required property',
        f'error: {path}, document 3, line 26: spec.measurements[0].value: Invalid value: "fast" is not of type \'number\', \'null\'',
        f"error: {path}, document 3, line 21: metadata.name: Invalid value: \"Run_1\": a name must be 1 to 253 characters of lower-case letters, digits, '-', '.' and '_', starting with a letter or digit",
        "error: 8 problems found; nothing was changed",
    ]
    assert not store.exists()


def test_invalid_batch_leaves_an_existing_store_unchanged(kidx, store, tmp_path):
    kidx("apply", "-f", "-", stdin=workload_yaml("fine", "old"))
    before = stored_json(kidx, "all")
    path = tmp_path / "batch.yaml"
    path.write_text(BAD_BATCH)
    assert kidx("apply", "-f", str(path))[0] == 1
    assert stored_json(kidx, "all") == before
    assert len(catalog(store).revisions("Workload", "fine")) == 1


def test_errors_from_several_files_and_parse_errors_are_all_reported(kidx, store, tmp_path):
    good = tmp_path / "a-good.yaml"
    good.write_text(workload_yaml("good"))
    invalid = tmp_path / "b-invalid.json"
    invalid.write_text(json.dumps({"apiVersion": API, "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}))
    broken = tmp_path / "c-broken.yaml"
    broken.write_text("apiVersion: x\nkind: [\n")
    code, out, err = kidx("apply", "-f", str(tmp_path))
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert sorted(lines[:-1]) == sorted([
        f'error: {invalid}, document 1, line 1: kind: no matches for kind "Widget" in version "{API}" (object "w")',
        f"error: {broken}, document 1, line 3: invalid YAML: while parsing a flow node did not find expected node content",
    ])
    assert lines[-1] == "error: 2 problems found; nothing was changed"
    assert not store.exists()


def test_empty_input_is_an_error(kidx, store):
    code, out, err = kidx("apply", "-f", "-", stdin="")
    assert (code, out) == (1, "")
    assert err.startswith("error: STDIN")
    assert not store.exists()


def test_same_kind_and_name_twice_with_different_content_is_an_error(kidx, store):
    text = workload_yaml("a", "one") + "---\n" + workload_yaml("a", "two")
    assert kidx("apply", "-f", "-", stdin=text) == (
        1, "",
        'error: STDIN, document 2, line 11: metadata.name: Workload "a" is also defined, differently, in STDIN, document 1, line 1\n',
    )
    assert not store.exists()


def test_same_kind_and_name_twice_with_different_labels_is_an_error(kidx, store):
    text = workload_yaml("a") + "---\n" + workload_yaml("a", labels={"x": "y"})
    code, out, err = kidx("apply", "-f", "-", stdin=text)
    assert (code, out) == (1, "")
    assert 'Workload "a" is also defined, differently' in err
    assert not store.exists()


def test_same_object_twice_identically_is_fine(kidx, store):
    text = workload_yaml("a") + "---\n" + workload_yaml("a")
    assert kidx("apply", "-f", "-", stdin=text) == (0, "workload.kernelindex.dev/a created\n", "")
    assert [r.revision for r in catalog(store).revisions("Workload", "a")] == [1]


def test_same_name_in_two_kinds_is_two_objects(kidx):
    text = workload_yaml("same") + "---\n" + PROTOCOL_YAML.replace("name: p1", "name: same")
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "workload.kernelindex.dev/same created\nbenchmarkprotocol.kernelindex.dev/same created\n", "",
    )


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["a/b", "a b", "Upper", "..", "../x", "-x", ".x", "_x", "x" * 254, "é"])
def test_bad_names_are_refused(kidx, store, name):
    text = json.dumps(workload(name, "op"))
    code, out, err = kidx("apply", "-f", "-", stdin=text)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: STDIN, document 1, line 1: metadata.name: Invalid value: {json.dumps(name, ensure_ascii=False)}: ")
    assert not store.exists()


@pytest.mark.parametrize("name", ["a", "0", "a.b_c-d", "x" * 253, "ends-with-dash-", SEED_RUN_NAME])
def test_good_names_are_accepted(kidx, name):
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload(name, "op"))) == (
        0, f"workload.kernelindex.dev/{name} created\n", "",
    )


def test_missing_name(kidx, store):
    text = json.dumps({"apiVersion": API, "kind": "Workload", "metadata": {}, "spec": {"operation": "x"}})
    code, out, err = kidx("apply", "-f", "-", stdin=text)
    assert (code, out) == (1, "")
    assert "metadata.name: Required value" in err
    assert not store.exists()


# ---------------------------------------------------------------- references


def test_run_before_its_protocol_in_one_batch(kidx, store):
    text = run_yaml("r1", f"  protocolDigest: {P1_DIGEST}\n") + "---\n" + PROTOCOL_YAML
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "benchmarkrun.kernelindex.dev/r1 created\nbenchmarkprotocol.kernelindex.dev/p1 created\n", "",
    )


def test_dangling_digest_reference_is_stored_with_a_warning(kidx, store):
    missing = "sha256:" + "ab" * 32
    text = run_yaml("r1", f"  workloadDigest: {missing}\n")
    assert kidx("apply", "-f", "-", stdin=text) == (
        0,
        "benchmarkrun.kernelindex.dev/r1 created\n",
        "Warning: benchmarkrun.kernelindex.dev/r1: workloadDigest sha256:abababababab… is not in the store "
        "(no Workload has this digest)\n",
    )
    assert stored_json(kidx, "run", "r1")["spec"]["workloadDigest"] == missing


def test_by_name_reference_is_pinned_from_the_batch(kidx, store):
    text = run_yaml("r1", "  protocolRef:\n    name: p1\n") + "---\n" + PROTOCOL_YAML
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "benchmarkrun.kernelindex.dev/r1 created\nbenchmarkprotocol.kernelindex.dev/p1 created\n", "",
    )
    run = stored_json(kidx, "run", "r1")
    assert run["spec"] == {"status": "passed", "protocolDigest": P1_DIGEST}
    expected = {"apiVersion": API, "kind": "BenchmarkRun", "spec": {"status": "passed", "protocolDigest": P1_DIGEST}}
    assert run["metadata"]["digest"] == digest_of(expected)
    from kidx.store.store import Store

    assert Store(store).objects.read(run["metadata"]["digest"]) == canonical_json(expected)


def test_by_name_reference_is_pinned_from_the_store(kidx):
    kidx("apply", "-f", "-", stdin=PROTOCOL_YAML)
    assert kidx("apply", "-f", "-", stdin=run_yaml("r1", "  protocolRef: {name: p1}\n")) == (
        0, "benchmarkrun.kernelindex.dev/r1 created\n", "",
    )
    assert stored_json(kidx, "run", "r1")["spec"] == {"status": "passed", "protocolDigest": P1_DIGEST}


def test_by_name_reference_prefers_the_batch_over_the_store(kidx):
    kidx("apply", "-f", "-", stdin=PROTOCOL_YAML)
    newer = PROTOCOL_YAML.replace("name: h", "name: h2")
    text = run_yaml("r1", "  protocolRef: {name: p1}\n") + "---\n" + newer
    assert kidx("apply", "-f", "-", stdin=text)[0] == 0
    new_digest = stored_json(kidx, "bp", "p1")["metadata"]["digest"]
    assert new_digest != P1_DIGEST
    assert stored_json(kidx, "run", "r1")["spec"]["protocolDigest"] == new_digest


def test_by_name_reference_with_agreeing_digest_is_fine(kidx):
    kidx("apply", "-f", "-", stdin=PROTOCOL_YAML)
    text = run_yaml("r1", f"  protocolRef: {{name: p1}}\n  protocolDigest: {P1_DIGEST}\n")
    assert kidx("apply", "-f", "-", stdin=text) == (0, "benchmarkrun.kernelindex.dev/r1 created\n", "")
    assert stored_json(kidx, "run", "r1")["spec"] == {"status": "passed", "protocolDigest": P1_DIGEST}


def test_by_name_reference_contradicting_the_digest_is_an_error(kidx, store):
    other = "sha256:" + "0" * 64
    text = PROTOCOL_YAML + "---\n" + run_yaml("r1", f"  protocolRef: {{name: p1}}\n  protocolDigest: {other}\n")
    assert kidx("apply", "-f", "-", stdin=text) == (
        1, "",
        f"error: STDIN, document 2, line 18: spec.protocolDigest: Invalid value: \"{other}\": contradicts protocolRef "
        f'("p1" is {P1_DIGEST})\n',
    )
    assert not store.exists()


def test_by_name_reference_to_an_unknown_name_is_an_error(kidx, store):
    text = workload_yaml("w") + "---\n" + run_yaml("r1", "  protocolRef: {name: nope}\n")
    assert kidx("apply", "-f", "-", stdin=text) == (
        1, "",
        'error: STDIN, document 2, line 14: spec.protocolRef.name: Not found: BenchmarkProtocol "nope" is '
        "neither in this batch nor in the store\n",
    )
    assert not store.exists()


def test_by_name_reference_of_the_wrong_kind_is_not_found(kidx, store):
    # a Workload called p1 does not satisfy protocolRef
    text = workload_yaml("p1") + "---\n" + run_yaml("r1", "  protocolRef: {name: p1}\n")
    code, out, err = kidx("apply", "-f", "-", stdin=text)
    assert (code, out) == (1, "")
    assert 'Not found: BenchmarkProtocol "p1"' in err
    assert not store.exists()


def test_digest_of_pinned_run_equals_digest_of_the_same_run_written_with_digests(kidx):
    by_name = run_yaml("r1", "  protocolRef: {name: p1}\n") + "---\n" + PROTOCOL_YAML
    by_digest = run_yaml("r1", f"  protocolDigest: {P1_DIGEST}\n") + "---\n" + PROTOCOL_YAML
    assert kidx("digest", "-f", "-", stdin=by_name) == kidx("digest", "-f", "-", stdin=by_digest)


# ---------------------------------------------------------------- round trips


def test_get_yaml_piped_into_apply_is_unchanged(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    _, listed, _ = kidx("get", "all", "-o", "yaml")
    assert kidx("apply", "-f", "-", stdin=listed) == (
        0, f"{PROTOCOL} unchanged\n{RUN} unchanged\n{ENVIRONMENT} unchanged\n", SEED_WARNINGS,
    )
    _, single, _ = kidx("get", "run", SEED_RUN_NAME, "-o", "yaml")
    assert single.startswith(f"apiVersion: {API}\n")
    assert kidx("apply", "-f", "-", stdin=single) == (0, f"{RUN} unchanged\n", SEED_WARNINGS)
    _, as_json, _ = kidx("get", "bp,env", "-o", "json")
    assert kidx("apply", "-f", "-", stdin=as_json) == (0, f"{PROTOCOL} unchanged\n{ENVIRONMENT} unchanged\n", "")


def test_get_yaml_piped_into_apply_through_a_real_shell_pipe(kidx_process, store):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE))[0] == 0
    python = sys.executable
    completed = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{python}' -m kidx get runs,bp -o yaml | '{python}' -m kidx apply -f -"],
        capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1"},
    )
    assert (completed.returncode, completed.stdout) == (0, f"{RUN} unchanged\n{PROTOCOL} unchanged\n")


def test_store_set_metadata_is_ignored_on_input(kidx):
    manifest = workload("a")
    manifest["metadata"].update(
        {"digest": "sha256:" + "0" * 64, "creationTimestamp": "1999-01-01T00:00:00Z", "generation": 7}
    )
    assert kidx("apply", "-f", "-", stdin=json.dumps(manifest)) == (0, "workload.kernelindex.dev/a created\n", "")
    stored = stored_json(kidx, "wl", "a")["metadata"]
    assert stored["digest"] == digest_of(manifest)
    assert stored["generation"] == 1
    assert stored["creationTimestamp"] != "1999-01-01T00:00:00Z"
    manifest["metadata"]["generation"] = 99
    assert kidx("apply", "-f", "-", stdin=json.dumps(manifest)) == (0, "workload.kernelindex.dev/a unchanged\n", "")


# ---------------------------------------------------------------- changes and revisions


def test_label_only_change_is_configured_and_keeps_the_digest(kidx, store):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a")))
    first = stored_json(kidx, "wl", "a")["metadata"]
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("a", labels={"tier": "fe"}))) == (
        0, "workload.kernelindex.dev/a configured\n", "",
    )
    second = stored_json(kidx, "wl", "a")["metadata"]
    assert second["digest"] == first["digest"]
    assert second["generation"] == 2
    assert second["labels"] == {"tier": "fe"}
    assert second["creationTimestamp"] == first["creationTimestamp"]
    revisions = catalog(store).revisions("Workload", "a")
    assert [(r.revision, r.event, r.digest, r.labels, r.generation) for r in revisions] == [
        (1, "applied", first["digest"], {}, 1),
        (2, "applied", first["digest"], {"tier": "fe"}, 2),
    ]


def test_title_only_change_is_configured(kidx):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a", title="one")))
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("a", title="two"))) == (
        0, "workload.kernelindex.dev/a configured\n", "",
    )
    assert stored_json(kidx, "wl", "a")["metadata"]["title"] == "two"


def test_spec_change_keeps_every_earlier_version_as_a_revision(kidx, store):
    from kidx.store.store import Store

    kidx("apply", "-f", "-", stdin=json.dumps(workload("a", "one")))
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a", "two")))
    assert kidx("apply", "-f", "-", stdin=json.dumps(workload("a", "three"))) == (
        0, "workload.kernelindex.dev/a configured\n", "",
    )
    digests = [digest_of(workload("a", op)) for op in ("one", "two", "three")]
    revisions = catalog(store).revisions("Workload", "a")
    assert [(r.revision, r.event, r.digest, r.generation) for r in revisions] == [
        (1, "applied", digests[0], 1), (2, "applied", digests[1], 2), (3, "applied", digests[2], 3),
    ]
    objects = Store(store).objects
    assert all(objects.exists(d) and objects.verify(d) for d in digests)
    current = stored_json(kidx, "wl", "a")
    assert (current["metadata"]["digest"], current["metadata"]["generation"]) == (digests[2], 3)


def test_unchanged_apply_records_no_revision(kidx, store):
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a")))
    kidx("apply", "-f", "-", stdin=json.dumps(workload("a")))
    assert len(catalog(store).revisions("Workload", "a")) == 1
    assert stored_json(kidx, "wl", "a")["metadata"]["generation"] == 1


def test_two_names_for_one_spec_are_one_object(kidx, store):
    from kidx.store.store import Store

    text = json.dumps(workload("a", "same")) + json.dumps(workload("b", "same"))
    assert kidx("apply", "-f", "-", stdin=text)[0] == 0
    a, b = stored_json(kidx, "wl", "a", "b")["items"]
    assert a["metadata"]["digest"] == b["metadata"]["digest"]
    assert list(Store(store).objects.digests()) == [a["metadata"]["digest"]]


def test_seed_digests_after_apply(kidx):
    kidx("apply", "-f", str(SEED_BUNDLE))
    assert stored_json(kidx, "bp", "liger-bench-do-bench-backward")["metadata"]["digest"] == SEED_PROTOCOL_DIGEST
    assert stored_json(kidx, "env", "liger-bench-nvidia-h100-80gb-hbm3")["metadata"]["digest"] == SEED_ENVIRONMENT_DIGEST


def test_reference_errors_are_reported_with_validation_errors(kidx, store):
    text = workload_yaml("Bad") + "---\n" + run_yaml("r1", "  protocolRef: {name: nope}\n")
    code, out, err = kidx("apply", "-f", "-", stdin=text)
    assert (code, out) == (1, "")
    assert 'metadata.name: Invalid value: "Bad"' in err
    assert 'spec.protocolRef.name: Not found: BenchmarkProtocol "nope"' in err
    assert not store.exists()


def test_a_nul_character_is_refused_at_its_file_line_and_field_on_every_store(kidx, store, tmp_path):
    """PostgreSQL's text cannot hold a NUL; a folder store would: both refuse it, before the write."""
    json_path = tmp_path / "nul.json"
    json_path.write_text(json.dumps(workload("w1", "a\x00b", title="t\x00"), indent=1))
    yaml_path = tmp_path / "nul.yaml"
    yaml_path.write_text(f"apiVersion: {API}\nkind: Workload\nmetadata:\n  name: w2\nspec:\n  operation: ok\n"
                         '  parameters:\n    "n\\0te": x\n    dims: "1x\\x00"\n')
    code, out, err = kidx("apply", "-f", str(json_path), "-f", str(yaml_path))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f'error: {json_path}, document 1, line 6: metadata.title: Invalid value: "t\\u0000": a NUL character '
        "(\\u0000) cannot be stored",
        f'error: {json_path}, document 1, line 9: spec.operation: Invalid value: "a\\u0000b": a NUL character '
        "(\\u0000) cannot be stored",
        f'error: {yaml_path}, document 1, line 8: spec.parameters: Invalid value: the key "n\\u0000te" holds a '
        "NUL character (\\u0000), which cannot be stored",
        f'error: {yaml_path}, document 1, line 9: spec.parameters.dims: Invalid value: "1x\\u0000": a NUL character '
        "(\\u0000) cannot be stored",
        "error: 4 problems found; nothing was changed",
    ]
    assert not store.exists()

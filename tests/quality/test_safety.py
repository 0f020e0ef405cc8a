"""Hostile and malformed input to ``kidx apply -f FILE`` (docs/design.md §2, §3, §6).

Every case must: exit 1; print only ``error: …`` lines on stderr that name the file (and the
document, line and field where they apply); print nothing on stdout; never show a Python
traceback; and leave the store byte-for-byte as it was (every file under the store folder,
catalog.sqlite included, and the output of ``kidx get all -o json``).

The store is seeded first, and every bad manifest uses a new name, so a case that were
wrongly accepted would change the store and fail the snapshot comparison too.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

API = "kernelindex.dev/v1alpha1"
SEED = json.loads((REPO / "docs" / "examples" / "seed-bundle.json").read_text(encoding="utf-8"))
NEW_NAME = "safety-run"  # not in the seeded store: accepting a case would create it


# --- building inputs ---------------------------------------------------------------------


def run_manifest() -> dict:
    """The seed's run under a new name."""
    manifest = copy.deepcopy(SEED["run"])
    manifest["metadata"]["name"] = NEW_NAME
    return manifest


def run_json(mutate=None) -> bytes:
    manifest = run_manifest()
    if mutate is not None:
        mutate(manifest)
    return json.dumps(manifest).encode()  # \u escapes: lone surrogates survive as text


def run_json_with_raw(raw: str) -> bytes:
    """The run as JSON with ``spec.timing.latencyNs.median`` written as the raw text ``raw``."""
    manifest = run_manifest()
    manifest["spec"]["timing"]["latencyNs"]["median"] = "@@RAW@@"
    return json.dumps(manifest).replace('"@@RAW@@"', raw).encode()


# line numbers below refer to this text (1-based): status is line 8, median line 11
RUN_YAML = """\
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: safety-run
  labels:
    liger_version: "0.6.1"
spec:
  status: {status}
  timing:
    latencyNs:
      median: {median}
    primaryStatistic: median
  sourceNative:
    source: liger-kernel-bench
{extra}"""


def run_yaml(status="passed", median="417536", extra: str = "") -> bytes:
    """The run as YAML; ``extra`` lines go into ``spec.sourceNative`` (which keeps unknown fields)."""
    extra_lines = "".join(f"    {line}\n" for line in extra.splitlines())
    return RUN_YAML.format(status=status, median=median, extra=extra_lines).encode()


def set_path(path: str, value):
    def mutate(manifest):
        *parents, last = path.split(".")
        node = manifest
        for part in parents:
            node = node[part]
        node[last] = value

    return mutate


def drop(path: str):
    def mutate(manifest):
        *parents, last = path.split(".")
        node = manifest
        for part in parents:
            node = node[part]
        del node[last]

    return mutate


def alias_bomb() -> bytes:
    """Billion laughs: 9 levels of 9 aliases, 9**9 (387 million) leaves when expanded."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous = f"*l{level - 1}"
        lines.append(f"l{level}: &l{level} [{', '.join([previous] * 9)}]")
    lines.append("apiVersion: kernelindex.dev/v1alpha1")
    return ("\n".join(lines) + "\n").encode()


def deep_json(levels: int) -> bytes:
    return ('{"a":' * levels + "1" + "}" * levels).encode()


def deep_json_in_run(levels: int) -> bytes:
    manifest = run_manifest()
    manifest["spec"]["sourceNative"]["deep"] = "@@DEEP@@"
    return json.dumps(manifest).replace('"@@DEEP@@"', '{"a":' * levels + "1" + "}" * levels).encode()


# --- the cases ---------------------------------------------------------------------------

# id -> (file name, content, fragments that must all appear in stderr)
CASES: dict[str, tuple[str, bytes, list[str]]] = {
    # encoding and syntax
    "non-utf8": ("bad.yaml", run_yaml().replace(b"safety-run", b"safety-\xff-run"), ["not UTF-8 text", "line 4"]),
    "utf16-bom-then-garbage": ("bad.yaml", b"\xff\xfe\x00\xd8", ["not UTF-8 text"]),
    "invalid-yaml": ("bad.yaml", b"apiVersion: a\nkind: [unclosed\n", ["invalid YAML", "line 3"]),
    "invalid-yaml-tab-indent": ("bad.yaml", b"apiVersion: a\nkind: b\n\tmetadata: x\n", ["invalid YAML", "tab"]),
    "invalid-json": ("bad.json", b'{"apiVersion": "a", "kind": }', ["invalid JSON: Expecting value"]),
    "invalid-json-truncated": ("bad.json", run_json()[:-10], ["invalid JSON"]),
    "invalid-json-trailing-comma": ("bad.json", b'{"apiVersion": "a",}', ["invalid JSON"]),
    # resource exhaustion
    "yaml-alias-bomb": ("bad.yaml", alias_bomb(), ["more than 200000 values", "aliases"]),
    "yaml-recursive-alias": ("bad.yaml", b"a: &a [*a]\n", ["nested more than 64 levels"]),
    "json-nested-10000": ("bad.json", deep_json(10_000), ["nested too deeply"]),
    "json-arrays-nested-10000": ("bad.json", b"[" * 10_000 + b"]" * 10_000, ["nested too deeply"]),
    "yaml-flow-nested-10000": ("bad.yaml", b"[" * 10_000 + b"]" * 10_000, ["nested more than 64 levels"]),
    "yaml-block-nested-10000": ("bad.yaml", b"- " * 10_000 + b"x\n", ["nested more than 64 levels"]),
    "json-nested-100": ("bad.json", deep_json_in_run(100), ["spec.sourceNative.deep.a", "nested more than 64 levels"]),
    "yaml-nested-100": (
        "bad.yaml", run_yaml(extra="deep: " + "[" * 100 + "]" * 100), ["spec.sourceNative.deep[0]", "nested more than 64"]
    ),
    # duplicate keys
    "duplicate-key-yaml": ("bad.yaml", b"apiVersion: a\nkind: B\nkind: C\n", ['duplicate key "kind"', "line 3"]),
    "duplicate-key-yaml-nested": (
        "bad.yaml", run_yaml(extra="source: again"), ['duplicate key "source"']
    ),
    "duplicate-key-json": (
        "bad.json", run_json().replace(b'"kind": ', b'"kind": "X", "kind": ', 1), ['duplicate key "kind"']
    ),
    # numbers
    "int-above-int64-json": ("bad.json", run_json_with_raw(str(2**63)), ["spec.timing.latencyNs.median", "integer out of range"]),
    "int-below-int64-json": ("bad.json", run_json_with_raw(str(-(2**63) - 1)), ["integer out of range"]),
    "int-above-int64-yaml": ("bad.yaml", run_yaml(median=str(2**63)), ["spec.timing.latencyNs.median", "integer out of range"]),
    "int-5000-digits-json": ("bad.json", run_json_with_raw("9" * 5000), ["integer out of range"]),
    "int-5000-digits-yaml": ("bad.yaml", run_yaml(median="9" * 5000), ["integer out of range"]),
    "int-5000-digits-yaml-negative": ("bad.yaml", run_yaml(median="-" + "9" * 5000), ["integer out of range"]),
    "int-5000-digits-yaml-tagged": ("bad.yaml", run_yaml(median="!!int " + "9" * 5000), ["integer out of range"]),
    "hex-int-huge-yaml": ("bad.yaml", run_yaml(median="0x" + "f" * 5000), ["integer out of range"]),
    "nan-json": ("bad.json", run_json_with_raw("NaN"), ["NaN is not valid JSON"]),
    "infinity-json": ("bad.json", run_json_with_raw("Infinity"), ["Infinity is not valid JSON"]),
    "minus-infinity-json": ("bad.json", run_json_with_raw("-Infinity"), ["-Infinity is not valid JSON"]),
    "1e400-json": ("bad.json", run_json_with_raw("1e400"), ["spec.timing.latencyNs.median", "NaN and infinite"]),
    "nan-yaml": ("bad.yaml", run_yaml(median=".nan"), ["spec.timing.latencyNs.median", "NaN and infinite"]),
    "NaN-yaml": ("bad.yaml", run_yaml(median=".NaN"), ["NaN and infinite"]),
    "inf-yaml": ("bad.yaml", run_yaml(median=".inf"), ["NaN and infinite"]),
    "minus-inf-yaml": ("bad.yaml", run_yaml(median="-.Inf"), ["NaN and infinite"]),
    "1e400-yaml": ("bad.yaml", run_yaml(median="1e400"), ["NaN and infinite"]),
    "huge-float-digits-yaml": ("bad.yaml", run_yaml(median="1" + "0" * 5000 + ".5"), ["NaN and infinite"]),
    # nothing to apply
    "empty-file": ("bad.yaml", b"", ["no objects in the input"]),
    "whitespace-only": ("bad.yaml", b"  \n\n\t\n", ["no objects in the input"]),
    "comments-only": ("bad.yaml", b"# a comment\n   # another one\n", ["no objects in the input"]),
    "empty-documents": ("bad.yaml", b"---\n...\n---\n", ["no objects in the input"]),
    "null-document": ("bad.yaml", b"null\n", ["no objects in the input"]),
    "empty-json-object": ("bad.json", b"{}", ["Required value"]),
    # not a manifest
    "list-document-yaml": ("bad.yaml", b"- a\n- b\n", ["expected a manifest (a mapping), found a list"]),
    "list-document-json": ("bad.json", b"[1, 2]", ["expected a manifest (a mapping), found a list"]),
    "scalar-document-yaml": ("bad.yaml", b"hello\n", ["expected a manifest (a mapping), found a string"]),
    "scalar-document-json": ("bad.json", b"42", ["expected a manifest (a mapping), found a number"]),
    "boolean-document": ("bad.yaml", b"true\n", ["found a boolean"]),
    # manifest structure
    "missing-apiVersion": ("bad.json", run_json(drop("apiVersion")), ["apiVersion: Required value"]),
    "missing-kind": ("bad.json", run_json(drop("kind")), ["kind: Required value"]),
    "missing-metadata": ("bad.json", run_json(drop("metadata")), ["metadata: Required value"]),
    "missing-spec": ("bad.json", run_json(drop("spec")), ["spec: Required value"]),
    "missing-name": ("bad.json", run_json(drop("metadata.name")), ["metadata.name: Required value"]),
    "missing-status": ("bad.json", run_json(drop("spec.status")), ["spec.status: Required value"]),
    "unknown-kind": ("bad.json", run_json(set_path("kind", "Pod")), ['no matches for kind "Pod"']),
    "wrong-apiVersion": ("bad.json", run_json(set_path("apiVersion", "v1")), ['no matches for kind "BenchmarkRun" in version "v1"']),
    "apiVersion-not-a-string": ("bad.json", run_json(set_path("apiVersion", 1)), ["apiVersion"]),
    "unknown-top-level-field": ("bad.json", run_json(set_path("status", {"phase": "x"})), ["status: Unknown field"]),
    "unknown-spec-field": ("bad.json", run_json(set_path("spec.speed", 1)), ["spec.speed: Unknown field"]),
    "unknown-metadata-field": ("bad.json", run_json(set_path("metadata.namespace", "x")), ["metadata.namespace: Unknown field"]),
    # field types and vocabularies
    "status-wrong-type": ("bad.json", run_json(set_path("spec.status", 5)), ["spec.status: Invalid value: 5 is not of type 'string'"]),
    "median-wrong-type": ("bad.json", run_json(set_path("spec.timing.latencyNs.median", "fast")), ["is not of type 'number'"]),
    "median-boolean": ("bad.json", run_json(set_path("spec.timing.latencyNs.median", True)), ["is not of type 'number'"]),
    "median-negative": ("bad.json", run_json(set_path("spec.timing.latencyNs.median", -1)), ["is less than the minimum of 0"]),
    "measurements-not-a-list": ("bad.json", run_json(set_path("spec.measurements", {"a": 1})), ["spec.measurements", "array"]),
    "spec-is-a-list": ("bad.json", run_json(set_path("spec", [])), ["spec: Invalid value: [] is not of type 'object'"]),
    "labels-is-a-list": ("bad.json", run_json(set_path("metadata.labels", ["a"])), ["metadata.labels", "object"]),
    "label-value-number": ("bad.json", run_json(set_path("metadata.labels", {"v": 1})), ["metadata.labels.v", "string"]),
    "title-null": ("bad.json", run_json(set_path("metadata.title", None)), ["metadata.title", "null"]),
    "status-outside-vocabulary": ("bad.json", run_json(set_path("spec.status", "great")), ['Unsupported value: "great"']),
    "status-wrong-case": ("bad.json", run_json(set_path("spec.status", "Passed")), ['Unsupported value: "Passed"']),
    "unit-outside-vocabulary": (
        "bad.json", run_json(set_path("spec.measurements", [{"metric": "l", "statistic": "p", "unit": "ms2", "value": 1}])),
        ["spec.measurements[0].unit", "Unsupported value"],
    ),
    "status-yaml-bad": ("bad.yaml", run_yaml(status="great"), ["line 8: spec.status: Unsupported value"]),
    # digests
    "digest-short": ("bad.json", run_json(set_path("spec.protocolDigest", "sha256:abc")), ['spec.protocolDigest: Invalid value: "sha256:abc" does not match']),
    "digest-upper-hex": ("bad.json", run_json(set_path("spec.protocolDigest", "sha256:" + "A" * 64)), ["spec.protocolDigest"]),
    "digest-no-prefix": ("bad.json", run_json(set_path("spec.workloadDigest", "a" * 64)), ["spec.workloadDigest"]),
    "digest-other-algorithm": ("bad.json", run_json(set_path("spec.environmentDigest", "md5:" + "a" * 64)), ["spec.environmentDigest"]),
    "digest-65-hex": ("bad.json", run_json(set_path("spec.implementationDigest", "sha256:" + "a" * 65)), ["spec.implementationDigest"]),
    "digest-trailing-newline": ("bad.json", run_json(set_path("spec.protocolDigest", "sha256:" + "a" * 64 + "\n")), ["spec.protocolDigest"]),
    # names and labels
    "name-upper-case": ("bad.json", run_json(set_path("metadata.name", "Safety-Run")), ['metadata.name: Invalid value: "Safety-Run"']),
    "name-slash": ("bad.json", run_json(set_path("metadata.name", "a/b")), ["metadata.name", "a name must be"]),
    "name-spaces": ("bad.json", run_json(set_path("metadata.name", "a b")), ["metadata.name", "a name must be"]),
    "name-dot-dot": ("bad.json", run_json(set_path("metadata.name", "..")), ["metadata.name", "a name must be"]),
    "name-traversal": ("bad.json", run_json(set_path("metadata.name", "../../etc/passwd")), ["metadata.name", "a name must be"]),
    "name-dot": ("bad.json", run_json(set_path("metadata.name", ".")), ["metadata.name"]),
    "name-leading-dash": ("bad.json", run_json(set_path("metadata.name", "-run")), ["metadata.name"]),
    "name-empty": ("bad.json", run_json(set_path("metadata.name", "")), ["metadata.name"]),
    "name-254-characters": ("bad.json", run_json(set_path("metadata.name", "a" * 254)), ["metadata.name"]),
    "name-non-ascii": ("bad.json", run_json(set_path("metadata.name", "läuft")), ["metadata.name"]),
    "name-newline": ("bad.json", run_json(set_path("metadata.name", "run\n")), ["metadata.name"]),
    "name-nul": ("bad.json", run_json(set_path("metadata.name", "run\u0000x")), ["metadata.name"]),
    "label-value-too-long": (
        "bad.json", run_json(set_path("metadata.labels", {"liger_version": "x" * 64})), ["metadata.labels.liger_version", "63 characters"]
    ),
    "label-key-invalid": ("bad.json", run_json(set_path("metadata.labels", {"a b": "x"})), ['metadata.labels.a b: Invalid value: "a b"']),
    "label-key-two-slashes": ("bad.json", run_json(set_path("metadata.labels", {"a/b/c": "x"})), ["at most one '/'"]),
    # YAML-only constructs that are not JSON data
    "python-object-tag": ("bad.yaml", run_yaml(extra="x: !!python/object:os.system {}"), ["invalid YAML", "python/object"]),
    "python-apply-tag": ("bad.yaml", b'!!python/object/apply:os.system ["echo pwned"]\n', ["invalid YAML", "python/object/apply"]),
    "python-name-tag": ("bad.yaml", run_yaml(extra="x: !!python/name:os.system"), ["invalid YAML"]),
    "custom-tag": ("bad.yaml", run_yaml(extra="x: !local foo"), ["invalid YAML", "!local"]),
    "binary-tag": ("bad.yaml", run_yaml(extra="x: !!binary aGVsbG8="), ["spec.sourceNative.x", "tag !!binary is not supported"]),
    "set-tag": ("bad.yaml", run_yaml(extra="x: !!set {a, b}"), ["spec.sourceNative.x", "tag !!set is not supported"]),
    "omap-tag": ("bad.yaml", run_yaml(extra="x: !!omap [a: 1]"), ["spec.sourceNative.x", "tag !!omap is not supported"]),
    "float-tag-not-a-number": ("bad.yaml", run_yaml(median="!!float abc"), ["invalid YAML", "'abc'"]),
    "int-tag-not-a-number": ("bad.yaml", run_yaml(median="!!int abc"), ["invalid YAML", "'abc'"]),
    "bool-tag-not-a-boolean": ("bad.yaml", run_yaml(median="!!bool maybe"), ["invalid YAML", "'maybe'"]),
    "integer-key": ("bad.yaml", run_yaml(extra="1: one"), ["spec.sourceNative", "mapping key 1 is not a string"]),
    "null-key": ("bad.yaml", run_yaml(extra="~: one"), ["mapping key None is not a string"]),
    "boolean-key": ("bad.yaml", run_yaml(extra="true: one"), ["mapping key True is not a string"]),
    "float-key": ("bad.yaml", run_yaml(extra="1.5: one"), ["mapping key 1.5 is not a string"]),
    "sequence-key": ("bad.yaml", run_yaml(extra="? [a, b]\n: one"), ["invalid YAML", "a mapping key must be a scalar"]),
    "mapping-key": ("bad.yaml", run_yaml(extra="? {a: 1}\n: one"), ["invalid YAML", "a mapping key must be a scalar"]),
    # text that has no UTF-8 form
    "lone-surrogate-in-spec": (
        "bad.json", run_json(set_path("spec.sourceNative.source", "x\ud800")), ["spec.sourceNative.source", "lone UTF-16 surrogate"]
    ),
    "lone-surrogate-in-title": ("bad.json", run_json(set_path("metadata.title", "\udc00")), ["metadata.title", "surrogate"]),
    "lone-surrogate-in-key": (
        "bad.json", run_json(set_path("spec.sourceNative.metrics", {"\udfff": 1})), ["spec.sourceNative.metrics", "surrogate"]
    ),
}

# Full stderr, pinned word for word for representative cases ({p} is the file path).
EXACT = {
    "non-utf8": "error: {p}, line 4: not UTF-8 text: byte 0xff at offset 81\n",
    "invalid-json": "error: {p}, document 1, line 1: invalid JSON: Expecting value (column 29)\n",
    "duplicate-key-json": 'error: {p}, document 1, line 1: invalid JSON: duplicate key "kind"\n',
    "duplicate-key-yaml": 'error: {p}, document 1, line 3: kind: invalid YAML: duplicate key "kind"\n',
    "int-5000-digits-yaml": (
        "error: {p}, document 1, line 11: spec.timing.latencyNs.median: invalid YAML: integer out of range "
        "(must fit in 64 bits)\n"
    ),
    "int-above-int64-json": (
        "error: {p}, document 1, line 1: spec.timing.latencyNs.median: integer out of range (must fit in 64 bits)\n"
    ),
    "nan-yaml": "error: {p}, document 1, line 11: spec.timing.latencyNs.median: NaN and infinite numbers are not allowed\n",
    "empty-file": "error: {p}: no objects in the input (the file is empty)\n",
    "comments-only": "error: {p}: no objects in the input (only comments or empty documents)\n",
    "list-document-yaml": "error: {p}, document 1, line 1: expected a manifest (a mapping), found a list\n",
    'missing-spec': 'error: {p}, document 1, line 1: spec: Required value: "spec" is a required property\n',
    "wrong-apiVersion": (
        'error: {p}, document 1, line 1: kind: no matches for kind "BenchmarkRun" in version "v1" (object "safety-run")\n'
    ),
    "status-yaml-bad": (
        'error: {p}, document 1, line 8: spec.status: Unsupported value: "great" is not one of '
        '["passed", "failed", "error", "skipped"]\n'
    ),
    "name-upper-case": (
        'error: {p}, document 1, line 1: metadata.name: Invalid value: "Safety-Run": a name must be 1 to 253 '
        "characters of lower-case letters, digits, '-', '.' and '_', starting with a letter or digit\n"
    ),
    "unknown-top-level-field": (
        'error: {p}, document 1, line 1: status: Unknown field: Additional properties are not allowed ("status" was unexpected)\n'
    ),
    "binary-tag": (
        "error: {p}, document 1, line 15: spec.sourceNative.x: invalid YAML: tag !!binary is not supported "
        "(kidx reads plain JSON data: strings, numbers, booleans, null, maps, lists)\n"
    ),
    "python-apply-tag": (
        "error: {p}, document 1, line 1: invalid YAML: tag !!python/object/apply:os.system is not supported "
        "(kidx reads plain maps and lists)\n"
    ),
}


# --- helpers -----------------------------------------------------------------------------


def store_files(store: Path) -> dict[str, str]:
    """sha256 of every file under the store folder (objects, catalog.sqlite, any -wal/-shm).

    In-process commands leave their SQLite connection to the garbage collector; closing the
    last connection checkpoints the WAL into catalog.sqlite (same data, other bytes), so
    every connection is closed first: what is compared is what a new process would find.
    The -shm file is an index SQLite rebuilds, and an empty -wal is the same as none: a
    read-only connection leaves both behind, the last read-write one removes them.
    """
    gc.collect()
    return {
        path.relative_to(store).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(store.rglob("*"))
        if path.is_file() and not path.name.endswith("-shm") and not (path.name.endswith("-wal") and not path.stat().st_size)
    }


class Snapshot:
    def __init__(self, kidx, store: Path):
        self.kidx, self.store = kidx, store
        code, out, err = kidx("get", "all", "-o", "json")
        assert code == 0, err
        self.listing = out
        self.files = store_files(store)

    def assert_unchanged(self) -> None:
        assert store_files(self.store) == self.files, "the store's files changed"
        code, out, err = self.kidx("get", "all", "-o", "json")
        assert code == 0, err
        assert out == self.listing


@pytest.fixture
def seeded(kidx, store, tmp_path) -> Snapshot:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    code, out, err = kidx("apply", "-f", str(seed))
    assert code == 0, err
    assert "Traceback" not in err
    snapshot = Snapshot(kidx, store)
    assert len(json.loads(snapshot.listing)["items"]) == 3
    assert any(name.startswith("objects/sha256/") for name in snapshot.files) and "catalog.sqlite" in snapshot.files
    return snapshot


def assert_clean_failure(code: int, out: str, err: str, path: Path) -> None:
    assert "Traceback" not in err, err
    assert "KIDX_DEBUG" not in err and "unexpected " not in err, err  # the CLI's catch-all: a bug
    assert code == 1, (code, out, err)
    assert out == "", out
    lines = err.splitlines()
    assert lines, "no error message"
    assert all(line.startswith("error: ") for line in lines), err
    assert lines[0].startswith(f"error: {path}"), err  # names the file


# --- tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_cleanly_and_changes_nothing(case, kidx, seeded, tmp_path):
    name, content, fragments = CASES[case]
    path = tmp_path / "input" / name
    path.parent.mkdir()
    path.write_bytes(content)

    code, out, err = kidx("apply", "-f", str(path))

    assert_clean_failure(code, out, err, path)
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    if case in EXACT:
        assert err == EXACT[case].format(p=path)
    seeded.assert_unchanged()


def test_the_exact_cases_are_cases():
    assert set(EXACT) <= set(CASES)


def test_dry_run_of_bad_input_is_refused_the_same_way(kidx, seeded, tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(CASES["status-outside-vocabulary"][1])
    code, out, err = kidx("apply", "--dry-run=client", "-f", str(path))
    assert_clean_failure(code, out, err, path)
    seeded.assert_unchanged()


def test_every_problem_is_reported_with_its_document(kidx, seeded, tmp_path):
    path = tmp_path / "bad.yaml"
    good = run_yaml().decode()
    bad_status = run_yaml(status="great").decode().replace("safety-run", "second")
    bad_name = good.replace("safety-run", "Third")
    path.write_text(good + "---\n" + bad_status + "---\n" + bad_name, encoding="utf-8")

    code, out, err = kidx("apply", "-f", str(path))

    assert_clean_failure(code, out, err, path)
    lines = err.splitlines()
    assert lines[0] == f'error: {path}, document 2, line 23: spec.status: Unsupported value: "great" is not one of ["passed", "failed", "error", "skipped"]'
    assert lines[1].startswith(f'error: {path}, document 3, line 34: metadata.name: Invalid value: "Third"')
    assert lines[2] == "error: 2 problems found; nothing was changed"
    assert len(lines) == 3
    seeded.assert_unchanged()


def _new_protocol(name: str) -> dict:
    protocol = copy.deepcopy(SEED["protocol"])
    protocol["metadata"]["name"] = name
    protocol["spec"]["harness"]["version"] = name  # a new digest too
    return protocol


def _batch_files(folder: Path, last: bytes, last_name: str = "c.json") -> list[Path]:
    folder.mkdir()
    first = folder / "a.yaml"
    first.write_text(json.dumps(_new_protocol("batch-protocol")), encoding="utf-8")  # JSON is YAML
    second = folder / "b.json"
    run = run_manifest()
    run["metadata"]["name"] = "batch-run"
    second.write_text(json.dumps(run), encoding="utf-8")
    third = folder / last_name
    third.write_bytes(last)
    return [first, second, third]


LATE_FAILURE = json.dumps(
    {
        "apiVersion": API,
        "kind": "BenchmarkRun",
        "metadata": {"name": "batch-ref-run"},
        # valid by schema; only found wrong while planning, inside the write transaction
        "spec": {"status": "passed", "protocolRef": {"name": "no-such-protocol"}},
    }
).encode()


@pytest.mark.parametrize(
    "last, fragment",
    [
        (CASES["status-outside-vocabulary"][1], "Unsupported value"),
        (CASES["invalid-json"][1], "invalid JSON"),
        (CASES["int-5000-digits-json"][1], "integer out of range"),
        (LATE_FAILURE, 'Not found: BenchmarkProtocol "no-such-protocol"'),
    ],
    ids=["invalid-field", "syntax", "huge-integer", "reference-not-found-while-writing"],
)
@pytest.mark.parametrize("how", ["three-flags", "comma-list", "folder"])
def test_batch_of_three_files_with_only_the_last_bad_writes_nothing(kidx, seeded, tmp_path, last, fragment, how):
    files = _batch_files(tmp_path / "batch", last)
    if how == "three-flags":
        arguments = [argument for path in files for argument in ("-f", str(path))]
    elif how == "comma-list":
        arguments = ["-f", ",".join(str(path) for path in files)]
    else:
        arguments = ["-f", str(tmp_path / "batch")]

    code, out, err = kidx("apply", *arguments)

    assert_clean_failure(code, out, err, files[2])
    assert fragment in err
    assert str(files[0]) not in err and str(files[1]) not in err
    seeded.assert_unchanged()
    # the same batch without its bad file is accepted: the first two really were fine
    code, out, err = kidx("apply", *[argument for path in files[:2] for argument in ("-f", str(path))])
    assert code == 0, err
    assert out.splitlines() == [
        "benchmarkprotocol.kernelindex.dev/batch-protocol created",
        "benchmarkrun.kernelindex.dev/batch-run created",
    ]


def test_unreadable_file_is_refused_cleanly(kidx, seeded, tmp_path):
    missing = tmp_path / "missing.yaml"
    code, out, err = kidx("apply", "-f", str(missing))
    assert code == 1 and out == "" and "Traceback" not in err
    assert err == f'error: the path "{missing}" does not exist\n'
    seeded.assert_unchanged()


# --- as a real process: no traceback, no crash -------------------------------------------

PROCESS_CASES = [
    "non-utf8",
    "yaml-alias-bomb",
    "json-nested-10000",
    "yaml-flow-nested-10000",
    "int-5000-digits-yaml",
    "int-5000-digits-json",
    "bool-tag-not-a-boolean",
    "lone-surrogate-in-title",
    "python-apply-tag",
]


@pytest.mark.parametrize("case", PROCESS_CASES)
def test_bad_input_as_a_process(case, kidx_process, seeded, tmp_path):
    name, content, fragments = CASES[case]
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = kidx_process("apply", "-f", str(path))
    assert_clean_failure(code, out, err, path)
    for fragment in fragments:
        assert fragment in err
    seeded.assert_unchanged()


def test_bad_input_on_stdin_names_stdin(kidx_process, seeded):
    code, out, err = kidx_process("apply", "-f", "-", stdin=CASES["status-outside-vocabulary"][1])
    assert "Traceback" not in err
    assert code == 1 and out == ""
    assert err.startswith("error: STDIN, document 1, line 1: spec.status: Unsupported value")
    seeded.assert_unchanged()


# ruamel.yaml's C composer recurses in C: past ~30,000 levels it would overflow the C stack
# (SIGSEGV) unless kidx bounds the depth first (kidx.manifests.parsing._check_nesting)
@pytest.mark.parametrize(
    "text",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b"- " * 100_000 + b"x\n",
    ],
    ids=["flow", "block"],
)
def test_yaml_nested_100000_levels_does_not_crash(text, tmp_path, store):
    path = tmp_path / "deep.yaml"
    path.write_bytes(text)
    completed = subprocess.run(
        [sys.executable, "-m", "kidx", "apply", "-f", str(path), "--store", str(store)],
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    err = completed.stderr.decode()
    assert completed.returncode == 1, (completed.returncode, err[-500:])
    assert re.match(rf"error: {re.escape(str(path))}.*nested", err) and "Traceback" not in err
    assert not store.exists()


def test_brace_led_yaml_outside_json_files_is_read_as_yaml(kidx, store):
    """`{kind: …}` is YAML flow style, not JSON: outside .json files it gets a YAML reading."""
    text = (
        "{apiVersion: kernelindex.dev/v1alpha1, kind: Implementation, metadata: {name: flow-impl}, "
        "spec: {library: torch}}\n"
    )
    assert kidx("apply", "-f", "-", stdin=text) == (
        0, "implementation.kernelindex.dev/flow-impl created\n", ""
    )


def test_brace_led_text_that_is_neither_reports_the_json_error(kidx, store):
    code, out, err = kidx("apply", "-f", "-", stdin='{"a": 1,, }\n')
    assert (code, out) == (1, "")
    assert err == "error: STDIN, document 1, line 1: invalid JSON: Expecting property name enclosed in double quotes (column 9)\n"
    assert not store.exists()

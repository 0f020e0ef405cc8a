"""Identity: canonical JSON and digests (docs/design.md §2), checked against the seed."""

from __future__ import annotations

import copy
import hashlib
import json
import math

import pytest
from conftest import (
    SEED_BUNDLE,
    SEED_ENVIRONMENT_DIGEST,
    SEED_PROTOCOL_DIGEST,
    SEED_RUN_DIGEST,
    SEED_RUN_NAME,
)

from kidx.identity import CanonicalError, canonical_json, digest_of, identity_of

SEED_RUN_YAML = f"""\
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkRun
metadata:
  name: {SEED_RUN_NAME}
  title: Llama 4 rotary position embedding · liger · backward
  labels:
    liger_version: 0.6.1
spec:
  status: passed
  timing:
    latencyNs:
      median: 417536
    primaryStatistic: median
  observedAt: 2025-08-07T21:42:15.000Z
  measurements:
  - unit: ns
    value: 417056
    metric: latency
    statistic: p20
  - unit: ns
    value: 418138
    metric: latency
    statistic: p80
  sourceNative:
    source: liger-kernel-bench
    metrics:
      ms_20: 0.41705599427223206
      ms_50: 0.4175359904766083
      ms_80: 0.4181375920772552
    benchmark: llama4_rope/backward
    externalId: llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15
  protocolDigest: sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8
  workloadDigest: sha256:acfd1d7e6ca5aee0df8b2dfece34e3144b249d3671745b21c015a45f41816344
  environmentDigest: sha256:2750ae381d6de582f1eb6b9008e0987463d19ede8af127d97d76c5ae09121393
  implementationDigest: sha256:7b16e7caa07229eb63274c52969e9742bd849258f08f13b57ebaa55928740b6d
---
apiVersion: kernelindex.dev/v1alpha1
kind: BenchmarkProtocol
metadata:
  name: liger-bench-do-bench-backward
  title: Liger benchmark harness · backward pass
spec:
  harness:
    name: Liger-Kernel benchmark scripts
    repository: https://github.com/linkedin/Liger-Kernel
  measurement:
    timer: cuda_events
    primaryStatistic: median
  comparability:
    notes: >-
      Timed: the backward pass of the module output given a random upstream gradient,
      via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread).
      The upstream CSV records no CUDA, driver, or torch version; the Liger release rides
      each run's labels. Comparable only within one kernel, workload, timed pass, and GPU.
    family: liger_kernel_bench
---
apiVersion: kernelindex.dev/v1alpha1
kind: ExecutionEnvironment
metadata:
  name: liger-bench-nvidia-h100-80gb-hbm3
  title: Liger benchmark host · H100 80GB HBM3
spec:
  hardware:
    vendor: nvidia
    product: NVIDIA H100
    formFactor: 80GB HBM3
    architecture: sm_90
  software: {{}}
"""

SEED_DIGEST_LINES = (
    f"{SEED_RUN_DIGEST}  BenchmarkRun/{SEED_RUN_NAME}\n"
    f"{SEED_PROTOCOL_DIGEST}  BenchmarkProtocol/liger-bench-do-bench-backward\n"
    f"{SEED_ENVIRONMENT_DIGEST}  ExecutionEnvironment/liger-bench-nvidia-h100-80gb-hbm3\n"
)


# ---------------------------------------------------------------- the seed


def test_seed_protocol_hashes_to_the_run_protocol_digest(seed_bundle):
    assert digest_of(seed_bundle["protocol"]) == SEED_PROTOCOL_DIGEST
    assert seed_bundle["run"]["spec"]["protocolDigest"] == SEED_PROTOCOL_DIGEST


def test_seed_environment_hashes_to_the_run_environment_digest(seed_bundle):
    assert digest_of(seed_bundle["environment"]) == SEED_ENVIRONMENT_DIGEST
    assert seed_bundle["run"]["spec"]["environmentDigest"] == SEED_ENVIRONMENT_DIGEST


def test_seed_run_digest(seed_bundle):
    assert digest_of(seed_bundle["run"]) == SEED_RUN_DIGEST


def test_digest_is_sha256_of_canonical_identity(seed_bundle):
    protocol = seed_bundle["protocol"]
    identity = {"apiVersion": protocol["apiVersion"], "kind": protocol["kind"], "spec": protocol["spec"]}
    assert identity_of(protocol) == identity
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert canonical_json(identity) == data
    assert digest_of(protocol) == "sha256:" + hashlib.sha256(data).hexdigest()


def test_metadata_never_changes_the_digest(seed_bundle):
    run = copy.deepcopy(seed_bundle["run"])
    run["metadata"] = {"name": "other", "title": "another title", "labels": {"a": "b"}, "annotations": {"x": "y"}}
    assert digest_of(run) == SEED_RUN_DIGEST
    del run["metadata"]
    assert digest_of(run) == SEED_RUN_DIGEST


def test_any_spec_change_changes_the_digest(seed_bundle):
    run = copy.deepcopy(seed_bundle["run"])
    run["spec"]["status"] = "failed"
    assert digest_of(run) != SEED_RUN_DIGEST


def test_key_order_in_the_input_does_not_matter(seed_bundle):
    protocol = seed_bundle["protocol"]
    reversed_protocol = json.loads(json.dumps(protocol), object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert list(reversed_protocol) != list(protocol)
    assert digest_of(reversed_protocol) == SEED_PROTOCOL_DIGEST


# ---------------------------------------------------------------- YAML and JSON agree


def test_seed_as_yaml_with_unquoted_timestamp_gives_the_same_digests(kidx, tmp_path):
    yaml_file = tmp_path / "seed.yaml"
    yaml_file.write_text(SEED_RUN_YAML, encoding="utf-8")
    assert kidx("digest", "-f", str(yaml_file)) == (0, SEED_DIGEST_LINES, "")
    assert kidx("digest", "-f", str(SEED_BUNDLE)) == (0, SEED_DIGEST_LINES, "")


def test_yaml_timestamps_stay_strings_exactly_as_written(tmp_path):
    from kidx.manifests.reader import expand_sources, read_sources

    yaml_file = tmp_path / "seed.yaml"
    yaml_file.write_text(SEED_RUN_YAML, encoding="utf-8")
    result = read_sources(expand_sources([str(yaml_file)], False))
    assert result.problems == []
    run, protocol, environment = (document.body for document in result.documents)
    assert run["spec"]["observedAt"] == "2025-08-07T21:42:15.000Z"
    assert digest_of(run) == SEED_RUN_DIGEST
    assert digest_of(protocol) == SEED_PROTOCOL_DIGEST
    assert digest_of(environment) == SEED_ENVIRONMENT_DIGEST


@pytest.mark.parametrize(
    "written",
    ["2025-08-07", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2025-08-07T21:42:15Z"],
)
def test_other_yaml_timestamp_forms_stay_strings(written):
    from kidx.manifests.parsing import parse_yaml_stream

    (document,) = parse_yaml_stream(f"observedAt: {written}\n")
    assert document.data == {"observedAt": written}


def test_yaml_1_2_booleans(tmp_path):
    from kidx.manifests.parsing import parse_yaml_stream

    (document,) = parse_yaml_stream("a: yes\nb: no\nc: on\nd: off\ne: true\nf: false\n")
    assert document.data == {"a": "yes", "b": "no", "c": "on", "d": "off", "e": True, "f": False}


WORKLOAD_JSON = '{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"}, "spec": {"operation": "op", "parameters": {"hidden": 8192, "scale": 0.5, "mode": "fwd"}}}'
WORKLOAD_YAML = """\
apiVersion: kernelindex.dev/v1alpha1
kind: Workload
metadata:
  name: w
spec:
  operation: op
  parameters:
    mode: fwd
    scale: 0.5
    hidden: 8192
"""


def test_json_and_yaml_of_one_manifest_give_one_digest(kidx, tmp_path):
    (tmp_path / "w.json").write_text(WORKLOAD_JSON)
    (tmp_path / "w.yaml").write_text(WORKLOAD_YAML)
    expected = digest_of(json.loads(WORKLOAD_JSON))
    assert kidx("digest", "-f", str(tmp_path / "w.json")) == (0, f"{expected}  Workload/w\n", "")
    assert kidx("digest", "-f", str(tmp_path / "w.yaml")) == (0, f"{expected}  Workload/w\n", "")


def test_integer_and_float_values_are_different_identities(kidx, tmp_path):
    as_int = WORKLOAD_YAML
    as_float = WORKLOAD_YAML.replace("hidden: 8192", "hidden: 8192.0")
    (tmp_path / "int.yaml").write_text(as_int)
    (tmp_path / "float.yaml").write_text(as_float)
    (tmp_path / "float.json").write_text(WORKLOAD_JSON.replace("8192", "8192.0"))
    code_i, out_i, _ = kidx("digest", "-f", str(tmp_path / "int.yaml"))
    code_f, out_f, _ = kidx("digest", "-f", str(tmp_path / "float.yaml"))
    code_j, out_j, _ = kidx("digest", "-f", str(tmp_path / "float.json"))
    assert (code_i, code_f, code_j) == (0, 0, 0)
    assert out_i != out_f
    assert out_f == out_j


@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "dup.yaml",
            "apiVersion: kernelindex.dev/v1alpha1\nkind: Workload\nmetadata:\n  name: w\nspec:\n  operation: a\n  operation: b\n",
            'invalid YAML: duplicate key "operation"',
        ),
        (
            "dup.json",
            '{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},\n "spec": {"operation": "a", "operation": "b"}}',
            'invalid JSON: duplicate key "operation"',
        ),
    ],
)
def test_duplicate_keys_are_errors_in_both_formats(kidx, store, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    code, out, err = kidx("apply", "-f", str(path))
    assert (code, out) == (1, "")
    assert err.startswith(f"error: {path}, document 1, line ")
    assert err.rstrip("\n").endswith(message)
    assert not store.exists()


# ---------------------------------------------------------------- canonical JSON rules


def test_canonical_json_sorts_keys_at_every_level():
    value = {"b": 1, "a": {"d": 2, "c": [3, {"f": 1, "e": 2}]}, "A": None}
    assert canonical_json(value) == b'{"A":null,"a":{"c":[3,{"e":2,"f":1}],"d":2},"b":1}'


def test_canonical_json_is_compact():
    assert canonical_json({"a": [1, 2], "b": {"c": "d e"}}) == b'{"a":[1,2],"b":{"c":"d e"}}'


def test_canonical_json_writes_non_ascii_as_itself_in_utf8():
    text = "Liger · H100 — é 日本 🚀"
    assert canonical_json({"t": text}) == ('{"t":"' + text + '"}').encode("utf-8")
    assert b"\\u" not in canonical_json({"t": text})


def test_canonical_json_escapes_what_json_must_escape():
    assert canonical_json({"t": 'a"b\\c\n'}) == b'{"t":"a\\"b\\\\c\\n"}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_canonical_json_rejects_nan_and_infinities(bad):
    with pytest.raises(CanonicalError):
        canonical_json({"spec": {"x": bad}})
    with pytest.raises(CanonicalError):
        digest_of({"apiVersion": "v", "kind": "K", "spec": {"x": [bad]}})


def test_canonical_json_rejects_non_json_types():
    with pytest.raises(CanonicalError):
        canonical_json({"x": {1, 2}})


@pytest.mark.parametrize(
    "value, text",
    [
        (1, b"1"),
        (1.0, b"1.0"),
        (-0, b"0"),
        (0.5, b"0.5"),
        (0.1, b"0.1"),
        (417536, b"417536"),
        (0.41705599427223206, b"0.41705599427223206"),
        (2**63 - 1, b"9223372036854775807"),
        (True, b"true"),
        (False, b"false"),
        (None, b"null"),
        ("1", b'"1"'),
    ],
)
def test_canonical_json_numbers_and_scalars(value, text):
    assert canonical_json(value) == text
    if isinstance(value, float):
        assert float(text) == value  # round-trips


def test_int_and_float_give_different_digests():
    as_int = {"apiVersion": "v", "kind": "K", "spec": {"x": 1}}
    as_float = {"apiVersion": "v", "kind": "K", "spec": {"x": 1.0}}
    assert digest_of(as_int) != digest_of(as_float)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"}, "spec": {"operation": "a", "parameters": {"x": NaN}}}',
            "error: STDIN, document 1, line 1: invalid JSON: NaN is not valid JSON\n",
        ),
        (
            "apiVersion: kernelindex.dev/v1alpha1\nkind: Workload\nmetadata:\n  name: w\nspec:\n  operation: a\n  parameters:\n    x: .nan\n",
            "error: STDIN, document 1, line 8: spec.parameters.x: NaN and infinite numbers are not allowed\n",
        ),
        (
            "apiVersion: kernelindex.dev/v1alpha1\nkind: Workload\nmetadata:\n  name: w\nspec:\n  operation: a\n  parameters:\n    x: -.inf\n",
            "error: STDIN, document 1, line 8: spec.parameters.x: NaN and infinite numbers are not allowed\n",
        ),
    ],
)
def test_nan_in_input_is_refused(kidx, store, text, message):
    assert kidx("apply", "-f", "-", stdin=text) == (1, "", message)
    assert not store.exists()


@pytest.mark.parametrize("written", ["1_000", "0b101", "0x_1f", "=", "yes", "on", "2025-08-07", "1:20"])
def test_yaml_1_2_plain_scalars_that_were_numbers_in_1_1_stay_strings(written):
    from kidx.manifests.parsing import parse_yaml_stream

    (document,) = parse_yaml_stream(f"key: {written}\n")
    assert document.data == {"key": written}


@pytest.mark.parametrize(
    "written, value",
    [("12", 12), ("-3", -3), ("+7", 7), ("012", 12), ("0o17", 15), ("0x1f", 31), ("1e3", 1000.0), ("1.5", 1.5),
     (".5", 0.5), ("true", True), ("False", False), ("~", None), ("null", None), ("", None)],
)
def test_yaml_1_2_core_schema_scalars(written, value, capsys):
    from kidx.manifests.parsing import parse_yaml_stream

    (document,) = parse_yaml_stream(f"key: {written}\n")
    assert document.data == {"key": value} and type(document.data["key"]) is type(value)
    assert capsys.readouterr().err == ""  # no YAML 1.1 warnings leak to the user


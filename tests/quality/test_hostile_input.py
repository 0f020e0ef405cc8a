"""Hostile input: every one ends in a clean error (or a quick answer), never a traceback,
a hang or unbounded memory, and leaves the store as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME


def _run_shell(command: str, store, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    environment = {**os.environ, "KIDX_STORE": str(store), "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, env=environment, cwd=REPO, timeout=timeout
    )


def _kidx() -> str:
    return f"{sys.executable} -m kidx"


# --- standard input and input size ---------------------------------------------------


def test_apply_from_a_closed_standard_input(store):
    result = _run_shell(f"{_kidx()} apply -f - <&-", store)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: STDIN: cannot read: standard input is closed\n"
    assert not store.exists()


def test_dev_zero_is_refused_at_the_size_limit(store):
    result = _run_shell(f"{_kidx()} apply -f /dev/zero", store, env={"KIDX_MAX_INPUT_SIZE": "4Mi"}, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: /dev/zero: input is larger than 4 MiB, the limit for one source (set KIDX_MAX_INPUT_SIZE to change it)\n"
    )
    assert not store.exists()


def test_an_endless_pipe_is_refused_at_the_default_limit(store):
    # 256 MiB, then the reader stops: nothing waits for the pipe to end
    result = _run_shell(f"cat /dev/zero | {_kidx()} apply -f -", store, timeout=60)
    assert result.returncode == 1
    assert result.stderr == (
        "error: STDIN: input is larger than 256 MiB, the limit for one source (set KIDX_MAX_INPUT_SIZE to change it)\n"
    )


def test_size_limit_counts_bytes_and_can_be_raised(kidx, store, monkeypatch):
    text = SEED_BUNDLE.read_bytes()
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", str(len(text) - 1))
    result = kidx("apply", "-f", str(SEED_BUNDLE))
    assert result.code == 1
    assert result.err == (
        f"error: {SEED_BUNDLE}: input is larger than {len(text) - 1} bytes, the limit for one source "
        "(set KIDX_MAX_INPUT_SIZE to change it)\n"
    )
    assert not store.exists()
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", str(len(text)))
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0


def test_size_limit_applies_to_every_reading_command(kidx, monkeypatch):
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", "1Ki")
    for command in ("apply", "diff", "digest", "delete"):
        result = kidx(command, "-f", str(SEED_BUNDLE))
        assert result.err.endswith(
            "input is larger than 1 KiB, the limit for one source (set KIDX_MAX_INPUT_SIZE to change it)\n"
        ), command


@pytest.mark.parametrize("value", ["x", "-1", "1.5Mi", "12 MB"])
def test_a_bad_size_limit_is_a_usage_error(kidx, store, monkeypatch, value):
    monkeypatch.setenv("KIDX_MAX_INPUT_SIZE", value)
    result = kidx("apply", "-f", str(SEED_BUNDLE))
    assert result.code == 1
    assert result.err == (
        f'error: KIDX_MAX_INPUT_SIZE="{value}" is not a size: give bytes, or a number with Ki, Mi or Gi (e.g. 512Mi)\n'
    )
    assert not store.exists()


# --- JSONPath ---------------------------------------------------------------------------


@pytest.fixture
def seeded(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return kidx


def test_400_nested_parentheses_are_refused_with_the_limit(seeded):
    template = "{.items[?(" + "(" * 400 + "@.a" + ")" * 400 + ")]}"
    result = seeded("get", "runs", "-o", "jsonpath=" + template)
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        f"error: error parsing jsonpath {template}, parentheses nested more than 64 levels deep (kidx's limit)\n"
    )


def test_1000_nested_ranges_are_refused_with_the_limit(seeded):
    template = "{range .items[*]}" * 1000 + "{end}" * 1000
    result = seeded("get", "runs", "-o", "jsonpath=" + template)
    assert (result.code, result.out) == (1, "")
    assert result.err == (
        f"error: error parsing jsonpath {template}, {{range}} nested more than 64 levels deep (kidx's limit)\n"
    )


def test_nested_filters_and_negations_count_toward_the_limit(seeded):
    filters = "{.items" + "[?(@.a" * 65 + ")]" * 65 + "}"
    assert seeded("get", "runs", "-o", "jsonpath=" + filters).err.endswith(
        ", filters nested more than 64 levels deep (kidx's limit)\n")
    negations = "{.items[?(" + "!" * 65 + "@.a)]}"
    assert seeded("get", "runs", "-o", "jsonpath=" + negations).err.endswith(
        ", ! and parentheses nested more than 64 levels deep (kidx's limit)\n")


def test_nesting_up_to_the_limit_works(seeded):
    ranges = "{range .items[*]}" + "{range .metadata}" * 63 + "{.name}" + "{end}" * 63 + "{end}"
    assert seeded("get", "runs", "-o", "jsonpath=" + ranges).code == 0
    # the filter and its own parentheses are two of the 64 levels
    parentheses = "{.items[?(" + "(" * 62 + "@.kind" + ")" * 62 + ")].metadata.name}"
    assert seeded("get", "runs", "-o", "jsonpath=" + parentheses).out == SEED_RUN_NAME


def test_catastrophic_regular_expression_answers_at_once(kidx_process):
    assert kidx_process("apply", "-f", str(SEED_BUNDLE)).code == 0
    result = kidx_process(
        "get", "runs", "-o", 'jsonpath={.items[?(@.metadata.name=~"^([a-z0-9]+-?)+!$")].metadata.name}'
    )
    assert (result.code, result.out, result.err) == (0, "", "")
    result = kidx_process(
        "get", "runs", "-o", 'jsonpath={.items[?(@.metadata.name=~"^([a-z0-9]+-?)+$")].metadata.name}'
    )
    assert (result.code, result.out) == (0, SEED_RUN_NAME)


def test_python_only_regular_expression_syntax_is_refused(seeded):
    result = seeded("get", "runs", "-o", 'jsonpath={.items[?(@.metadata.name=~"(?<=x)y")].metadata.name}')
    assert result.code == 1
    assert result.err == (
        'error: error parsing jsonpath {.items[?(@.metadata.name=~"(?<=x)y")].metadata.name}, '
        'invalid regular expression "(?<=x)y": look-around is not supported (RE2 syntax has none) at offset 0\n'
    )


# --- control characters in human output ------------------------------------------------

CLEAR = "\x1b[2J"


@pytest.fixture
def hostile_protocol(kidx, seed_bundle, tmp_path):
    protocol = seed_bundle["protocol"]
    protocol["metadata"]["title"] = f"{CLEAR}T\nName:  forged"
    protocol["metadata"]["annotations"] = {"note": "a\x1b[31mred\r\nx\x07\x9b\u202e"}
    protocol["spec"]["harness"]["name"] = f"h{CLEAR}\nline"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(protocol), encoding="utf-8")
    assert kidx("apply", "-f", str(path)).code == 0
    return protocol["metadata"]["name"]


def test_describe_escapes_control_characters(kidx, hostile_protocol):
    out = kidx("describe", "protocol", hostile_protocol).out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out and "\x9b" not in out
    lines = out.splitlines()
    assert "Annotations:  note: a^[[31mred\\r\\nx\\x07\\x9b\\u202e" in lines
    assert "Title:        ^[[2JT\\nName:  forged" in lines
    assert "    Name:        h^[[2J\\nline" in lines
    assert [line for line in lines if line.startswith("Name:")] == [f"Name:         {hostile_protocol}"]


def test_tables_escape_control_characters(kidx, hostile_protocol):
    wide = kidx("get", "protocol", "-o", "wide").out.splitlines()
    assert wide[1].split()[:2] == [hostile_protocol, "h^[[2J..."]  # kubectl: cut at the line break
    columns = kidx("get", "protocol", "-o", "custom-columns=T\x1b\x07:.metadata.title").out
    assert columns == "T^[\\x07\n^[[2JT...\n"


def test_data_outputs_stay_exact(kidx, hostile_protocol):
    out = kidx("get", "protocol", hostile_protocol, "-o", "jsonpath={.metadata.title}").out
    assert out == f"{CLEAR}T\nName:  forged"
    assert json.loads(kidx("get", "protocol", hostile_protocol, "-o", "json").out)["metadata"]["title"] == (
        f"{CLEAR}T\nName:  forged"
    )


def test_names_in_errors_are_escaped(kidx, store):
    from conftest import SEED_BUNDLE

    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0  # a store that exists: reading a missing one is an error
    result = kidx("get", "run", f"no{CLEAR}pe\nerror: forged")
    assert result.code == 1
    assert result.err == 'Error (NotFound): benchmarkruns.kernelindex.dev "no^[[2Jpe\\nerror: forged" not found\n'


def test_paths_in_errors_are_escaped(kidx, store, tmp_path):
    path = tmp_path / f"bad{CLEAR}\n.yaml"
    path.write_text("kind: [", encoding="utf-8")
    result = kidx("apply", "-f", str(path))
    assert result.code == 1
    assert "\x1b" not in result.err and result.err.count("\n") == 1
    assert "bad^[[2J\\n.yaml" in result.err

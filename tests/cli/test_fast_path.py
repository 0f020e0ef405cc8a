"""``get`` and ``describe`` with simple arguments start without typer (cli/fast.py), and
say exactly what the typer-read command says: the same output, errors and exit codes
for the same words, and typer's own answer wherever the fast path does not read them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO, SEED_BUNDLE, SEED_RUN_NAME

from kidx.cli import fast

SAME_EITHER_WAY = [
    ["get", "runs"],
    ["get", "runs", "-o", "wide"],
    ["get", "all", "-o", "yaml"],
    ["get", "runs", "-ojson"],
    ["get", "runs", "-o=name"],
    ["get", "runs", "--output=jsonpath={.items[*].metadata.name}"],
    ["get", "runs", "-l", "liger_version=0.6.1", "--show-labels", "--no-headers"],
    ["get", "runs,protocols", "--show-kind", "-L", "liger_version", "-L=gpu,kernel"],
    ["get", "runs", "--sort-by", "-.spec.timing.latencyNs.median", "--limit", "1"],
    ["get", "runs", "--field-selector", "spec.status=passed", "-o", "csv"],
    ["get", "runs", "--references", "nosuchtype/x"],
    ["get", "run", SEED_RUN_NAME[:20]],
    ["get", "run", "missing", "--ignore-not-found"],
    ["get", "run", "missing", "other"],
    ["get", "runs", "-l", "==bad"],
    ["get", "runs", "-o", "xml"],
    ["get", "nosuchtype"],
    ["get"],
    ["get", "runs", "-o", "custom-columns=NAME:.metadata.name,SEQ:workload.spec.parameters.seq"],
    ["get", "runs", "--sort-by", "nope"],
    ["describe", "run", SEED_RUN_NAME],
    ["describe", "run", SEED_RUN_NAME[:30]],
    ["describe", "run/missing"],
    ["describe", "runs", "-l", "liger_version=0.6.1"],
    ["describe"],
    # not the fast path's: typer reads these, both times
    ["get", "runs", "--limit", "-1"],
    ["get", "runs", "--limit", "x"],
    ["get", "runs", "--no-headers=yes"],
    ["get", "runs", "--nope"],
    ["get", "runs", "-o"],
    ["get", "runs", "--", "-x"],
    ["describe", "run", "--sort-by", "x"],
]


@pytest.fixture
def seeded(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return kidx


def seed_store(tmp_path):
    """A folder store with the seed bundle applied, by a kidx process of its own."""
    store = tmp_path / "store"
    made = subprocess.run([sys.executable, "-m", "kidx", "apply", "-f", str(SEED_BUNDLE), "--store", str(store)],
                          capture_output=True, text=True, cwd=REPO)
    assert made.returncode == 0, made.stderr
    return store


@pytest.mark.parametrize("words", SAME_EITHER_WAY, ids=" ".join)
def test_the_fast_path_says_what_the_parser_says(seeded, monkeypatch, words):
    quick = seeded(*words)
    monkeypatch.setattr(fast, "parse", lambda argv: None)
    assert seeded(*words) == quick


@pytest.mark.parametrize(("words", "read"), [
    (["get", "runs", "-l", "a=b", "-oyaml"], ("get", {"arguments": ["runs"], "selector": "a=b", "output_format": "yaml"})),
    (["get", "runs", "--sort-by", "-.spec.x", "-L", "a", "--label-columns=b"],
     ("get", {"arguments": ["runs"], "sort_by": "-.spec.x", "label_columns": ["a", "b"]})),
    (["get", "runs", "--limit", "007", "--show-kind"], ("get", {"arguments": ["runs"], "limit": 7, "show_kind": True})),
    (["get", "runs", "-l", "x", "-l", "y"], ("get", {"arguments": ["runs"], "selector": "y"})),  # the last one counts
    (["describe", "run", "-", "--store=/s"], ("describe", {"arguments": ["run", "-"], "store": "/s"})),
    (["get"], ("get", {"arguments": None})),
    (["get", "--help"], None), (["get", "runs", "-h"], None), (["get", "--", "runs"], None),
    (["get", "runs", "--limit", "+1"], None), (["get", "runs", "-x"], None), (["get", "runs", "--store"], None),
    (["describe", "run", "-o", "yaml"], None), (["apply", "-f", "x"], None), ([], None),
])
def test_what_the_fast_path_reads(words, read):
    assert fast.parse(words) == read


def test_everyday_commands_do_not_import_typer(tmp_path):
    store = seed_store(tmp_path)  # a store named explicitly must exist: make it with the seed
    check = ("import sys, io, contextlib\n"
             "from kidx.cli.app import run\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    codes = [run(['get', 'runs', '--store', {str(store)!r}]),\n"
             f"             run(['describe', 'runs', '--store', {str(store)!r}])]\n"
             "print(codes, 'typer' in sys.modules, 'click' in sys.modules)\n"
             # what a read needs none of (each costs a share of the start; bench/bench_startup.py)
             "print(sorted(set(sys.modules) & {'typing', 'dataclasses', 'inspect', 'pathlib',\n"
             "                                 'threading', 'signal', 'ruamel', 'jsonschema', 'rich', 'statistics'}))\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[0, 0] False False\n[]\n", "")


def test_get_and_describe_of_a_run_load_no_url_parser_importlib_util_or_typing(tmp_path):
    """A folder store is not parsed as a URL (kidx.store.postgres_url); describe looks an importer up without
    ``importlib.util``, and nothing imports ``typing``. Each costs a share of the start
    that bench/bench_startup.py and bench/bench_scale.py measure."""
    store = seed_store(tmp_path)
    check = ("import sys, io, contextlib\n"
             "from kidx.cli.app import run\n"
             "out = io.StringIO()\n"
             "with contextlib.redirect_stdout(out):\n"
             f"    codes = [run(['get', 'runs', '-l', 'liger_version', '--store', {str(store)!r}]),\n"
             f"             run(['describe', 'run', {SEED_RUN_NAME!r}, '--store', {str(store)!r}])]\n"
             "print(codes, 'Digest:' in out.getvalue())\n"
             "print(sorted(set(sys.modules) & {'importlib.util', 'kidx.store.postgres_url', 'typing'}))\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[0, 0] True\n[]\n", "")


# what a read imports only where it needs it: a write's helpers (contextlib, kidx.files, the
# fault points), a document printer's serialiser, the Python API's Store (a command opens its
# store through kidx.api.locations), schema 1's SQL (only for a catalog of that version), and
# (get) the digest check with hashlib's OpenSSL, the SQL of selections by several references and
# importlib itself (import_module is for typer's command modules and a URL's backend)
WRITES_AND_DOCUMENTS = {"contextlib", "kidx.files", "kidx.store.faults", "kidx.output.serialize", "kidx.api.store",
                        "kidx.analysis.defaults", "kidx.store.sqlite_schema_1"}


@pytest.mark.parametrize(("words", "absent"), [
    (["get", "runs", "-l", "liger_version"],
     WRITES_AND_DOCUMENTS | {"kidx.identity.canonical", "hashlib", "kidx.store.sqlite_references", "importlib"}),
    # (describe, without -l) the SQL of label selections
    (["describe", "run", SEED_RUN_NAME], WRITES_AND_DOCUMENTS | {"kidx.store.label_conditions"}),
])
def test_a_cold_read_imports_only_what_it_needs(tmp_path, words, absent):
    """Each module costs a share of a cold command's start (bench/bench_startup.py); the
    command runs alone in a fresh interpreter, as ``kidx`` runs it."""
    store = seed_store(tmp_path)
    check = ("import os, sys\n"
             "from kidx.cli.app import run\n"
             "shown, sys.stdout = sys.stdout, open(os.devnull, 'w')\n"
             f"code = run({[*words, '--store', str(store)]!r})\n"
             f"shown.write(str(code) + ' ' + str(sorted(set(sys.modules).intersection({sorted(absent)!r}))))\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout, done.stderr) == (0, "0 []", "")


def test_a_cold_get_compiles_no_pattern_of_its_own(tmp_path):
    """Compiling a regular expression costs a cold command about a tenth of a millisecond
    each (bench/bench_startup.py): a table's column paths, digests and cells are read with
    string methods instead. Only the patterns ``json`` compiles at its import are compiled.
    (The count comes from re's own compiler, a private module read by this test only.)"""
    store = seed_store(tmp_path)
    check = ("import json, os, sys, re, re._compiler as compiler\n"
             "compiled, original = [], compiler.compile\n"
             "compiler.compile = lambda pattern, flags=0: compiled.append(pattern) or original(pattern, flags)\n"
             "from kidx.cli.app import run\n"
             "shown, sys.stdout = sys.stdout, open(os.devnull, 'w')\n"
             f"code = run(['get', 'runs', '-l', 'liger_version', '--store', {str(store)!r}])\n"
             "shown.write(f'{code} {compiled}')\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout, done.stderr) == (0, "0 []", "")

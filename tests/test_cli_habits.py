"""kubectl habits a user brings: ``-o=json`` forms, ``version``, and a store path that
is a file."""

from __future__ import annotations

import json
import platform

import pytest
from conftest import SEED_BUNDLE, SEED_RUN_NAME

import kidx as kidx_package

RUN = f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}\n"


@pytest.fixture
def seeded(kidx):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return kidx


@pytest.mark.parametrize("arguments", [
    ["get", "runs", "-o=name"],
    ["get", "runs", "-o=name", "-l=liger_version=0.6.1"],
    ["get", "runs", "-o=name", "-l=liger_version in (0.6.1,0.7.0)"],
    ["get", "runs", "-oname", "-lliger_version=0.6.1"],
    ["get", "runs", "-o=name", "--field-selector=spec.status=passed"],
    ["get", "runs", "-o=name", "--selector=liger_version"],
])
def test_short_options_written_with_equals(seeded, arguments):
    assert seeded(*arguments) == (0, RUN, "")


def test_equals_forms_mean_the_same_as_spaced_ones(seeded):
    assert seeded("get", "runs", "-L=liger_version") == seeded("get", "runs", "-L", "liger_version")
    assert json.loads(seeded("get", "runs", "-o=json").out)["kind"] == "List"
    # only the first '=' goes, as with kubectl: the label value here is "=0.6.1", which is invalid
    result = seeded("get", "runs", "-l==0.6.1")
    assert result.code == 1 and "error:" in result.err


def test_apply_and_delete_with_equals(kidx):
    assert kidx("apply", f"-f={SEED_BUNDLE}", "-o=name").out.splitlines()[0] == RUN.strip()
    result = kidx("delete", f"-f={SEED_BUNDLE}", "--dry-run=client")
    assert result.code == 0 and "deleted (dry run)" in result.out


def test_version(kidx):
    expected = f"kidx {kidx_package.__version__}\n"
    assert kidx("version") == (0, expected, "")
    assert kidx("--version") == (0, expected, "")
    info = json.loads(kidx("version", "-o", "json").out)
    assert info == {"kidxVersion": kidx_package.__version__, "pythonVersion": platform.python_version()}
    assert kidx("version", "-o=yaml").out == (f"kidxVersion: {kidx_package.__version__}\n"
                                              f"pythonVersion: {platform.python_version()}\n")
    result = kidx("version", "-o", "wide")
    assert result.code == 1 and result.err == 'error: --output must be "json" or "yaml", not "wide"\n'


def test_version_matches_the_package_metadata():
    from importlib.metadata import version

    assert version("kidx") == kidx_package.__version__


@pytest.mark.parametrize("command", [["get", "runs"], ["describe", "runs"], ["apply", "-f", str(SEED_BUNDLE)]])
def test_a_store_path_that_is_a_file_is_an_error(kidx, tmp_path, command):
    not_a_folder = tmp_path / "store-file"
    not_a_folder.write_text("x")
    for store in (not_a_folder, not_a_folder / "inside"):
        result = kidx(*command, store_path=store)
        assert result == (1, "", f"error: cannot open the store at {store}: {not_a_folder} is a file, not a folder\n")
    assert not_a_folder.read_text() == "x"


def test_usage_errors_of_a_sub_command_point_at_its_help(kidx):
    assert kidx("import", "liger") == (1, "", "error: Missing argument 'files'.\n"
                                              "See 'kidx import liger --help' for usage.\n")
    result = kidx("import", "liger", "--bogus", "x.csv")
    assert result.err == "error: unknown flag: --bogus\nSee 'kidx import liger --help' for usage.\n"
    assert kidx("get", "--bogus").err == "error: unknown flag: --bogus\nSee 'kidx get --help' for usage.\n"


def test_get_help_examples_name_no_digest_that_an_import_changes(kidx):
    from conftest import SEED_RUN_DIGEST

    text = kidx("get", "--help").out
    assert "kidx get run DIGEST-PREFIX -o yaml" in text
    assert SEED_RUN_DIGEST.removeprefix("sha256:")[:8] not in text

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
    assert result.code == 1 and result.err == 'error: unable to match a printer suitable for the output format "wide", allowed formats are: json,yaml\n'


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


@pytest.mark.parametrize(("arguments", "allowed", "code"), [
    (["get", "runs"], "csv,custom-columns,custom-columns-file,json,jsonpath,jsonpath-file,name,tsv,wide,yaml", 1),
    (["apply", "-f", str(SEED_BUNDLE)], "name", 1),
    (["delete", "runs", "--all"], "name", 1),
    (["import", "bundle", "backup.kidx.json"], "name", 1),
    (["import", "liger", "data.csv"], "json,name,yaml", 1),
    (["env", "capture"], "json,name,yaml", 1),
    (["history", "run", SEED_RUN_NAME, "--revision", "1"], "json,yaml", 1),
    (["fsck"], "json", 1),
    (["api-resources"], "json,name,wide,yaml", 1),
    (["version"], "json,yaml", 1),
    (["compare", SEED_RUN_NAME], None, 2),
    (["series"], None, 2),
])
def test_every_command_rejects_an_output_format_in_one_wording(seeded, arguments, allowed, code):
    """Before anything is read or written: the store keeps the seed, exactly."""
    before = seeded("get", "all", "-o", "yaml").out
    result = seeded(*arguments, "-o", "xml")
    prefix = 'error: unable to match a printer suitable for the output format "xml", allowed formats are: '
    assert (result.code, result.out) == (code, "")
    if allowed is None:  # the analysis commands' formats are theirs to list
        assert result.err.startswith(prefix) and result.err.count("\n") == 1
    else:
        assert result.err == f"{prefix}{allowed}\n"
    assert seeded("get", "all", "-o", "yaml").out == before


@pytest.mark.parametrize("typed, meant", [("list", "get"), ("ps", "get"), ("show", "describe"), ("rm", "delete")])
def test_a_command_kubectl_users_reach_for_suggests_kidx_s(kidx, typed, meant):
    code, out, err = kidx(typed, "runs")
    assert (code, out) == (1, "")
    assert err == f"error: No such command '{typed}'. Did you mean '{meant}'?\nSee 'kidx --help' for usage.\n"

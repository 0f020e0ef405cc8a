"""The operations behind thin commands, called as a library: typed results, no printing;
and the renderers in output/ that turn those results into the commands' text."""

from __future__ import annotations

import json

import pytest
from conftest import SEED_BUNDLE, SEED_RUN_DIGEST, SEED_RUN_NAME

from kidx.cli.common import kind_registry, open_store
from kidx.errors import UsageError
from kidx.manifests.reader import read_sources
from kidx.operations.export.exporting import export_selection
from kidx.operations.maintain.diff import ObjectChange, changed_objects
from kidx.operations.select.describe import describe_objects
from kidx.output.describe import describe_texts
from kidx.output.diff import render_diff
from kidx.output.printers import check_output, rejected_output
from kidx.query.label_selector import LabelSelector

RUN_KIND = "BenchmarkRun"
FILE = f"kernelindex.dev.v1alpha1.BenchmarkRun..{SEED_RUN_NAME}"


@pytest.fixture
def seeded(kidx, store):
    assert kidx("apply", "-f", str(SEED_BUNDLE)).code == 0
    return open_store(str(store))


def test_describe_finds_by_name_then_by_prefix_and_says_which(seeded):
    registry = kind_registry()
    exact = describe_objects(seeded, registry, ["run", SEED_RUN_NAME], None)
    assert (len(exact.descriptions), exact.missing, exact.by_prefix) == (1, [], False)
    (description,) = exact.descriptions
    assert description.manifest["metadata"]["digest"] == SEED_RUN_DIGEST
    assert [line.field for line in description.references] == [
        "protocolDigest", "workloadDigest", "environmentDigest", "implementationDigest"]
    assert [line.name is None for line in description.references] == [False, True, False, True]
    prefixed = describe_objects(seeded, registry, ["run", SEED_RUN_NAME[:12]], None)
    assert (prefixed.descriptions, prefixed.missing, prefixed.by_prefix) == (exact.descriptions, [], True)
    # TYPE/NAME (and more than one name) never falls back to a prefix
    assert describe_objects(seeded, registry, [f"run/{SEED_RUN_NAME[:12]}"], None).missing == [
        f'benchmarkruns.kernelindex.dev "{SEED_RUN_NAME[:12]}" not found']
    selected = describe_objects(seeded, registry, ["runs"], LabelSelector.parse("liger_version=0.6.1"))
    assert selected.descriptions == exact.descriptions
    one = describe_texts(exact.descriptions)
    assert one.startswith(f"Name:         {SEED_RUN_NAME}\n") and one.endswith("\nReferenced By:            <none>\n")
    assert describe_texts(exact.descriptions * 2) == one + "\n\n" + one  # the texts two newlines apart
    assert describe_texts(exact.descriptions * 2, by_prefix=True) == one + "\n" + one  # found by prefix: one newline apart


def test_diff_lists_what_apply_would_change_and_output_renders_it(seeded, tmp_path):
    registry = kind_registry()
    bundle = json.loads(SEED_BUNDLE.read_text(encoding="utf-8"))
    unchanged = read_sources([str(SEED_BUNDLE)])
    assert changed_objects(seeded, unchanged.documents, registry, unchanged.texts) == []
    assert render_diff([]) == ""
    run = bundle["run"]
    run["metadata"]["labels"]["liger_version"] = "0.6.2"
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    read = read_sources([str(path)])
    (change,) = changed_objects(seeded, read.documents, registry, read.texts)
    assert isinstance(change, ObjectChange) and change.file_name == FILE
    assert change.live["metadata"]["labels"]["liger_version"] == "0.6.1"
    assert change.merged["metadata"]["labels"]["liger_version"] == "0.6.2"
    text = render_diff([change])
    assert text.startswith(f"diff -u -N LIVE/{FILE} MERGED/{FILE}\n--- LIVE/{FILE}\n+++ MERGED/{FILE}\n")
    assert "\n-    liger_version: 0.6.1\n+    liger_version: 0.6.2\n" in text
    created = render_diff([change._replace(live=None)])
    assert "\n-" not in created.split("\n@@", 1)[1] and created.count("\n+") > 10


def test_export_selection_names_what_to_write(seeded):
    registry = kind_registry()
    assert export_selection(seeded, registry, [], None) == (None, [])
    assert export_selection(seeded, registry, ["runs"], None) == ([(RUN_KIND, SEED_RUN_NAME)], [])
    assert export_selection(seeded, registry, ["run", "nope"], None) == (
        [], ['benchmarkruns.kernelindex.dev "nope" not found'])
    with pytest.raises(UsageError, match="^BMF holds runs only, not BenchmarkProtocol: "):
        export_selection(seeded, registry, ["runs,protocols"], None, runs_only=True)


def test_one_check_and_one_wording_for_an_output_format():
    assert check_output("version", None) is None
    assert check_output("history", None, "yaml") == "yaml"
    assert check_output("version", "json") == "json"
    with pytest.raises(UsageError) as caught:
        check_output("version", "")
    assert str(caught.value) == ('unable to match a printer suitable for the output format "", '
                                 "allowed formats are: json,yaml")
    assert str(rejected_output("x", "apply")) == (
        'unable to match a printer suitable for the output format "x", allowed formats are: name')


def test_delete_selected_deletes_all_or_reports_what_is_missing(seeded):
    from kidx.operations.maintain.delete import delete_selected
    from kidx.output.reports import deletion_lines
    from kidx.query.targets import parse_targets

    registry = kind_registry()
    targets = parse_targets(["run", SEED_RUN_NAME, "nope"], registry, "delete")
    dry = delete_selected(seeded, targets, None, dry_run=True)
    assert [entry.name for _, entry in dry.deleted] == [SEED_RUN_NAME]
    assert dry.missing == ['benchmarkruns.kernelindex.dev "nope" not found']
    assert seeded.catalog().get(RUN_KIND, SEED_RUN_NAME) is not None  # a dry run changes nothing
    assert deletion_lines(dry.deleted, False, "(dry run)") == (
        f'benchmarkrun.kernelindex.dev "{SEED_RUN_NAME}" deleted (dry run)\n')
    done = delete_selected(seeded, parse_targets(["run", SEED_RUN_NAME], registry, "delete"), None)
    assert [entry.name for _, entry in done.deleted] == [SEED_RUN_NAME] and done.missing == []
    assert seeded.catalog().get(RUN_KIND, SEED_RUN_NAME) is None
    assert deletion_lines(done.deleted, True, None) == f"benchmarkrun.kernelindex.dev/{SEED_RUN_NAME}\n"
    again = delete_selected(seeded, parse_targets(["run", SEED_RUN_NAME], registry, "delete"), None)
    assert again == ([], [f'benchmarkruns.kernelindex.dev "{SEED_RUN_NAME}" not found'])

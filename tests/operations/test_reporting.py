"""An operation reports typed events to the reporter its caller gives (any function of
one event), and each face hears the same events: the API's warnings are their words."""

from __future__ import annotations

import json

from conftest import SEED_BUNDLE

import kidx
from kidx.cli.app import run
from kidx.kinds.registry import registry
from kidx.operations.events import BundleNote, Event
from kidx.operations.ingest.restore_bundle import import_bundle
from kidx.operations.maintain.bundle import NO_CHECKSUM
from kidx.store.store import Store


def test_restoring_a_bundle_without_its_checksum_reports_the_reader_note(tmp_path):
    source, bundle = tmp_path / "source", tmp_path / "seed.kidx.json"
    assert run(["apply", "-f", str(SEED_BUNDLE), "--store", str(source)]) == 0
    assert run(["export", "-o", str(bundle), "--store", str(source)]) == 0
    document = json.loads(bundle.read_text(encoding="utf-8"))
    del document["checksum"]
    bundle.write_text(json.dumps(document), encoding="utf-8")
    seen: list[Event] = []
    imported = import_bundle(str(bundle), registry(), lambda: Store(str(tmp_path / "a")), seen.append, dry_run=True)
    assert seen == [BundleNote(f"{bundle} {NO_CHECKSUM}")]
    assert len(imported.report.outcomes) == 3
    with kidx.open_store(tmp_path / "b") as api:
        assert api.import_bundle(bundle).warnings == [f"{bundle} {NO_CHECKSUM}"]

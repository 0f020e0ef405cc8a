"""kidx env capture: this machine as an ExecutionEnvironment (``kidx.capture``), with
the peaks it reaches when asked (``kidx.speed_of_light.measure``), kept as it was or
stored as apply stores it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kidx.operations import events
from kidx.records import NamedTuple

if TYPE_CHECKING:
    from kidx.capture.probes import Facts
    from kidx.kinds.registry import KindRegistry
    from kidx.operations.maintain.apply import ApplyReport
    from kidx.operations.reporting import Reporter
    from kidx.store.store import Store


class CapturedEnvironment(NamedTuple):
    manifest: dict[str, Any]  # the ExecutionEnvironment, as stored when applied
    report: ApplyReport | None  # what storing it did; None when only captured


def captured_environment(name: str | None = None) -> tuple[dict[str, Any], Facts]:
    """The captured manifest and the facts it was made from (the commands print their
    ``notes`` on what could not be read, and ``warnings`` among them)."""
    from kidx.capture.environment import environment_manifest
    from kidx.capture.probes import gather

    facts = gather()
    manifest: dict[str, Any] = environment_manifest(facts, name)
    return manifest, facts


def capture_environment(reporter: Reporter, name: str | None = None, measure_peaks: bool = False,
                        store: Callable[[], Store] | None = None, registry: KindRegistry | None = None,
                        dry_run: bool = False) -> CapturedEnvironment:
    """Capture this machine (what could not be read told as notes, a probe that hung as a
    warning), time its peaks with ``measure_peaks``, then store it when given a ``store``
    (opened once, when needed) and ``registry``: the measured peaks of the stored
    environment of the same name kept, then applied (``dry_run``: only what would happen)."""
    manifest, facts = captured_environment(name)
    for note in facts.notes:
        reporter(events.CaptureNote(note, warning=note in facts.warnings))  # a probe that hung: said louder
    if measure_peaks:
        import datetime

        from kidx.speed_of_light.measure import measure_peaks as measure

        peaks = measure()
        for refused in peaks.refused:
            reporter(events.PeaksRefused(refused))
        manifest["metadata"]["annotations"].update(peaks.annotations(datetime.datetime.now(datetime.UTC)))
        reporter(events.PeaksMeasured(peaks.summary()))
    if store is None or registry is None:
        return CapturedEnvironment(manifest, None)
    from kidx.manifests.document import Document
    from kidx.operations.ingest.measured_peaks import keep_measured_peaks
    from kidx.operations.maintain.apply import apply_documents

    the_store = store()
    kept = keep_measured_peaks(manifest, the_store)
    if kept.notice:
        reporter(kept.notice)
    report = apply_documents(the_store, [Document(kept.body, "<captured>", 1, None)], registry, dry_run=dry_run)
    return CapturedEnvironment(kept.body, report)


__all__ = ["CapturedEnvironment", "capture_environment", "captured_environment"]

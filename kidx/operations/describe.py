"""Describe: the objects asked for, each with its references resolved both ways."""

from __future__ import annotations

from kidx.query.descriptions import Description, describe_entry
from kidx.query.selection import select
from kidx.query.targets import parse_targets, selection_rules
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.kinds.registry import KindRegistry
    from kidx.query.label_selector import LabelSelector
    from kidx.store.store import Store


class DescribeResult(NamedTuple):
    descriptions: list[Description]
    missing: list[str]  # NotFound messages
    by_prefix: bool  # found by name prefix (kubectl prints these one newline apart)
    # per description: a run's achieved bandwidth, FLOP/s and share of the GPU's peak
    # (kidx.speed_of_light.achieved.Achieved), None where unknown or not a run
    speed_of_light: tuple = ()


def describe_objects(
    store: Store, registry: KindRegistry, arguments: list[str], selector: LabelSelector | None
) -> DescribeResult:
    """The objects named or selected; with exactly ``TYPE NAME`` and no object called
    NAME, every object whose name starts with NAME (as kubectl does; with more names, or
    ``TYPE/NAME``, a miss stays a NotFound)."""
    selection_rules(arguments, selector)
    targets = parse_targets(arguments, registry, "describe")
    with store.reading() as catalog:
        selection = select(catalog, targets, selector)
        found = selection.entries
        missing = selection.missing
        by_prefix = False
        if missing and len(targets) == 1 and len(targets[0].names or ()) == 1 and "/" not in arguments[0]:
            prefixed = [
                (targets[0].info, entry)
                for name in targets[0].names or ()
                for entry in catalog.with_name_prefix(targets[0].info.kind, name)
                if (targets[0].info, entry) not in found
            ]
            if prefixed:
                found, missing, by_prefix = found + prefixed, [], True
        descriptions = [describe_entry(store, info, entry) for info, entry in found]
        figures = [_speed_of_light(store, info, d.manifest) for (info, _), d in zip(found, descriptions, strict=True)]
    return DescribeResult(descriptions, missing, by_prefix, tuple(figures))


def _speed_of_light(store: Store, info, manifest: dict):
    """A run's figures, from its workload's cost and its environment's peaks; None for
    another kind, or a run whose latency, workload or cost is unknown."""
    spec = manifest.get("spec") or {}
    fields = {reference.target_kind: reference.field for reference in info.references}
    if info.kind != "BenchmarkRun" or "Workload" not in fields or spec.get("status") != "passed":
        return None
    workload_digest, environment_digest = spec.get(fields["Workload"]), spec.get(fields.get("ExecutionEnvironment", ""))
    if not isinstance(workload_digest, str):
        return None
    from kidx.speed_of_light.achieved import achieved

    workload = store.referenced_manifests([workload_digest], "Workload").get(workload_digest)
    environment = None
    if isinstance(environment_digest, str):
        environment = store.referenced_manifests([environment_digest], "ExecutionEnvironment").get(environment_digest)
    return achieved(spec, (workload or {}).get("spec"), environment)


__all__ = ["DescribeResult", "describe_objects"]

"""Describe: the objects asked for, each with its references resolved both ways."""

from __future__ import annotations

from kidx.query.selection import select
from kidx.query.targets import parse_targets, selection_rules
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.kinds.registry import KindInfo, KindRegistry
    from kidx.query.label_selector import LabelSelector
    from kidx.store.catalog import Entry
    from kidx.store.store import Store

REFERRER_NAMES_SHOWN = 3


class ReferenceLine(NamedTuple):
    field: str
    kind: str
    digest: str
    name: str | None  # None: not in the store
    title: str | None


class ReferrerLine(NamedTuple):
    kind: str
    referrers: int  # how many objects of this kind refer (not ``count``: that would hide tuple.count)
    names: list[str]


class Description(NamedTuple):
    manifest: dict
    references: list[ReferenceLine]
    referrers: list[ReferrerLine]
    # a run's: what its source format could not carry (its importer's FORMAT_DOC.not_carried)
    not_carried: tuple[str, ...] = ()


def describe_entry(store: Store, info: KindInfo, entry: Entry) -> Description:
    catalog = store.catalog()
    manifest = store.manifest(entry)
    references: list[ReferenceLine] = []
    digests = [manifest["spec"].get(reference.field) for reference in info.references]
    named = catalog.by_digests(digest for digest in digests if isinstance(digest, str))  # one look-up for all
    for reference, digest in zip(info.references, digests, strict=True):
        if not isinstance(digest, str):
            continue
        targets = [t for t in named.get(digest, []) if t.kind == reference.target_kind]
        target = targets[0] if targets else None
        references.append(
            ReferenceLine(
                field=reference.field,
                kind=reference.target_kind,
                digest=digest,
                name=target.name if target else None,
                title=target.title if target else None,
            )
        )
    referrers = [
        ReferrerLine(kind, count, catalog.referrer_names(entry.digest, kind, REFERRER_NAMES_SHOWN))
        for kind, count in catalog.referrer_counts(entry.digest)
    ]
    return Description(manifest, references, referrers)


class DescribeResult(NamedTuple):
    descriptions: list[Description]
    missing: list[str]  # NotFound messages
    by_prefix: bool  # found by name prefix (kubectl prints these one newline apart)
    # per description: a run's achieved bandwidth, FLOP/s and share of the GPU's peak
    # (kidx.speed_of_light.achieved.Achieved), None where unknown or not a run
    speed_of_light: tuple = ()
    # per description: a run's host evidence (kidx.analysis.hostbound.HostEvidence), None where none
    host: tuple = ()


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
        descriptions = [_with_not_carried(describe_entry(store, info, entry)) for info, entry in found]
        figures = [_speed_of_light(store, info, d.manifest) for (info, _), d in zip(found, descriptions, strict=True)]
        host = [_host(store, info, d.manifest, f) for (info, _), d, f in zip(found, descriptions, figures, strict=True)]
    return DescribeResult(descriptions, missing, by_prefix, tuple(figures), tuple(host))


def _host(store: Store, info, manifest: dict, figures):
    """A passed latency run's host evidence (docs/analysis.md): its kernel-timer twins'
    launch overhead, else what its sweep and its speed of light show, read from the
    HISTORY_WINDOW runs applied most recently of its (workload, implementation,
    environment) and of its (protocol, implementation, environment); None for another
    kind, a run timed by a kernel timer, or one with no evidence."""
    from kidx.analysis.hostbound import is_kernel_timer, latency_ns, timer_of

    spec = manifest.get("spec") or {}
    if info.kind != "BenchmarkRun" or spec.get("status") != "passed" or latency_ns(spec) is None:
        return None
    fields = {reference.target_kind: reference.field for reference in info.references}
    roles = ("BenchmarkProtocol", "Workload", "Implementation", "ExecutionEnvironment")
    if any(not isinstance(spec.get(fields.get(kind, "")), str) for kind in roles):
        return None
    protocol = spec[fields["BenchmarkProtocol"]]
    timer = timer_of((store.referenced_manifests([protocol], "BenchmarkProtocol").get(protocol) or {}).get("spec"))
    if is_kernel_timer(timer):
        return None
    from kidx.analysis.hostbound import assess
    from kidx.analysis.window import HISTORY_WINDOW
    from kidx.store.catalog import RECENT, CatalogQuery, ReferenceCondition

    def runs_referring(*kinds: str) -> dict[str, Entry]:  # the kind with the fewest runs first
        """The HISTORY_WINDOW runs applied most recently that share these references."""
        conditions = tuple(ReferenceCondition(digests=(spec[fields[kind]],), field=fields[kind]) for kind in kinds)
        entries = store.select(CatalogQuery(kind=info.kind, references=conditions, order=RECENT,
                                            limit=HISTORY_WINDOW, annotations=False, read_labels=False))
        # (the rules read neither annotations nor labels)
        return {entry.name: entry for entry in entries if entry.digest != manifest["metadata"]["digest"]}

    twins = runs_referring("Workload", "Implementation", "ExecutionEnvironment")
    sweep = runs_referring("Implementation", "BenchmarkProtocol", "ExecutionEnvironment")
    candidates = list({**twins, **sweep}.values())  # a run in both is read once
    # status and references from the catalog rows (kidx.store.column_cache; an object is
    # read only where its row cannot say), so that only the runs that can be evidence are read
    rows = [row.get("spec") or {} for row in store.table_manifests(candidates, info)]
    passed = [(entry, row) for entry, row in zip(candidates, rows, strict=True) if row.get("status") == "passed"]
    protocol_field, workload_field = fields["BenchmarkProtocol"], fields["Workload"]
    protocols = store.referenced_manifests(_digests([row.get(protocol_field) for _, row in passed], protocol),
                                           "BenchmarkProtocol")
    kernel = {digest for digest, found in protocols.items() if is_kernel_timer(timer_of(found.get("spec")))}
    in_sweep = [row for _, row in passed if row.get(protocol_field) == protocol]  # the run's own sweeps' group
    workload = spec[workload_field]
    workloads = store.referenced_manifests(_digests([row.get(workload_field) for row in in_sweep], workload),
                                           "Workload")
    points = _sweep_points(workloads, workload)
    # a kernel-timer twin, or a point of one of the run's own sweeps: no other run changes its evidence
    wanted = [entry for entry, row in passed if row.get(protocol_field) in kernel
              or (row.get(protocol_field) == protocol and row.get(workload_field) in points)]
    others = [m for m in store.manifests(wanted) if (m.get("spec") or {}).get("status") == "passed"]
    unread = {(m["spec"]).get(workload_field) for m in others} - workloads.keys() - {None}
    if unread:
        workloads = {**workloads, **store.referenced_manifests(unread, "Workload")}
    timed = [_timed(m, fields, protocols, workloads) for m in others]
    own = _timed(manifest, fields, protocols, workloads)
    if own is None:
        return None
    if figures is not None:
        own = own._replace(cost_bytes=figures.cost.bytes, sol=figures.peak.sol if figures.peak else None)
    return assess([own, *(t for t in timed if t is not None)], only=own.name).get(own.name)


def _digests(values: list, own: str) -> set[str]:
    """The digests among a field's values (a row's value may be anything), and the run's own."""
    return {value for value in values if isinstance(value, str)} | {own}


def _sweep_points(workloads: dict[str, dict], own: str) -> set[str]:
    """The workloads (digests) that are points of one of the sweeps of workload ``own``
    (kidx.analysis.hostbound.sweep_keys), ``own`` among them when it is in a sweep."""
    from kidx.analysis.hostbound import sweep_keys

    keys = set(sweep_keys((workloads.get(own) or {}).get("spec")))
    if not keys:
        return set()
    return {digest for digest, workload in workloads.items() if keys.intersection(sweep_keys(workload.get("spec")))}


def _timed(manifest: dict, fields: dict, protocols: dict, workloads: dict):
    from kidx.analysis.hostbound import Timed, latency_ns, timer_of, twin_key

    spec = manifest.get("spec") or {}
    value = latency_ns(spec)
    if value is None:
        return None
    protocol, workload = spec.get(fields["BenchmarkProtocol"]), spec.get(fields["Workload"])
    protocol_spec = (protocols.get(protocol) or {}).get("spec")
    return Timed(manifest["metadata"]["name"], workload, spec.get(fields["Implementation"]),
                 spec.get(fields["ExecutionEnvironment"]), protocol, timer_of(protocol_spec), value,
                 (workloads.get(workload) or {}).get("spec"), twin_key=twin_key(protocol_spec, protocol))


def _with_not_carried(description: Description) -> Description:
    """A run's description with what its source format could not carry, looked up by
    ``spec.sourceNative.source`` (kidx.formats.framework.not_carried)."""
    if description.manifest.get("kind") != "BenchmarkRun":
        return description
    native = (description.manifest.get("spec") or {}).get("sourceNative")
    source = native.get("source") if isinstance(native, dict) else None
    if not isinstance(source, str) or not source.replace("-", "").isalnum():
        return description
    from importlib.machinery import PathFinder  # not importlib.util: a read need not import it

    import kidx.formats

    if PathFinder.find_spec(f"kidx.formats.{source.replace('-', '_')}", kidx.formats.__path__) is None:
        return description  # no importer of that name (and the importers' table is not read)
    from kidx.formats.framework import not_carried

    return description._replace(not_carried=not_carried(source))


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


__all__ = ["Description", "DescribeResult", "ReferenceLine", "ReferrerLine", "describe_objects"]

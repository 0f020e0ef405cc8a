"""The runs an analysis command works on: selected as ``get runs`` selects them, each with
its headline figure and the objects it refers to (by name and spec, looked up once per
distinct digest), so compare, series and plot never read an object file per reference."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kidx.analysis.comparability import ROLES
from kidx.analysis.measures import Measure, measure_of
from kidx.kinds.registry import KindRegistry
from kidx.store.store import Store

if TYPE_CHECKING:
    from kidx.store.catalog import Entry

RUN_KIND = "benchmarkruns"
# the roles by how few runs share one of their objects, fewest first (a workload's runs are
# fewer than an implementation's, which are fewer than an environment's or a protocol's)
NARROWEST = ("workload", "implementation", "environment", "protocol")
# ROLES: what comparability rests on and what is compared (kidx.analysis.comparability):
# the run's reference fields by name, as its CRD declares them


class Referenced(NamedTuple):
    """An object a run refers to: its name when it is in the store, else None."""

    digest: str | None
    name: str | None
    spec: dict | None
    annotations: dict | None = None  # an environment's measured peaks live here (docs/speed-of-light.md)

    @property
    def label(self) -> str:
        """How to show it: the name, else a short digest, else ``<none>``."""
        if self.name is not None:
            return self.name
        return self.digest[:19] if self.digest else "<none>"


_NOTHING = Referenced(None, None, None)  # a reference the run does not have


# the labels importers set to name a run's implementation as its source does
IMPLEMENTATION_LABELS = ("provider", "backend")


class AnalysedRun(NamedTuple):
    name: str
    labels: dict
    observed: str  # spec.observedAt, "" when absent
    status: str
    measure: Measure | None
    protocol: Referenced
    workload: Referenced
    environment: Referenced
    implementation: Referenced
    manifest: dict

    def reference(self, role: str) -> Referenced:
        return getattr(self, role)

    def implementation_names(self) -> set[str]:
        """What ``--baseline`` may call the run's implementation: its name, digest,
        library, backend or variant, or the value of a label the importer set to name it
        (``IMPLEMENTATION_LABELS``: Liger's ``provider``, tritonbench's and a v3 record's
        ``backend``)."""
        implementation = self.implementation
        spec = implementation.spec or {}
        names = {implementation.name, implementation.digest, spec.get("library"), spec.get("backend"),
                 spec.get("variant"), *(self.labels.get(key) for key in IMPLEMENTATION_LABELS)}
        return {name for name in names if isinstance(name, str) and name}

    @property
    def digest(self) -> str | None:
        return self.manifest.get("metadata", {}).get("digest")

    @property
    def known_measure(self) -> Measure:
        """The measure of a run that has one: compare, series and plot keep only those."""
        if self.measure is None:
            raise ValueError(f"run {self.name} has no measure")
        return self.measure


class Selection(NamedTuple):
    runs: list[AnalysedRun]
    missing: list[str]


class ReferenceResolver:
    """Name and spec of referenced objects: fetched in one batch per kind, then cached."""

    def __init__(self, store: Store):
        self._store = store
        self._known: dict[tuple[str, str], Referenced] = {}

    def prefetch(self, kind: str, digests) -> None:
        wanted = {d for d in digests if isinstance(d, str) and (kind, d) not in self._known}
        if not wanted:
            return
        found = self._store.referenced_manifests(wanted, kind)
        for digest in wanted:
            manifest = found.get(digest)
            if manifest is None:  # not in the store
                self._known[kind, digest] = Referenced(digest, None, None)
            else:
                metadata = manifest["metadata"]
                self._known[kind, digest] = Referenced(digest, metadata.get("name"), manifest.get("spec"),
                                                       metadata.get("annotations"))

    def resolve(self, kind: str, digest) -> Referenced:
        if not isinstance(digest, str):
            return Referenced(None, None, None)
        if (kind, digest) not in self._known:
            self.prefetch(kind, [digest])
        return self._known[kind, digest]


class RunsRequest(Protocol):
    """What compare, series and plot requests say about which runs to read."""

    @property
    def names(self) -> list[str]: ...
    @property
    def selector(self) -> Any: ...
    @property
    def field_selector(self) -> Any: ...
    @property
    def references(self) -> tuple: ...


def select_runs(store: Store, registry: KindRegistry, request: RunsRequest, conditions: tuple = (),
                rows_only: bool = False) -> Selection:
    """The runs the request selects, analysed; ``conditions``: ReferenceConditions they
    must also meet. ``rows_only``: each run as its catalog row holds it (its references,
    status, observedAt and the figure's median, as ``get`` lists them: no object read where
    the row caches its columns), for choosing which runs to read in full (``read_runs``);
    their measures are not to be judged."""
    from kidx.operations.select.get import LoadMode, Query, find_objects

    query = Query(
        arguments=["benchmarkruns", *request.names],
        selector=request.selector,
        field_selector=request.field_selector,
        references=tuple(request.references),
        reference_conditions=conditions,
        load=LoadMode.COLUMNS if rows_only else LoadMode.MANIFESTS,
    )
    result = find_objects(store, registry, query)
    manifests = [m for _, group in result.groups for m in group]
    return Selection(analysed_all(store, registry, manifests, getattr(request, "metric", None)), result.missing)


def read_runs(store: Store, registry: KindRegistry, runs: list[AnalysedRun],
              metric: str | None = None) -> list[AnalysedRun]:
    """``runs`` selected with ``rows_only``, read in full and analysed (in batches: one
    look-up a thousand runs), in their order."""
    from kidx.operations.select.get import read_in_batches

    manifests = []
    for row, identity in read_in_batches(store, [run.manifest for run in runs],
                                         lambda row: row["metadata"]["digest"]):
        if identity is None:  # a missing object: the store's own error names it
            identity = store.identity(row["metadata"]["digest"])
        manifests.append({**row, "apiVersion": identity["apiVersion"], "kind": identity["kind"],
                          "spec": identity["spec"]})
    return analysed_all(store, registry, manifests, metric)


def recent_runs(store: Store, registry: KindRegistry, condition_sets, window: int,
                known: Collection[str] = (), metric: str | None = None) -> list[AnalysedRun]:
    """The runs that meet one of the ``condition_sets`` (each a tuple of
    ReferenceConditions, all of which a run meets), at most ``window`` a set: the ones
    applied most recently (``kidx.store.catalog.RECENT``), less those named in ``known``
    (read already; they count in the window). One look-up per set, each run read once,
    and the objects they refer to looked up once per kind: what an analysis reads follows
    the sets it asks for, never a series' or a role's every run."""
    from kidx.store.catalog import RECENT, CatalogQuery
    from kidx.store.store import manifest_of

    kind = registry.resolve(RUN_KIND).kind
    entries: dict[str, Entry] = {}
    with store.reading() as catalog:  # one snapshot for every look-up
        for conditions in condition_sets:
            query = CatalogQuery(kind=kind, references=tuple(conditions), order=RECENT, limit=window)
            for entry in store.select(query, catalog):
                if entry.name not in known:
                    entries.setdefault(entry.name, entry)
        identities = store.identities({entry.digest for entry in entries.values()})
        manifests = [manifest_of(entry, identities[entry.digest]) if entry.digest in identities
                     else store.manifest(entry)  # missing: the store's own error names it
                     for entry in entries.values()]
    return analysed_all(store, registry, manifests, metric)


def condition_sets(registry: KindRegistry, runs: list[AnalysedRun], roles: tuple[str, ...],
                   required: tuple[str, ...]) -> list[tuple]:
    """One set of ReferenceConditions per distinct combination of the ``runs``'
    references in ``roles`` (``("protocol", "workload", "environment",
    "implementation")``: one per series), the narrowest role first, so that the store
    starts from its runs and checks the others on them. A run missing a reference in
    ``required`` is left out; one missing another is matched on the references it has."""
    from kidx.store.catalog import ReferenceCondition

    fields = run_reference_fields(registry)
    wanted = sorted(roles, key=NARROWEST.index)
    keys: dict[tuple, None] = {}
    for run in runs:
        if all(run.reference(role).digest for role in required):
            keys.setdefault(tuple((role, run.reference(role).digest) for role in wanted
                                  if run.reference(role).digest), None)
    return [tuple(ReferenceCondition(digests=(digest,), field=fields[role][0]) for role, digest in key)
            for key in sorted(keys)]


def analysed_all(store: Store, registry: KindRegistry, manifests: list[dict],
                 metric: str | None = None) -> list[AnalysedRun]:
    """The run manifests analysed, the objects they refer to looked up once per kind;
    ``metric``: each run's figure of that metric instead of its headline (``--metric``)."""
    fields = run_reference_fields(registry)
    resolver = ReferenceResolver(store)
    specs = [manifest.get("spec") or {} for manifest in manifests]
    for field, kind in fields.values():
        resolver.prefetch(kind, [spec.get(field) for spec in specs])
    return [analysed(manifest, resolver, fields, spec, metric) for manifest, spec in zip(manifests, specs, strict=True)]


def run_reference_fields(registry: KindRegistry) -> dict[str, tuple[str, str]]:
    """``{"workload": ("workloadDigest", "Workload"), …}`` from the run kind's CRD."""
    from kidx.query.reference_paths import reference_role

    references = registry.resolve(RUN_KIND).references
    return {reference_role(ref.field): (ref.field, ref.target_kind) for ref in references
            if reference_role(ref.field) in ROLES}


def analysed(manifest: dict, resolver: ReferenceResolver, fields: dict[str, tuple[str, str]],
             spec: dict, metric: str | None = None) -> AnalysedRun:
    """``spec``: the manifest's ``spec`` (or ``{}``), which the caller has read already."""
    refs = dict.fromkeys(ROLES, _NOTHING)
    for role, (field, kind) in fields.items():
        refs[role] = resolver.resolve(kind, spec.get(field))
    measure = measure_of(spec, refs["protocol"].spec, metric) if spec.get("status") == "passed" else None
    return AnalysedRun(
        name=manifest["metadata"]["name"],
        labels=manifest["metadata"].get("labels") or {},
        observed=spec.get("observedAt") or "",
        status=spec.get("status") or "",
        measure=measure,
        manifest=manifest,
        **refs,
    )

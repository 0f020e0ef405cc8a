"""``kidx summary``: what the store holds at a glance, one row per operation and GPU with
its run count and release range.

Read from the catalog alone: each selected run's labels and its cached printer columns
(which hold its workload and environment digests), then each distinct workload and
environment once. No run's object file is read, so a store of millions of runs costs one
pass over its catalog rows."""

from __future__ import annotations

from typing import NamedTuple

from kidx.errors import UsageError
from kidx.operations.select.analysed_runs import RUN_KIND
from kidx.query.label_selector import resolved
from kidx.query.versions import version_key
from kidx.store.catalog import CatalogQuery

NOT_STORED = "<not in store>"  # an operation or GPU whose object the store does not hold
RELEASE_SUFFIX = "_version"  # a label key ending so is a release label (liger_version)


class SummaryRow(NamedTuple):
    operation: str
    gpu: str
    runs: int
    releases: tuple[str, ...]  # the release label's values, in version order

    @property
    def first(self) -> str | None:
        return self.releases[0] if self.releases else None

    @property
    def last(self) -> str | None:
        return self.releases[-1] if self.releases else None


class Summary(NamedTuple):
    rows: tuple[SummaryRow, ...]
    runs: int
    release_label: str | None  # the label whose range is shown; None: none
    release_labels: tuple[str, ...] = ()  # the *_version keys the runs carry, when none was chosen

    @property
    def operations(self) -> int:
        return len({row.operation for row in self.rows})

    @property
    def gpus(self) -> int:
        return len({row.gpu for row in self.rows})


def summarize(store, registry, selector=None, release_label: str | None = None) -> Summary:
    """The selected runs by workload operation and GPU. The release range is that of
    ``release_label``; without one, of the one label key ending in ``_version`` that the
    runs carry (none shown when they carry several: the summary names them)."""
    info = registry.resolve(RUN_KIND)
    with store.reading() as catalog:
        requirements = resolved(getattr(selector, "requirements", ()), catalog.label_values)
        entries = catalog.list(CatalogQuery(kind=info.kind, labels=requirements, annotations=False))
        if not entries:
            return Summary((), 0, release_label)
        stubs = store.table_manifests(entries, info)
        workloads = _specs(store, catalog, registry, "workloads", (s["spec"].get("workloadDigest") for s in stubs))
        environments = _specs(store, catalog, registry, "environments",
                              (s["spec"].get("environmentDigest") for s in stubs))
    keys = sorted({key for entry in entries for key in entry.labels if key.endswith(RELEASE_SUFFIX)})
    if release_label is None and len(keys) == 1:
        release_label = keys[0]
    elif release_label is not None and not any(release_label in entry.labels for entry in entries):
        present = ", ".join(keys) if keys else "none ends in _version"
        raise UsageError(f"no selected run has the label {release_label} (release labels present: {present})")
    counts: dict[tuple[str, str], int] = {}
    releases: dict[tuple[str, str], set[str]] = {}
    for entry, stub in zip(entries, stubs, strict=True):
        spec = stub["spec"]
        group = (_operation(workloads.get(spec.get("workloadDigest"))),
                 _gpu(environments.get(spec.get("environmentDigest"))))
        counts[group] = counts.get(group, 0) + 1
        value = entry.labels.get(release_label) if release_label else None
        if value is not None:
            releases.setdefault(group, set()).add(value)
    rows = tuple(SummaryRow(operation, gpu, count, tuple(sorted(releases.get((operation, gpu), ()), key=version_key)))
                 for (operation, gpu), count in sorted(counts.items()))
    return Summary(rows, len(entries), release_label, () if release_label else tuple(keys))


def _specs(store, catalog, registry, kind: str, digests) -> dict[str, dict]:
    wanted = {digest for digest in digests if isinstance(digest, str)}
    found = store.referenced_manifests(wanted, registry.resolve(kind).kind, catalog)
    return {digest: manifest.get("spec") or {} for digest, manifest in found.items()}


def _operation(spec: dict | None) -> str:
    operation = (spec or {}).get("operation")
    return operation if isinstance(operation, str) and operation else NOT_STORED


def _gpu(spec: dict | None) -> str:
    """The product and its form factor: ``NVIDIA H100 80GB HBM3``."""
    hardware = (spec or {}).get("hardware")
    if not isinstance(hardware, dict) or not isinstance(hardware.get("product"), str):
        return NOT_STORED
    form = hardware.get("formFactor")
    return f"{hardware['product']} {form}" if isinstance(form, str) and form else hardware["product"]

"""Compare: put comparable runs side by side, each against a baseline, with a verdict.

Runs are comparable when they share protocol, workload and environment digests; each
such group is compared on its own (``--by implementation``), or, with ``--by label=KEY``,
each implementation within it is compared across the values of a label (a release).
The baseline is named with ``--baseline``; without it the earliest observed run of the
group is the baseline (ties: by run name). When the baseline value matches several runs
of a group, the most recently observed of them is used.
"""

from __future__ import annotations

from typing import NamedTuple

from kidx.analysis.measures import Measure
from kidx.analysis.significance import DEFAULT_THRESHOLD, Judgement, judge, rule_text
from kidx.errors import KidxError, UsageError
from kidx.operations.analysed_runs import AnalysedRun, Referenced, select_runs

GROUP_ROLES = ("protocol", "workload", "environment")


class CompareRequest(NamedTuple):
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # None: --by implementation
    baseline: str | None = None
    threshold: float = DEFAULT_THRESHOLD
    force: bool = False
    only: frozenset = frozenset()  # show only groups with rows of these verdicts (and only those rows)


class ComparedRow(NamedTuple):
    run: AnalysedRun
    label: str | None  # the --by label's value
    judgement: Judgement | None  # None for the baseline itself and when there is no baseline
    verdict: str | None  # baseline, faster, slower, same; None without a baseline

    @property
    def measure(self) -> Measure:
        return self.run.measure


class ComparedGroup(NamedTuple):
    protocol: Referenced
    workload: Referenced
    environment: Referenced
    implementation: Referenced | None  # the group's implementation with --by label
    rows: list[ComparedRow]
    note: str | None = None  # why nothing was compared
    forced: str | None = None  # what differs, when --force put incomparable runs together

    @property
    def compared(self) -> bool:
        return self.note is None


class Comparison(NamedTuple):
    groups: list[ComparedGroup]
    rule: str
    threshold: float
    label_key: str | None
    unmeasured: list[str]  # runs with no figure to compare (not passed, or no number)
    unlabelled: list[str]  # runs without the --by label

    @property
    def regressions(self) -> list[ComparedRow]:
        return [row for group in self.groups for row in group.rows if row.verdict == "slower"]


def compare(store, registry, request: CompareRequest) -> Comparison:
    if request.force and len(request.names) < 2:
        raise UsageError("--force compares named runs that are not comparable: name at least two runs")
    selection = select_runs(store, registry, request.names, request.selector, request.field_selector, request.references)
    if selection.missing:
        raise KidxError("; ".join(selection.missing))
    runs = selection.runs
    measured = [run for run in runs if run.measure is not None]
    unmeasured = [run.name for run in runs if run.measure is None]
    unlabelled: list[str] = []
    if request.label_key is not None:
        unlabelled = [run.name for run in measured if request.label_key not in run.labels]
        measured = [run for run in measured if request.label_key in run.labels]
    forced = None
    if request.names and len(runs) > 1:
        forced = _incomparable(runs, request.force)
    if forced is not None:
        buckets = {(): measured}
    else:
        buckets = {}
        for run in measured:
            key = tuple(run.reference(role).digest for role in GROUP_ROLES)
            if request.label_key is not None:
                key += (run.implementation.digest,)
            buckets.setdefault(key, []).append(run)
    groups = [_group(members, request, forced) for members in buckets.values() if members]
    groups.sort(key=_group_order)
    if request.only:
        groups = [_only(group, request.only) for group in groups if group.compared
                  and any(row.verdict in request.only for row in group.rows)]
    return Comparison(groups, rule_text(request.threshold), request.threshold, request.label_key, unmeasured, unlabelled)


def _only(group: ComparedGroup, verdicts: frozenset) -> ComparedGroup:
    """The baseline row and the rows with one of the verdicts."""
    return group._replace(rows=[row for row in group.rows if row.verdict == "baseline" or row.verdict in verdicts])


def _incomparable(runs: list[AnalysedRun], force: bool) -> str | None:
    """What differs among named runs; an error unless --force."""
    first = runs[0]
    for other in runs[1:]:
        differing = [role for role in GROUP_ROLES if other.reference(role).digest != first.reference(role).digest]
        if not differing:
            continue
        what = "; ".join(
            f"{role} {first.reference(role).label} vs {other.reference(role).label}" for role in differing
        )
        if not force:
            raise KidxError(
                f"runs {first.name} and {other.name} are not comparable: they differ in {what} "
                "(runs compare only under one protocol, workload and environment; --force compares them anyway)"
            )
        return "forced: runs differ in " + ", ".join(
            role for role in GROUP_ROLES if len({r.reference(role).digest for r in runs}) > 1
        )
    return None


def _label_of(run: AnalysedRun, request: CompareRequest) -> str | None:
    return run.labels.get(request.label_key) if request.label_key is not None else None


def _matches_baseline(run: AnalysedRun, request: CompareRequest) -> bool:
    if request.label_key is not None:
        return run.labels.get(request.label_key) == request.baseline
    implementation = run.implementation
    library = (implementation.spec or {}).get("library")
    return request.baseline in (implementation.name, implementation.digest, library)


def _group(members: list[AnalysedRun], request: CompareRequest, forced: str | None) -> ComparedGroup:
    first = members[0]
    implementation = first.implementation if request.label_key is not None and forced is None else None
    refs = dict(protocol=first.protocol, workload=first.workload, environment=first.environment,
                implementation=implementation, forced=forced)
    if len(members) == 1:
        row = ComparedRow(first, _label_of(first, request), None, None)
        return ComparedGroup(rows=[row], note="a single run: nothing to compare with", **refs)
    if request.baseline is not None:
        candidates = [run for run in members if _matches_baseline(run, request)]
        if not candidates:
            rows = [ComparedRow(run, _label_of(run, request), None, None) for run in _ordered(members, request)]
            return ComparedGroup(rows=rows, note=f"no run of baseline {request.baseline}", **refs)
        baseline = max(candidates, key=lambda run: (run.observed, run.name))
    else:
        baseline = min(members, key=lambda run: (run.observed, run.name))
    rows = [ComparedRow(baseline, _label_of(baseline, request), None, "baseline")]
    for run in _ordered(members, request):
        if run is baseline:
            continue
        judgement = judge(run.measure, baseline.measure, request.threshold)
        verdict = judgement.verdict
        rows.append(ComparedRow(run, _label_of(run, request), judgement, verdict))
    return ComparedGroup(rows=rows, **refs)


def _ordered(members: list[AnalysedRun], request: CompareRequest) -> list[AnalysedRun]:
    if request.label_key is not None:
        return sorted(members, key=lambda run: (run.observed, _label_of(run, request) or "", run.name))
    return sorted(members, key=lambda run: (run.implementation.label, run.observed, run.name))


def _group_order(group: ComparedGroup):
    return (group.note is not None, group.protocol.label, group.workload.label, group.environment.label,
            group.implementation.label if group.implementation else "")

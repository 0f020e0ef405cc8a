"""Which of the runs an analysis shows are mostly host: the store's evidence, gathered for
the rules of ``kidx.analysis.hostbound`` (compare, publish; describe reads the same
rules through ``kidx.operations.describe``).

The evidence a run needs lives in other runs: its kernel-timer twins (same workload,
implementation, environment and benchmark name — Liger's names the timed pass, which its
protocols also hold — another protocol whose timer differs) and the other
points of its sweeps (same protocol, implementation and environment). ``related_runs``
finds them in the store, one look-up per environment and implementation, never one per
run nor every run of a workload or protocol.
"""

from __future__ import annotations

from kidx.analysis.hostbound import HostEvidence, Timed, assess, benchmark_of, is_kernel_timer, timer_of
from kidx.operations.analysed_runs import AnalysedRun, reference_condition_sets, runs_meeting_any


def timed(run: AnalysedRun, with_cost: bool = False) -> Timed | None:
    """The run as the rules read it; None unless it is a passed latency run.
    ``with_cost``: with its compulsory traffic and share of the roofline, where known."""
    measure = run.measure
    if measure is None or measure.metric != "latency":
        return None
    cost_bytes = sol = None
    if with_cost:
        from kidx.speed_of_light.achieved import achieved

        environment = {"spec": run.environment.spec} if run.environment.spec is not None else None
        figures = achieved(run.manifest.get("spec") or {}, run.workload.spec, environment, measure.value)
        if figures is not None:
            cost_bytes = figures.cost.bytes
            sol = figures.peak.sol if figures.peak is not None else None
    return Timed(run.name, run.workload.digest, run.implementation.digest, run.environment.digest,
                 run.protocol.digest, timer_of(run.protocol.spec), measure.value, run.workload.spec, cost_bytes, sol,
                 benchmark_of(run.manifest.get("spec") or {}))


def evidence(shown: list[AnalysedRun], context: list[AnalysedRun]) -> dict[str, HostEvidence]:
    """The evidence for each shown run that has some, read from the shown runs and the
    ``context`` (their twins and sweeps, as ``related_runs`` finds them)."""
    names = {run.name for run in shown}
    records: dict[str, Timed] = {}
    for run in shown:
        found = timed(run, with_cost=True)
        if found is not None:
            records[run.name] = found
    for run in context:
        if run.name not in names and run.name not in records:
            found = timed(run)
            if found is not None:
                records[run.name] = found
    assessed = assess(list(records.values()))
    return {name: found for name, found in assessed.items() if name in names}


def related_runs(store, registry, shown: list[AnalysedRun], known: list[AnalysedRun]) -> list[AnalysedRun]:
    """The store's runs that may be twins or sweep points of the shown runs that are not
    timed by a kernel timer: runs on each (workload, implementation, environment) and each
    (protocol, implementation, environment) of theirs, beside the ``known`` runs already
    read; one look-up per environment and implementation."""
    wanted = [run for run in shown if run.measure is not None and run.measure.metric == "latency"
              and not is_kernel_timer(timer_of(run.protocol.spec))]
    if not wanted:
        return known
    found: dict[str, AnalysedRun] = {run.name: run for run in known}
    known_implementation = [run for run in wanted if run.implementation.digest]
    unknown_implementation = [run for run in wanted if not run.implementation.digest]
    conditions = [*reference_condition_sets(registry, known_implementation, ("environment", "implementation"),
                                            ("workload",)),
                  *reference_condition_sets(registry, known_implementation, ("environment", "implementation"),
                                            ("protocol",)),
                  *reference_condition_sets(registry, unknown_implementation, ("environment",), ("workload",)),
                  *reference_condition_sets(registry, unknown_implementation, ("environment",), ("protocol",))]
    for run in runs_meeting_any(store, registry, conditions):
        found.setdefault(run.name, run)
    return list(found.values())

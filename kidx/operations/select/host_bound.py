"""Which of the runs an analysis shows are mostly host: the store's evidence, gathered for
the rules of ``kidx.analysis.hostbound`` (compare, publish; describe reads the same
rules through ``kidx.operations.select.describe``).

The evidence a run needs lives in other runs: its kernel-timer twins (same workload,
implementation and environment, a protocol that differs from the run's only in its
measurement and whose timer differs: ``kidx.analysis.hostbound.twin_key``) and the other
points of its sweeps (same protocol, implementation and environment). ``related_runs``
finds them in the store: of each such group, the HISTORY_WINDOW runs applied most
recently, one look-up per group, never one per run nor every run of a group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kidx.analysis.hostbound import HostEvidence, Timed, assess, is_kernel_timer, timer_of, twin_key
from kidx.analysis.window import HISTORY_WINDOW
from kidx.operations.select.analysed_runs import AnalysedRun, condition_sets, recent_runs

if TYPE_CHECKING:
    from kidx.speed_of_light.achieved import Achieved

TWINS = ("workload", "implementation", "environment")  # a twin shares these (and another protocol)
SWEEP = ("protocol", "implementation", "environment")  # a sweep's points share these (and other workloads)


def achieved_of(run: AnalysedRun) -> Achieved | None:
    """A passed latency run's speed of light (kidx.speed_of_light.achieved) at its figure;
    None for any other run, or where its cost is unknown."""
    measure = run.measure
    if measure is None or measure.metric != "latency":
        return None
    from kidx.speed_of_light.achieved import achieved

    environment = {"spec": run.environment.spec} if run.environment.spec is not None else None
    return achieved(run.manifest.get("spec") or {}, run.workload.spec, environment, measure.value)


def timed(run: AnalysedRun, with_cost: bool = False,
          figures_of: Callable[[AnalysedRun], Achieved | None] = achieved_of) -> Timed | None:
    """The run as the rules read it; None unless it is a passed latency run.
    ``with_cost``: with its compulsory traffic and share of the roofline, where known
    (``figures_of``: the run's speed of light, ``achieved_of`` or the caller's, made once)."""
    measure = run.measure
    if measure is None or measure.metric != "latency":
        return None
    cost_bytes = sol = None
    if with_cost:
        figures = figures_of(run)
        if figures is not None:
            cost_bytes = figures.cost.bytes
            sol = figures.peak.sol if figures.peak is not None else None
    return Timed(run.name, run.workload.digest, run.implementation.digest, run.environment.digest,
                 run.protocol.digest, timer_of(run.protocol.spec), measure.value, run.workload.spec, cost_bytes, sol,
                 twin_key(run.protocol.spec, run.protocol.digest))


def evidence(shown: list[AnalysedRun], context: list[AnalysedRun],
             figures_of: Callable[[AnalysedRun], Achieved | None] = achieved_of) -> dict[str, HostEvidence]:
    """The evidence for each shown run that has some, read from the shown runs and the
    ``context`` (their twins and sweeps, as ``related_runs`` finds them); ``figures_of``:
    each shown run's speed of light (``achieved_of``; publish passes the figures it shows too)."""
    names = {run.name for run in shown}
    records: dict[str, Timed] = {}
    for run in shown:
        found = timed(run, with_cost=True, figures_of=figures_of)
        if found is not None:
            records[run.name] = found
    for run in context:
        if run.name not in names and run.name not in records:
            found = timed(run)
            if found is not None:
                records[run.name] = found
    assessed = assess(list(records.values()))
    return {name: found for name, found in assessed.items() if name in names}


def seeks_evidence(run: AnalysedRun) -> bool:
    """Whether host evidence is sought for the run: a latency not timed by a kernel timer."""
    return (run.measure is not None and run.measure.metric == "latency"
            and not is_kernel_timer(timer_of(run.protocol.spec)))


def related_runs(store, registry, shown: list[AnalysedRun], known: list[AnalysedRun]) -> list[AnalysedRun]:
    """The store's runs that may be twins or sweep points of the shown runs that are not
    timed by a kernel timer, beside the ``known`` runs already read: of each (workload,
    implementation, environment) and each (protocol, implementation, environment) of
    theirs, the HISTORY_WINDOW runs applied most recently (kidx.analysis.window); one
    look-up per such group, never one per run nor a group's every run."""
    wanted = [run for run in shown if seeks_evidence(run)]
    if not wanted:
        return known
    found: dict[str, AnalysedRun] = {run.name: run for run in known}
    conditions = [*condition_sets(registry, wanted, TWINS, ("workload", "environment")),
                  *condition_sets(registry, wanted, SWEEP, ("protocol", "environment"))]
    for run in recent_runs(store, registry, conditions, HISTORY_WINDOW, found):
        found.setdefault(run.name, run)
    return list(found.values())

"""Compare: put comparable runs side by side, arm against baseline arm, with a verdict.

Runs are comparable when they share protocol, workload and environment digests
(``kidx.analysis.comparability``). Within each such group the runs fall into **arms**:
with ``--by implementation`` one arm per implementation, with ``--by label=KEY`` (a
release) one arm per value of the label for each implementation. An arm pools its runs;
runs inside one arm are never compared with each other. Each arm is judged against the
group's baseline arm: the one ``--baseline`` names, else, for version-like label values,
the lowest by version order, else the arm of the earliest observed run (ties: by name).

The between-run spread that decides a verdict comes from the arms' repeated runs and from
the store's other runs of the same series (same protocol, workload, environment and
implementation), at most the ``HISTORY_WINDOW`` applied most recently, as conbench's
lookback does; without either, a verdict rests on within-run evidence and is at most
``unconfirmed``.

A comparison also says what kept it from judging (nothing selected, a baseline or label
no run has, nothing compared, releases that share no group), so a CI gate can fail
closed on it.
"""

from __future__ import annotations

import itertools
import re
import statistics
from typing import NamedTuple

from kidx.analysis.aggregate import Aggregate
from kidx.analysis.comparability import COMPARABLE_ROLES, ROLES, SUBJECT_ROLE, comparable_key, differing_roles
from kidx.analysis.hostbound import HostEvidence, is_kernel_timer, timer_of
from kidx.analysis.measures import Measure
from kidx.analysis.significance import (
    ALPHA,
    BASELINE,
    CONFIRM_RUNS,
    DEFAULT_THRESHOLD,
    FLOOR_SHARE,
    REGRESSIONS,
    UNCONFIRMED,
    Floors,
    Judgement,
    floors_of,
    judge_runs,
    least_change,
    least_t,
    rule_text,
)
from kidx.analysis.window import HISTORY_WINDOW
from kidx.errors import KidxError, NotFoundError, UsageError
from kidx.operations.analyse.aggregate import AggregateKey, AggregateRow, aggregate_rows, operation_of, overall
from kidx.operations.analyse.series_history import SeriesHistory, series_of
from kidx.operations.select.analysed_runs import (
    RUN_KIND,
    AnalysedRun,
    Referenced,
    Selection,
    condition_sets,
    recent_runs,
    select_runs,
)
from kidx.operations.select.host_bound import SWEEP, TWINS, evidence, related_runs, seeks_evidence
from kidx.operations.select.selection_hint import SUGGESTIONS, nearest, nothing_selected
from kidx.operations.select.selection_hint import listed as _listed
from kidx.query.versions import version_key

NOTHING_COMPARED = "nothing compared"
PREVIOUS = "previous"  # --baseline previous, with --by label=KEY: each value against the one before it
VERSION = re.compile(r"v?\d+(?:[.\-_+]?[0-9A-Za-z]+)*")


class CompareRequest(NamedTuple):
    names: list[str]
    selector: object = None
    field_selector: object = None
    references: tuple = ()
    label_key: str | None = None  # None: --by implementation
    baseline: str | None = None
    threshold: float | None = DEFAULT_THRESHOLD  # None: it follows the evidence
    force: bool = False
    # show only groups with rows of these verdicts (and only those rows); a verdict word keeps the
    # rows that read it alone or in parentheses after unconfirmed (slower: unconfirmed (slower) too)
    only: frozenset = frozenset()
    alpha: float = ALPHA
    min_t: float | None = None  # the smallest |t| a change needs; None: by the timer (significance.least_t)
    confirm_runs: int = CONFIRM_RUNS  # runs a side that must agree on a change (1: one run suffices)
    aggregate: AggregateKey | None = None  # --aggregate: the compared rows taken together by this key
    metric: str | None = None  # --metric: judge each run by this metric's figure instead of its headline
    # a kernel timer's runs are judged on their floors where those are under this share of the
    # statistics' spread between runs (significance.FLOOR_SHARE; 0: never)
    floor_share: float = FLOOR_SHARE


class Arm(NamedTuple):
    """The runs of one group that share the compared value, pooled."""

    label: str | None  # the --by label's value
    runs: list[AnalysedRun]  # oldest first
    measure: Measure  # pooled: the median of the runs' statistics, samples combined

    @property
    def run(self) -> AnalysedRun:
        """The newest run (the one a single-run arm is)."""
        return self.runs[-1]

    @property
    def values(self) -> list[float]:
        return [run.known_measure.value for run in self.runs]

    @property
    def spread(self) -> float | None:
        """The relative spread between the arm's runs (standard deviation of logs)."""
        from kidx.analysis.significance import spread_of

        return spread_of(self.values).sigma


class ComparedRow(NamedTuple):
    arm: Arm
    judgement: Judgement | None  # None for the baseline itself and when there is no baseline
    verdict: str | None  # baseline, faster, slower, same, inconclusive, unconfirmed; None without a baseline
    host: HostEvidence | None = None  # how much of the arm's figure is the host's, where the store shows it
    against: Arm | None = None  # the arm it was judged against (--baseline previous: the value before it)
    context: bool = False  # shown only as a kept row's baseline (--only with --baseline previous): not counted

    @property
    def run(self) -> AnalysedRun:
        return self.arm.run

    @property
    def label(self) -> str | None:
        return self.arm.label

    @property
    def measure(self) -> Measure:
        return self.arm.measure


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
    threshold: float | None
    label_key: str | None
    unmeasured: list[str]  # runs with no figure to compare (not passed, or no number)
    unlabelled: list[str]  # runs without the --by label
    alpha: float = ALPHA
    min_t: float | None = None
    problems: tuple[str, ...] = ()  # what kept the comparison from judging: a gate fails closed on these
    unmatched: tuple[str, ...] = ()  # label values that share no group with the baseline, and why
    inputs: tuple[AnalysedRun, ...] = ()  # every run read, for the record
    judged: tuple[str | None, ...] | None = None  # every row's verdict before --only (None: the rows')
    # the store's other runs of the compared series, whose spread the verdicts' noise was measured on
    history: tuple[AnalysedRun, ...] = ()
    aggregate_key: AggregateKey | None = None  # --aggregate's key
    aggregates: tuple[AggregateRow, ...] = ()  # by that key, every row with a verdict, whatever --only shows
    # every row with a verdict taken together, per metric (with --aggregate)
    overall: tuple[tuple[str, Aggregate], ...] = ()
    only: frozenset = frozenset()  # the verdicts --only showed (empty: every row shown)

    @property
    def verdicts(self) -> list[str | None]:
        """What a gate judges: every row's verdict, whatever --only shows."""
        return list(self.judged) if self.judged is not None else [row.verdict for row in self.rows]

    @property
    def rows(self) -> list[ComparedRow]:
        return [row for group in self.groups for row in group.rows]

    @property
    def regressions(self) -> list[ComparedRow]:
        """The rows shown that regressed (a kept row's baseline, shown beside it, not counted)."""
        return [row for row in self.rows if row.verdict in REGRESSIONS and not row.context]

    def counts(self) -> dict[str, int]:
        """How many rows got each verdict (the baseline rows not counted)."""
        counted: dict[str, int] = {}
        for row in self.rows:
            if row.verdict not in (None, BASELINE) and not row.context:
                counted[row.verdict] = counted.get(row.verdict, 0) + 1
        return counted


def compare(store, registry, request: CompareRequest, selection: Selection | None = None) -> Comparison:
    """``selection``: the request's selection where it has been read already (``kidx publish``)."""
    if request.force and len(request.names) < 2:
        raise UsageError("--force compares named runs that are not comparable: name at least two runs")
    if selection is None:
        selection = select_runs(store, registry, request)
    if selection.missing:
        raise NotFoundError("; ".join(selection.missing))
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
        buckets: dict[tuple, list[AnalysedRun]] = {(): measured}
    else:
        buckets = {}
        for run in measured:
            key = comparable_key(run)
            if request.label_key is not None:
                key += (run.implementation.digest,)
            buckets.setdefault(key, []).append(run)
    # Arms and baselines do not depend on the history; only a verdict reads it, and only of
    # the series it judges. A first pass on the selected runs alone finds those series, the
    # history of those is read, and the second pass judges on it: a group with nothing to
    # compare (one arm, no baseline) costs no look-up.
    asked = SeriesHistory(runs)
    groups = [_group(members, request, forced, asked) for members in buckets.values() if members]
    history_runs = _history(store, registry, request, runs, _history_wanted(groups, asked, measured))
    history = SeriesHistory(history_runs)
    groups = [_group(members, request, forced, history) for members in buckets.values() if members]
    groups = _with_host_evidence(store, registry, request, groups, history_runs)
    groups.sort(key=_group_order)
    problems = _problems(request, runs, measured, groups, store, registry)
    unmatched = _unmatched(request, measured, groups) if request.label_key is not None else []
    if unmatched and not any(group.compared for group in groups):
        problems.extend(unmatched)
    judged = tuple(row.verdict for group in groups for row in group.rows)
    judged_series = {series_of(run) for run in asked.asked}
    selected = {run.name for run in runs}
    deciding = tuple(run for run in history_runs if run.name not in selected and run.measure is not None
                     and series_of(run) in judged_series)
    aggregates: tuple[AggregateRow, ...] = ()
    suite: tuple[tuple[str, Aggregate], ...] = ()
    if request.aggregate is not None:
        previous = request.label_key is not None and request.baseline == PREVIOUS
        aggregates = tuple(aggregate_rows(groups, request.aggregate, request.label_key is not None, previous,
                                          request.alpha))
        suite = overall(groups, previous, request.alpha)
    if request.only:  # what is shown; the gate judges every row (judged)
        groups = [_only(group, request.only) for group in groups if group.compared
                  and any(shown_by(row, request.only) for row in group.rows)]
    return Comparison(groups, rule_text(request.threshold, request.alpha, request.min_t, request.confirm_runs,
                                     request.floor_share),
                      request.threshold,
                      request.label_key, unmeasured, unlabelled, request.alpha, request.min_t, tuple(problems),
                      tuple(unmatched), tuple(runs), judged, deciding, request.aggregate, aggregates, suite,
                      request.only)


class GroupVerdicts:
    """compare's rows for the comparable groups of a selection read already, each group
    against a baseline implementation named for it (``kidx publish``'s cells): the arms
    ``--by implementation`` makes, judged by the same ``_judged`` on the same history compare
    reads (the selection, and where ``request`` narrows it, each series' recent runs in the
    store), so that a page's verdict is the one ``kidx compare --baseline`` prints."""

    def __init__(self, store, registry, request: CompareRequest, runs: list[AnalysedRun]):
        self._request = request._replace(label_key=None, baseline=None, only=frozenset())
        self._groups: dict[tuple, list[AnalysedRun]] = {}
        for run in runs:
            if run.measure is not None:
                self._groups.setdefault(comparable_key(run), []).append(run)
        narrowed = store is not None and _narrowed(request)
        self._history = SeriesHistory(_history(store, registry, request, runs) if narrowed else runs)
        self._found: dict[tuple, dict[str | None, ComparedRow]] = {}

    def rows(self, run: AnalysedRun, baseline: str | None) -> dict[str | None, ComparedRow]:
        """The rows of ``run``'s comparable group against the arm of the implementation whose
        digest is ``baseline``, by implementation digest (the baseline's row included); none
        where the group has no run of it."""
        key = (comparable_key(run), baseline)
        found = self._found.get(key)
        if found is None:
            members = self._groups.get(key[0], [])
            arms = _arms(members, self._request, None)
            base = next((arm for arm in arms if arm.run.implementation.digest == baseline), None)
            found = {}
            if base is not None:
                found[baseline] = ComparedRow(base, None, BASELINE)
                for arm in arms:
                    if arm is not base:
                        row = _judged(arm, base, self._request, self._history, members[0])
                        found[arm.run.implementation.digest] = row
            self._found[key] = found
        return found


def _narrowed(request: CompareRequest) -> bool:
    return bool(request.names or request.selector or request.field_selector or request.references)


def _with_host_evidence(store, registry, request: CompareRequest, groups: list[ComparedGroup],
                        history_runs: list[AnalysedRun]) -> list[ComparedGroup]:
    """Each compared row with its host evidence (kidx.analysis.hostbound): a kernel-timer
    twin's launch overhead, else what its sweep or speed of light shows; the arm's pooled
    figure is the one divided."""
    shown = [row.run for group in groups if group.compared for row in group.rows]
    if not shown:
        return groups
    context = related_runs(store, registry, shown, history_runs) if _narrowed(request) else history_runs
    found = evidence(shown, context)
    if not found:
        return groups
    out = []
    for group in groups:
        rows = []
        for row in group.rows:
            host = found.get(row.run.name)
            rows.append(row._replace(host=host.with_value(row.measure.value)) if host is not None else row)
        out.append(group._replace(rows=rows))
    return out


def _history_wanted(groups: list[ComparedGroup], asked: SeriesHistory,
                    measured: list[AnalysedRun]) -> list[AnalysedRun]:
    """The runs whose series' history the comparison reads: those a verdict asks the noise
    of, and those whose series may hold a twin or a sweep point of a shown row that seeks
    host evidence (the history is part of that evidence's context,
    kidx.operations.select.host_bound.related_runs)."""
    wanted = {run.name: run for run in asked.asked}
    seeking = [row.run for group in groups if group.compared for row in group.rows if seeks_evidence(row.run)]
    if seeking:
        keys = {(roles, tuple(run.reference(role).digest for role in roles)) for run in seeking
                for roles in (TWINS, SWEEP)}
        for run in measured:
            if run.name not in wanted and any(_may_share(run, roles, key) for roles, key in keys):
                wanted[run.name] = run
    return list(wanted.values())


def _may_share(run: AnalysedRun, roles: tuple[str, ...], key: tuple) -> bool:
    """Whether the history of ``run``'s series may hold runs with ``key`` in ``roles``: a
    reference the run lacks is matched on any (kidx.operations.select.analysed_runs.condition_sets)."""
    return all(run.reference(role).digest in (None, digest) for role, digest in zip(roles, key, strict=True))


def _history(store, registry, request: CompareRequest, selected: list[AnalysedRun],
             wanted: list[AnalysedRun] | None = None) -> list[AnalysedRun]:
    """The selected runs and the history a verdict's noise is measured on: of each
    ``wanted`` run's series (its protocol, workload, environment and implementation;
    default: every measured selected run's), the HISTORY_WINDOW runs applied most
    recently, in one look-up per series, never one per run nor a series' every run
    (kidx.analysis.window)."""
    if not _narrowed(request):
        return selected  # the selection is the whole store
    measured = [run for run in (selected if wanted is None else wanted) if run.measure is not None]
    found: dict[str, AnalysedRun] = {run.name: run for run in selected}
    # a run without its workload or environment has no history; one without its
    # implementation or protocol is matched on the references it has
    conditions = condition_sets(registry, measured, ROLES, ("workload", "environment"))
    for run in recent_runs(store, registry, conditions, HISTORY_WINDOW, found, request.metric):
        found.setdefault(run.name, run)
    return list(found.values())


def shown_by(row: ComparedRow, verdicts: frozenset) -> bool:
    """Whether ``--only`` keeps a judged row: its verdict is one of ``verdicts``, or it is
    unconfirmed and what its evidence shows is (``--only slower`` keeps ``unconfirmed
    (slower)``: what regressed, confirmed or not; ``--only unconfirmed`` every unconfirmed row)."""
    if row.verdict in verdicts:
        return True
    return row.verdict == UNCONFIRMED and row.judgement is not None and row.judgement.within in verdicts


def _only(group: ComparedGroup, verdicts: frozenset) -> ComparedGroup:
    """The baseline row, the rows ``--only`` keeps (``shown_by``) and, with ``--baseline
    previous``, the row each kept one was set against (marked ``context``, not counted)."""
    kept = [row.verdict == BASELINE or shown_by(row, verdicts) for row in group.rows]
    against = {id(row.against) for row, keep in zip(group.rows, kept, strict=True) if keep and row.against is not None}
    return group._replace(rows=[row if keep else row._replace(context=True)
                                for row, keep in zip(group.rows, kept, strict=True)
                                if keep or id(row.arm) in against])


def _incomparable(runs: list[AnalysedRun], force: bool) -> str | None:
    """What differs among named runs; an error unless --force."""
    first = runs[0]
    for other in runs[1:]:
        differing = differing_roles(first, other)
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
            role for role in COMPARABLE_ROLES if len({r.reference(role).digest for r in runs}) > 1
        )
    return None


def _label_of(run: AnalysedRun, request: CompareRequest) -> str | None:
    return run.labels.get(request.label_key) if request.label_key is not None else None


def _arms(members: list[AnalysedRun], request: CompareRequest, forced: str | None) -> list[Arm]:
    keyed: dict[object, list[AnalysedRun]] = {}
    for run in sorted(members, key=lambda run: (run.observed, run.name)):
        if forced is not None:
            key: object = run.name
        elif request.label_key is not None:
            key = _label_of(run, request)
        else:
            key = run.implementation.digest or run.name
        keyed.setdefault(key, []).append(run)
    return [Arm(_label_of(runs[0], request), runs, pooled(runs)) for runs in keyed.values()]


def pooled(runs: list[AnalysedRun]) -> Measure:
    """One figure for an arm: a single run's own; for several, the median of their
    statistics, their samples combined (and the samples' p20-p80), else no band."""
    if len(runs) == 1:
        return runs[0].known_measure
    measures = [run.known_measure for run in runs]
    value = statistics.median(m.value for m in measures)
    samples = None
    low = high = None
    if all(m.samples for m in measures):
        samples = tuple(s for m in measures for s in m.samples or ())
        ordered = sorted(samples)
        low, high = _quantile(ordered, 0.2), _quantile(ordered, 0.8)
    return measures[0]._replace(value=value, low=low, high=high, samples=samples)


def _quantile(ordered: list[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _version_like(values) -> bool:
    return all(isinstance(v, str) and VERSION.fullmatch(v) for v in values)


def _baseline_arm(arms: list[Arm], request: CompareRequest) -> Arm | None:
    if request.baseline is None:
        if request.label_key is not None and _version_like([arm.label for arm in arms]):
            return min(arms, key=lambda arm: version_key(arm.label or ""))
        return min(arms, key=lambda arm: (arm.runs[0].observed, arm.runs[0].name))
    if request.label_key is not None:
        return next((arm for arm in arms if arm.label == request.baseline), None)
    matching = [arm for arm in arms if request.baseline in arm.run.implementation_names()]
    implementations = {arm.run.implementation.label for arm in matching}
    if len(implementations) > 1:
        raise KidxError(f"--baseline {request.baseline} is ambiguous: it matches implementations "
                        f"{', '.join(sorted(implementations))} in one group; name one of them")
    return max(matching, key=lambda arm: (arm.run.observed, arm.run.name)) if matching else None


def _group(members: list[AnalysedRun], request: CompareRequest, forced: str | None,
           history: SeriesHistory) -> ComparedGroup:
    first = members[0]
    implementation = first.implementation if request.label_key is not None and forced is None else None

    def group(rows: list[ComparedRow], note: str | None = None) -> ComparedGroup:
        return ComparedGroup(first.protocol, first.workload, first.environment, implementation, rows, note, forced)

    arms = _arms(members, request, forced)
    ordered = _ordered(arms, request)
    if len(arms) == 1:
        what = ("a single run" if len(members) == 1
                else f"a single arm ({len(members)} runs of one {_arm_word(request)})")
        return group([ComparedRow(arms[0], None, None)], f"{what}: nothing to compare with")
    if request.label_key is not None and request.baseline == PREVIOUS:
        return group(_against_previous(arms, request, history, first))
    baseline = _baseline_arm(arms, request)
    if baseline is None:
        return group([ComparedRow(arm, None, None) for arm in ordered], f"no run of baseline {request.baseline}")
    rows = [ComparedRow(baseline, None, BASELINE)]
    rows += [_judged(arm, baseline, request, history, first) for arm in ordered if arm is not baseline]
    return group(rows)


def _against_previous(arms: list[Arm], request: CompareRequest, history: SeriesHistory,
                      first: AnalysedRun) -> list[ComparedRow]:
    """``--baseline previous``: the arms in version order (else by their first run), the
    first the baseline, each other one judged against the one before it."""
    labels = [arm.label for arm in arms]
    if _version_like(labels):
        ordered = sorted(arms, key=lambda arm: (version_key(arm.label or ""), arm.label or ""))
    else:
        ordered = sorted(arms, key=lambda arm: (arm.runs[0].observed, arm.label or "", arm.runs[0].name))
    rows = [ComparedRow(ordered[0], None, BASELINE)]
    rows += [_judged(arm, before, request, history, first) for before, arm in itertools.pairwise(ordered)]
    return rows


def _judged(arm: Arm, baseline: Arm, request: CompareRequest, history: SeriesHistory,
            first: AnalysedRun) -> ComparedRow:
    compared = {run.name for run in arm.runs + baseline.runs}
    noise = history.noise(arm.run, compared)
    if arm.run.implementation.digest != baseline.run.implementation.digest:
        noise = noise + history.noise(baseline.run, compared)
    kernel_timer = is_kernel_timer(timer_of(first.protocol.spec))
    min_t = request.min_t if request.min_t is not None else least_t(kernel_timer)
    judgement = judge_runs(arm.measure, baseline.measure, arm.values, baseline.values, noise,
                           request.threshold, request.alpha, min_t, request.confirm_runs,
                           floor=least_change(kernel_timer),
                           floors=_floors(arm, baseline, history, compared) if kernel_timer else None,
                           floor_share=request.floor_share)
    if (not judgement.conclusive and judgement.detectable is not None and arm.measure.metric == "latency"
            and not kernel_timer):
        judgement = judgement._replace(reason=f"{judgement.reason}, or a kernel timer")
    return ComparedRow(arm, judgement, judgement.verdict, against=baseline)


def _floors(arm: Arm, baseline: Arm, history: SeriesHistory, compared: set[str]) -> Floors | None:
    """The arms' floors and their series' spread of floors, where every run has one."""
    value_runs = floors_of([run.known_measure for run in arm.runs])
    baseline_runs = floors_of([run.known_measure for run in baseline.runs])
    if value_runs is None or baseline_runs is None:
        return None
    noise = history.floor_noise(arm.run, compared)
    if arm.run.implementation.digest != baseline.run.implementation.digest:
        noise = noise + history.floor_noise(baseline.run, compared)
    return Floors(value_runs, baseline_runs, noise)


def _arm_word(request: CompareRequest) -> str:
    return f"{request.label_key} value" if request.label_key is not None else "implementation"


def _ordered(arms: list[Arm], request: CompareRequest) -> list[Arm]:
    if request.label_key is not None:
        return sorted(arms, key=lambda arm: (arm.runs[0].observed, arm.label or "", arm.runs[0].name))
    return sorted(arms, key=lambda arm: (arm.run.implementation.label, arm.runs[0].observed, arm.runs[0].name))


def _group_order(group: ComparedGroup):
    return (group.note is not None, group.protocol.label, group.workload.label, group.environment.label,
            group.implementation.label if group.implementation else "")


def _problems(request: CompareRequest, runs: list[AnalysedRun], measured: list[AnalysedRun],
              groups: list[ComparedGroup], store, registry) -> list[str]:
    if not runs:
        return [nothing_selected(store.catalog(), registry.resolve(RUN_KIND).kind, request.selector)]
    problems = []
    key = request.label_key
    if not measured and (key is None or any(key in run.labels for run in runs)):
        return [f"no selected run has a figure to compare ({len(runs)} selected: not passed, or no figure)"]
    if key is not None and not measured:
        keys = {k for run in runs for k in run.labels}
        hint = f"; labels the selected runs carry: {_listed(nearest(key, keys), len(keys))}" if keys else ""
        return [f"no selected run has the label {key} (--by label={key}){hint}"]
    if request.baseline == PREVIOUS and key is None:
        return [f"--baseline {PREVIOUS} sets each value of a label against the one before it: it needs "
                "--by label=KEY"]
    if request.baseline is not None and not (key is not None and request.baseline == PREVIOUS):
        if key is not None:
            present = {run.labels[key] for run in measured}
            if request.baseline not in present:
                unmeasured = [run for run in runs if run.measure is None and run.labels.get(key) == request.baseline]
                problems.append(_without_figure(unmeasured, f"{key}={request.baseline}") if unmeasured else
                                f"no selected run has {key}={request.baseline} (--baseline); {key} values present: "
                                f"{_listed(nearest(request.baseline, present), len(present))}")
        elif not any(request.baseline in run.implementation_names() for run in measured):
            present = {run.implementation.label for run in measured}
            unmeasured = [run for run in runs if run.measure is None and request.baseline in run.implementation_names()]
            problems.append(_without_figure(unmeasured, f"implementation {request.baseline}") if unmeasured else
                            f"no selected run's implementation is {request.baseline} (--baseline: a name, library, "
                            f"backend, or provider or backend label); implementations present: "
                            f"{_listed(nearest(request.baseline, present), len(present))}")
    if measured and not problems and not any(group.compared for group in groups):
        problems.append(f"{NOTHING_COMPARED}: each comparable group of the {len(measured)} selected runs holds "
                        f"a single arm (one {_arm_word(request)})")
    return problems


def _without_figure(runs: list[AnalysedRun], baseline: str) -> str:
    """The baseline's runs are selected but none has a figure to compare: why, for each reason."""
    from kidx.analysis.measures import missing_figure

    reasons: dict[str, list[str]] = {}
    for run in runs:
        reasons.setdefault(missing_figure(run.manifest.get("spec"), run.protocol.spec), []).append(run.name)
    whose = "their" if len(runs) != 1 else "its"
    said = "; ".join(f"{whose} {reason}: {_listed(names[:5], len(names))}" for reason, names in reasons.items())
    return (f"the {len(runs)} selected run{'s' if len(runs) != 1 else ''} with {baseline} (--baseline) "
            f"{'have' if len(runs) != 1 else 'has'} no figure to compare with: {said}")


def _unmatched(request: CompareRequest, measured: list[AnalysedRun], groups: list[ComparedGroup]) -> list[str]:
    """For each label value compared with nothing, why: from the nearest runs."""
    key = request.label_key
    assert key is not None
    by_value: dict[str, list[AnalysedRun]] = {}
    for run in measured:
        by_value.setdefault(run.labels[key], []).append(run)
    previous = request.baseline == PREVIOUS
    if len(by_value) < 2 or (request.baseline not in (None, PREVIOUS) and request.baseline not in by_value):
        return []
    if _version_like(by_value):
        values = sorted(by_value, key=lambda v: (version_key(v), v))
    elif previous:  # the order --baseline previous sets them in (_against_previous): by their first run
        values = sorted(by_value, key=lambda v: (min((run.observed, run.name) for run in by_value[v]), v))
    else:
        values = sorted(by_value)
    notes = []
    for index, value in enumerate(values):
        # --baseline previous: each value is set against the one before it, and named with it
        reference = (values[index - 1] if index else None) if previous else (
            request.baseline if request.baseline is not None else values[0])
        if reference is None or value == reference or _share(groups, value, reference):
            continue
        if previous and any(_share(groups, value, other) for other in values if other != value):
            continue
        notes.append(_why_apart(value, by_value[value], reference, by_value[reference]))
    return notes


def _share(groups: list[ComparedGroup], value: str, reference: str) -> bool:
    return any(group.compared and {value, reference} <= {row.label for row in group.rows} for group in groups)


def _why_apart(value: str, runs: list[AnalysedRun], reference: str, reference_runs: list[AnalysedRun]) -> str:
    operations = sorted({operation_of(run) for run in runs})
    reference_operations = {operation_of(run) for run in reference_runs}
    if not reference_operations & set(operations):
        return (f"{value} has runs only for {_listed(operations[:SUGGESTIONS], len(operations))}; none shares a "
                f"workload and environment with a {reference} run")
    best = None
    for run in runs:
        for other in reference_runs:
            differing = differing_roles(run, other, ROLES)
            if best is None or len(differing) < len(best[2]):
                best = (run, other, differing)
            if len(differing) <= 1:
                break
        if best is not None and len(best[2]) <= 1:
            break
    assert best is not None
    run, other, differing = best
    if differing == [SUBJECT_ROLE] or not differing:
        return f"{value} and {reference} share no comparable group with one implementation on both sides"
    what = "; ".join(f"{role} {run.reference(role).label} vs {other.reference(role).label}" for role in differing)
    return (f"{value} shares no comparable group with {reference}: the nearest runs, {run.name} and {other.name}, "
            f"differ in {what}")

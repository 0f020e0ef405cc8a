"""``compare --aggregate KEY``: the compared rows taken together, per value of KEY.

KEY is ``operation`` (the workload's ``spec.operation``: Liger's kernel), ``implementation``
or ``label=K`` (the value of the run's label K). Each aggregate row gathers, for one value
of KEY and one implementation (and, with ``--by label=KEY``, one compared label value),
the configurations compared against one baseline and one metric, and takes them together
by ``kidx.analysis.aggregate`` (one configuration one vote; a t interval over their log
ratios). The configurations are the rows with a verdict, every one of them, whatever
``--only`` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from kidx.analysis.aggregate import Aggregate, Configuration, aggregate
from kidx.analysis.significance import ALPHA, BASELINE
from kidx.errors import UsageError
from kidx.query.versions import version_key
from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kidx.operations.select.analysed_runs import AnalysedRun, Referenced

# compare's groups and rows (kidx.operations.analyse.compare.ComparedGroup, ComparedRow): compare
# imports this module, so they are not named here
ComparedGroup: TypeAlias = Any
ComparedRow: TypeAlias = Any

OPERATION, IMPLEMENTATION, LABEL = "operation", "implementation", "label"
# what --aggregate takes, as its help, its refusal and completion say it
AGGREGATE_KEYS = (OPERATION, IMPLEMENTATION, f"{LABEL}=KEY")
# an aggregate record's fields after its key's (kidx.output.comparison writes them in this
# order; a label key of the same name would hide one, so --aggregate refuses it)
AGGREGATE_FIELDS = ("implementation", "label", "baseline", "metric", "configurations", "geomeanRatio", "ciLow",
                    "ciHigh", "worst")


class AggregateKey(NamedTuple):
    kind: str  # operation, implementation or label
    label: str | None = None  # label=K: K

    @property
    def field(self) -> str:
        """The key's name in a record and the table's header: operation, implementation, K."""
        return self.label if self.label is not None else self.kind

    @property
    def text(self) -> str:
        """As typed: ``operation``, ``label=K``."""
        return f"{LABEL}={self.label}" if self.label is not None else self.kind

    def value_of(self, row: ComparedRow) -> str | None:
        run = row.run
        if self.label is not None:
            return run.labels.get(self.label)
        if self.kind == OPERATION:
            return operation_of(run)
        return run.implementation.label


def parse_aggregate(value: str) -> AggregateKey:
    """``--aggregate``: ``operation``, ``implementation`` or ``label=K``."""
    from kidx.analysis.significance import VERDICTS

    name, equals, key = value.partition("=")
    if not equals and name in (OPERATION, IMPLEMENTATION):
        return AggregateKey(name)
    if name == LABEL and equals and key:
        if key in AGGREGATE_FIELDS or key in VERDICTS:
            raise UsageError(f'invalid --aggregate value "{value}": "{key}" is a field of the aggregate records; '
                             "aggregate by a label of another name")
        return AggregateKey(LABEL, key)
    listed = ", ".join(f'"{k}"' for k in AGGREGATE_KEYS[:-1])
    raise UsageError(f'invalid --aggregate value "{value}": use {listed} or "{AGGREGATE_KEYS[-1]}"')


def operation_of(run: AnalysedRun) -> str:
    """The run's operation: its workload's ``spec.operation``, else the workload's name."""
    operation = (run.workload.spec or {}).get("operation")
    return operation if isinstance(operation, str) else run.workload.label


class Compared(NamedTuple):
    """A configuration's identity: the row and its group (the worst row names them)."""

    group: ComparedGroup
    row: ComparedRow


class AggregateRow(NamedTuple):
    value: str | None  # the key's value (None: a run without the label)
    implementation: Referenced
    label: str | None  # with --by label=KEY: the compared value
    baseline: str  # the baseline's implementation (or, with --by label=KEY, its value)
    metric: str
    result: Aggregate  # its worst's identity is a Compared


def configuration(group: ComparedGroup, row: ComparedRow) -> Configuration:
    judgement = row.judgement
    assert judgement is not None and row.verdict is not None
    return Configuration(judgement.ratio, judgement.speedup, row.verdict, judgement.ci, Compared(group, row))


def compared_pairs(groups: Sequence[ComparedGroup], previous: bool) -> list[tuple[ComparedGroup, ComparedRow,
                                                                                  ComparedRow]]:
    """Every row with a verdict, with its group and its baseline row (``previous``: the row
    above it, as ``--baseline previous`` judges; else the group's first row)."""
    pairs = []
    for group in groups:
        if not group.compared:
            continue
        for index, row in enumerate(group.rows):
            if row.verdict in (None, BASELINE) or row.judgement is None:
                continue
            pairs.append((group, row, group.rows[index - 1] if previous else group.rows[0]))
    return pairs


def aggregate_rows(groups: Sequence[ComparedGroup], key: AggregateKey, by_label: bool, previous: bool,
                   alpha: float = ALPHA) -> list[AggregateRow]:
    """The aggregates of ``groups``' compared rows by ``key``."""
    buckets: dict[tuple, list[Configuration]] = {}
    identities: dict[tuple, tuple] = {}
    for group, row, base in compared_pairs(groups, previous):
        implementation = row.run.implementation
        label = row.label if by_label else None
        baseline = (base.label or "") if by_label else base.run.implementation.label
        identity = (key.value_of(row), implementation.digest, label, baseline, row.measure.metric)
        buckets.setdefault(identity, []).append(configuration(group, row))
        identities.setdefault(identity, (key.value_of(row), implementation, label, baseline, row.measure.metric))
    rows = []
    for identity, members in buckets.items():
        value, implementation, label, baseline, metric = identities[identity]
        rows.append(AggregateRow(value, implementation, label, baseline, metric, aggregate(members, alpha)))
    rows.sort(key=lambda r: (r.value is None, version_key(r.value or ""), r.value or "", r.implementation.label,
                             version_key(r.label or ""), r.label or "", version_key(r.baseline), r.baseline, r.metric))
    return rows


def overall(groups: Sequence[ComparedGroup], previous: bool, alpha: float = ALPHA) -> tuple[tuple[str, Aggregate], ...]:
    """Every compared row taken together, the suite's change: one aggregate per metric (a
    geometric mean of latency and memory ratios would mean neither), by metric."""
    by_metric: dict[str, list[Configuration]] = {}
    for group, row, _ in compared_pairs(groups, previous):
        by_metric.setdefault(row.measure.metric, []).append(configuration(group, row))
    return tuple((metric, aggregate(by_metric[metric], alpha)) for metric in sorted(by_metric))

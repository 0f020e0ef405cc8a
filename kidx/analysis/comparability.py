"""What makes two runs comparable, and which way is better: defined once, for compare,
series and plot.

Two runs are comparable when they share the objects of ``COMPARABLE_ROLES`` (protocol,
workload and environment digests: the seed protocol's "comparable only within one kernel,
workload, timed pass, and GPU"). What is compared within such a group is the
``SUBJECT_ROLE`` (the implementation). A series follows one subject over time on one kind
of machine: the comparable roles with the environment narrowed to its hardware, so that a
software upgrade (torch, driver) stays in the series and is named as a change point's
cause instead of starting a new series.

Whether less is better comes from what was measured (the metric, else its unit); a metric
neither table knows has no direction, and the verdicts say so instead of guessing.
"""

from __future__ import annotations

import json

from kidx.records import TYPE_CHECKING
from kidx.units import HIGHER as HIGHER
from kidx.units import LOWER as LOWER
from kidx.units import METRICS
from kidx.units import direction_of as direction_of

COMPARABLE_ROLES = ("protocol", "workload", "environment")
SUBJECT_ROLE = "implementation"
ROLES = (*COMPARABLE_ROLES, SUBJECT_ROLE)  # every reference an analysis reads

# which way is better, defined once beside the units (kidx/units.py)
DIRECTION_BY_METRIC = {metric: direction for metric, (_, direction) in METRICS.items()}


if TYPE_CHECKING:  # typing only for the checker: a get or describe imports none of it
    from typing import Any, Protocol

    class Referencing(Protocol):
        def reference(self, role: str) -> Any: ...


def comparable_key(run: Referencing) -> tuple:
    """Runs with equal keys may be set side by side."""
    return tuple(run.reference(role).digest for role in COMPARABLE_ROLES)


def series_key(run: Referencing) -> tuple:
    """Runs with equal keys are points of one series: protocol, workload, the
    environment's hardware (its spec.hardware, else its digest) and the implementation."""
    environment = run.reference("environment")
    hardware = (environment.spec or {}).get("hardware") if environment.spec else None
    machine = json.dumps(hardware, sort_keys=True) if hardware else environment.digest
    return (run.reference("protocol").digest, run.reference("workload").digest, machine,
            run.reference(SUBJECT_ROLE).digest)


def differing_roles(first: Referencing, other: Referencing, roles=COMPARABLE_ROLES) -> list[str]:
    return [role for role in roles if first.reference(role).digest != other.reference(role).digest]

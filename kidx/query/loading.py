"""What ``get`` loads for each object it prints: one mode, decided once per command.

Reading an object file costs far more than reading its catalog row, so a command loads
no more than what it prints and sorts by needs (``OutputFormat.load_plan`` decides it
from the output format and the sort keys)."""

from __future__ import annotations

from enum import Enum

from kidx.records import NamedTuple


class LoadMode(Enum):
    NAMES = "names"  # name and labels from the catalog: names printed, nothing sorted
    TABLE = "table"  # the CRD's printer columns only: as COLUMNS, without annotations
    COLUMNS = "columns"  # the catalog's cached column values (reference digests among them)
    MANIFESTS = "manifests"  # each object read in full


class LoadPlan(NamedTuple):
    mode: LoadMode
    # referenced objects attached to each manifest under the reference field's name
    # without "Digest" (``workload``), for columns and sort keys such as workload.spec.parameters.seq
    reference_roles: frozenset[str] = frozenset()


__all__ = ["LoadMode", "LoadPlan"]

"""Convert Liger-Kernel benchmark CSVs into kidx manifests (a pure converter).

Input: ``benchmark/data/all_benchmark_data*.csv`` from linkedin/Liger-Kernel (15 fixed
columns, see ``docs/liger-data.md``). Output: one BenchmarkRun per
data row plus the BenchmarkProtocol, ExecutionEnvironment, Implementation and Workload
objects the runs refer to, each shared object exactly once. Nothing here touches a
store or prints; input that cannot be imported faithfully raises InvalidInputError with
one Problem per bad row (file, line, column).

Identity of a row: its externalId, ``{kernel}/{mode}[/memory]/{provider}/{slug(gpu)}/
{workloadKey}/{timestamp}``. Speed rows keep the seed's form exactly; memory rows get
a ``/memory`` segment, because a speed row and a memory row of one configuration are
often stamped in the same second (docs/liger-data.md §2.2 finds no collision over the
three files or the 40 historical versions). Two rows with one externalId are one
observation: identical rows give one run (the later one is skipped as a duplicate),
rows that differ are an error.

Run names. Liger's own rule, ``slug("liger/" + externalId)[:100]``, collides (the cut
reaches into the workload; 2,122 distinct names for 3,897 rows), so it cannot be the
rule. The rule used here depends only on the row itself, never on the rest of the batch:

* ``slug("liger/" + externalId)`` cut to 89 characters, trailing ``-`` removed, then
  ``-`` + the first 10 hex digits of sha256(externalId). At most 100 characters, always
  valid, readable prefix, and distinct whenever externalIds are distinct (the hash
  decides; the prefix only helps people).
* One exception, ``LEGACY_RUN_NAMES``: the seed run was published under Liger's
  truncated name before this importer existed; its row keeps that name so that
  importing the CSV updates the seed object instead of adding a twin. A legacy name
  ends in ``-`` (the cut fell on a separator) while every generated name ends in a hex
  digit, so the two can never collide.

Shared objects are named from what they are (kidx.formats.liger_objects). Should two
different specs of one kind get the same base name in an import (a key differing only
in punctuation or case), each of them gets ``-`` + 10 hex digits of its digest instead,
so names stay unique and deterministic.

Workloads: parameters are the swept x value plus the extra config, typed as JSON gives
them (an x value is an int, else a float, else a string), under canonical names (the x
axis claims its name first; a key whose name is taken, such as a stale ``seq_len``
ceiling, keeps its raw name); config keys are taken in sorted order so key-order
variants of one config give one workload; nulls (swept placeholders) are dropped;
dtype moves to ``spec.dtype`` in short form and is omitted when the row has none.
Implementations: one per (kernel, normalised provider), see ``normalise_provider``.
Reading a row's fields (numbers, times, parameters) is kidx.formats.liger_fields's.

Numbers: latency ns = round-half-up(Decimal(ms text) x 10^6); bytes = Decimal(MB text)
x 1,048,576 (Liger's "MB" is MiB) and must be an exact integer; ``sourceNative.metrics``
keeps float(text). A ``nan`` or empty y value makes a failed run with a null value,
never an invented number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

from kidx.formats.csv_files import CsvConverter, CsvRecord
from kidx.formats.framework import (
    ANNOTATION_FILE,
    ANNOTATION_LINE,
    Conversion,
    FormatDoc,
    RecordProblems,
    SkippedRecord,
    gpu_mismatches,
    hashed_name,
    run_manifest,
    slug,
    valid_labels,
)
from kidx.formats.liger_fields import Bad, Shape, YValue, observed_at, shape, y_value
from kidx.formats.liger_objects import (
    FAMILY,
    GPUS,
    KERNEL_TITLES,
    environment_manifest,
    gpu_label,
    implementation_manifest,
    kernel_title,
    normalise_provider,
    protocol_manifest,
    workload_manifest,
)
from kidx.kinds.metadata import label_value_error
from kidx.manifests.document import Document

__all__ = [
    "FAMILY", "GPUS", "HEADER", "KERNEL_TITLES", "LEGACY_RUN_NAMES", "SOURCE_NAME", "LigerImport", "LigerRow",
    "SkippedRow", "check_environment", "convert_files", "convert_text", "gpu_label", "normalise_provider", "run_name",
]

SOURCE_NAME = "liger-kernel-bench"
ANNOTATION_ROW = "liger.kernelindex.dev/row"

FORMAT_DOC = FormatDoc(
    reads="Liger-Kernel's benchmark CSVs (below)",
    one_run_per="CSV row",
    fields=(
        ("CSV column(s)", "run field"),
        ("`y_value_50`",
         (
             "speed rows: `spec.timing.latencyNs.median`, in ns = ms × 10⁶ rounded half up from the decimal text; "
             "memory rows: `spec.memory.peakAllocatedBytes.median` (below)"
         )),
        ("`y_value_20`, `y_value_80`",
         "`spec.measurements`: `p20` and `p80`, unit `ns` (metric `latency`) or `bytes` (metric `peak_memory`)"),
        ("the three `y_value_*` as written",
         "`spec.sourceNative.metrics`: `ms_20`/`ms_50`/`ms_80` (speed) or `MB_20`/`MB_50`/`MB_80` (memory), as floats"),
        ("`timestamp` (naive)", "`spec.observedAt`, stored as UTC: `2025-08-07 21:42:15` → `2025-08-07T21:42:15.000Z`"),
        ("`liger_version`, `kernel_name`, `kernel_operation_mode`, `kernel_provider`, `metric_name`, `gpu_name`",
         (
             "labels `liger_version`, `kernel`, `operation` (`unspecified` when empty), `provider`, `metric` (`speed` "
             "or `memory`) and `gpu` (the slug of the GPU's name, `nvidia-h100-80gb-hbm3`), to select by (`kidx get "
             "runs -l provider=liger,gpu=nvidia-h200`). Labels are metadata: they do not change a digest. A value that "
             "is no valid label value (`liger (fused)`) is left out of the labels; it stays in the run's `externalId`"
         )),
        ("the row itself",
         (
             "annotations `kernelindex.dev/source-file` (base name), `kernelindex.dev/source-line`, "
             "`liger.kernelindex.dev/row` (the raw CSV record)"
         )),
        ("—",
         (
             "`spec.status`: `passed`, or `failed` (see [failed rows](#failed-rows-and-skipped-rows)); "
             "`spec.sourceNative.source: liger-kernel-bench`, `benchmark` (`kernel/mode[/memory]`) and `externalId`"
         )),
    ),
)

# Names published before this importer existed (see the module docstring).
LEGACY_RUN_NAMES = {
    "llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15":
        "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-",
}

# The framework's result types, under the names this module's callers use.
SkippedRow = SkippedRecord
LigerImport = Conversion
# runs must have run on the GPU an attached environment describes
check_environment = gpu_mismatches


@dataclass
class LigerRow:
    """One data row of a Liger benchmark CSV, by column: the fields are the header's."""

    kernel_name: str
    kernel_provider: str
    kernel_operation_mode: str
    metric_name: str
    metric_unit: str
    x_name: str
    x_label: str
    x_value: str
    y_value_50: str
    y_value_20: str
    y_value_80: str
    extra_benchmark_config_str: str
    gpu_name: str
    timestamp: str
    liger_version: str


HEADER = tuple(field.name for field in fields(LigerRow))
Y_COLUMNS = ("y_value_20", "y_value_50", "y_value_80")  # in the order their problems are reported
UNITS = {"speed": "ms", "memory": "MB"}


@dataclass
class Reading:
    """A row checked and typed: what its run is made of."""

    row: LigerRow
    mode: str  # kernel_operation_mode, "unspecified" where empty
    ys: dict[str, YValue | None]  # by column; None for a missing value
    shape: Shape
    observed_at: str
    benchmark: str  # {kernel}/{mode}[/memory]
    external_id: str
    gpu_label: str

    @property
    def memory(self) -> bool:
        return self.row.metric_name == "memory"


def convert_files(paths: list[str]) -> LigerImport:
    """Convert Liger CSV files (raw bytes, UTF-8, optional BOM) into manifests."""
    return _Converter().convert(paths)


def convert_text(text: str, source: str) -> LigerImport:
    """Convert the text of one Liger CSV file; ``source`` names it in results and errors."""
    converter = _Converter()
    converter.add_text(text, source)
    return converter.finish()


def run_name(external_id: str) -> str:
    """The run's metadata.name: a function of its externalId alone."""
    legacy = LEGACY_RUN_NAMES.get(external_id)
    if legacy is not None:
        return legacy
    return hashed_name(slug("liger/" + external_id), external_id, 100)


class _Converter(CsvConverter):
    """Accumulates runs and shared objects over one or more CSV texts."""

    what, header, fallback_name = "Liger benchmark CSV", HEADER, "liger"

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, tuple[str, int, LigerRow]] = {}  # externalId -> (source, line, row)
        # per distinct input, as rows repeat them: (x_name, x_label, x_value, extra) -> its workload;
        # gpu_name -> (its slug, its gpu label); timestamp -> (observedAt or None, its externalId form)
        self._shapes: dict[tuple[str, str, str, str], Shape] = {}
        self._gpus: dict[str, tuple[str, str]] = {}
        self._times: dict[str, tuple[str | None, str]] = {}

    def add_row(self, record: CsvRecord) -> None:
        row = LigerRow(*record.fields)
        reading = self._read(row)
        if self._first_sighting(reading, record):
            references = self._references(reading, record)
            body = run_manifest(_metadata(reading, record), _spec(reading, references))
            self.runs.append(Document(body, record.source, record.number, record.line))

    def _read(self, row: LigerRow) -> Reading:
        """The row checked and typed, or RecordProblems with all that is wrong with it."""
        bad: Bad = []
        kernel = _required(row, "kernel_name", bad)
        provider = _required(row, "kernel_provider", bad)
        mode = row.kernel_operation_mode or "unspecified"
        metric, unit = row.metric_name, row.metric_unit
        if metric in UNITS:
            if unit != UNITS[metric]:
                bad.append(("metric_unit", f"{metric} rows are in {UNITS[metric]}, found {unit!r}"))
        else:
            bad.append(("metric_name", f"unknown metric {metric!r} (expected speed or memory)"))
        x_name = _required(row, "x_name", bad)
        x_text = _required(row, "x_value", bad)
        gpu = _required(row, "gpu_name", bad)
        ys = {column: y_value(getattr(row, column), column, metric, bad) for column in Y_COLUMNS}
        workload = self._shape(x_name, row.x_label, x_text, row.extra_benchmark_config_str, bad)
        observed, stamp = self._time(row.timestamp)
        if observed is None:
            bad.append(("timestamp", f"{row.timestamp!r} is not a time in %Y-%m-%d %H:%M:%S form"))
        if label_value_error(row.liger_version) is not None:
            bad.append(("liger_version", f"{row.liger_version!r} is not a valid label value"))
        if bad:
            raise RecordProblems(bad)
        assert workload is not None and observed is not None  # else a problem was added
        gpu_slug, label = self._gpu(gpu)
        benchmark = f"{kernel}/{mode}" + ("/memory" if metric == "memory" else "")
        external_id = "/".join([benchmark, provider, gpu_slug, workload.key, stamp])
        return Reading(row, mode, ys, workload, observed, benchmark, external_id, label)

    def _shape(self, x_name: str, x_label: str, x_text: str, extra: str, bad: Bad) -> Shape | None:
        inputs = (x_name, x_label, x_text, extra)
        known = self._shapes.get(inputs)
        if known is None:
            known = shape(x_name, x_label, x_text, extra, bad)
            if known is not None:
                self._shapes[inputs] = known
        return known

    def _time(self, timestamp: str) -> tuple[str | None, str]:
        """(observedAt or None, the timestamp as an externalId writes it)."""
        times = self._times.get(timestamp)
        if times is None:
            times = self._times[timestamp] = (observed_at(timestamp), timestamp.replace(" ", "-").replace(":", "-"))
        return times

    def _gpu(self, gpu: str) -> tuple[str, str]:
        """(the GPU name's slug, its gpu label)."""
        names = self._gpus.get(gpu)
        if names is None:
            names = self._gpus[gpu] = (slug(gpu), gpu_label(gpu))
        return names

    def _first_sighting(self, reading: Reading, record: CsvRecord) -> bool:
        """True the first time an externalId is read; an identical row read again is skipped
        as a duplicate, a different one with the same externalId is an error."""
        earlier = self._seen.get(reading.external_id)
        if earlier is None:
            self._seen[reading.external_id] = (record.source, record.line, reading.row)
            return True
        first_source, first_line, first_row = earlier
        where = f"line {first_line}" if first_source == record.source else f"{first_source} line {first_line}"
        if first_row == reading.row:
            self.skipped.append(SkippedRow(record.source, record.line, f"duplicate of {where}"))
            return False
        differing = ", ".join(name for name in HEADER if getattr(first_row, name) != getattr(reading.row, name))
        raise RecordProblems([(None, (
            f"externalId {reading.external_id} was already read from {where} with different values ({differing})"
        ))])

    def _references(self, reading: Reading, record: CsvRecord) -> dict[str, str]:
        """The digests of the run's protocol, workload, environment and implementation."""
        row, mode, workload = reading.row, reading.mode, reading.shape
        metric, gpu, kernel, provider = row.metric_name, row.gpu_name, row.kernel_name, row.kernel_provider
        origin = (record.source, record.number, record.line)
        add = self.shared.add
        protocol = add("BenchmarkProtocol", (metric, mode), origin, lambda: protocol_manifest(metric, mode))
        environment = add("ExecutionEnvironment", (gpu,), origin, lambda: environment_manifest(gpu))
        implementation = add("Implementation", (kernel, provider), origin,
                             lambda: implementation_manifest(kernel, provider))
        workload_digest = add("Workload", (kernel, workload.signature), origin,
                              lambda: workload_manifest(kernel, workload.parameters, workload.dtype, workload.key))
        return {"protocolDigest": protocol, "workloadDigest": workload_digest,
                "environmentDigest": environment, "implementationDigest": implementation}


def _required(row: LigerRow, column: str, bad: Bad) -> str:
    value = getattr(row, column)
    if value == "":
        bad.append((column, "is empty"))
    return value


def _spec(reading: Reading, references: dict[str, str]) -> dict[str, Any]:
    """The run's spec: status, the median as the headline, p20 and p80, a failure where a
    value is missing, what the row said as written, and the references."""
    row, ys = reading.row, reading.ys
    missing = [(column, getattr(row, column)) for column in ("y_value_50", "y_value_20", "y_value_80")
               if ys[column] is None]
    spec: dict[str, Any] = {"status": "failed" if missing else "passed"}
    median = ys["y_value_50"]
    if median is not None:
        if reading.memory:
            spec["memory"] = {"peakAllocatedBytes": {"median": median.stored}, "primaryStatistic": "median"}
        else:
            spec["timing"] = {"latencyNs": {"median": median.stored}, "primaryStatistic": "median"}
    spec["observedAt"] = reading.observed_at
    metric, unit = ("peak_memory", "bytes") if reading.memory else ("latency", "ns")
    spec["measurements"] = [
        {"metric": metric, "statistic": statistic, "unit": unit,
         "value": None if (y := ys[column]) is None else y.stored}
        for statistic, column in (("p20", "y_value_20"), ("p80", "y_value_80"))
    ]
    if missing:
        spec["failure"] = {
            "reason": "MissingMeasurement",
            "message": "; ".join(f"{column} is {'empty' if text == '' else repr(text)}" for column, text in missing),
        }
    spec["sourceNative"] = {
        "source": SOURCE_NAME,
        "metrics": {
            f"{row.metric_unit}_{q}": None if (y := ys[f"y_value_{q}"]) is None else y.native
            for q in ("20", "50", "80")
        },
        "benchmark": reading.benchmark,
        "externalId": reading.external_id,
    }
    spec.update(references)
    return spec


def _metadata(reading: Reading, record: CsvRecord) -> dict[str, Any]:
    """The run's name, title, labels (what people select by; metadata, so the digest is
    the same with or without them) and the annotations saying where it was read."""
    row = reading.row
    title = f"{kernel_title(row.kernel_name)} · {row.kernel_provider} · {reading.mode}"
    if reading.memory:
        title += " · peak memory"
    metadata: dict[str, Any] = {"name": run_name(reading.external_id), "title": title}
    labels = valid_labels({
        "liger_version": row.liger_version, "kernel": row.kernel_name, "operation": reading.mode,
        "provider": row.kernel_provider, "metric": row.metric_name, "gpu": reading.gpu_label,
    })
    if labels:
        metadata["labels"] = labels
    metadata["annotations"] = {
        ANNOTATION_FILE: os.path.basename(record.source),
        ANNOTATION_LINE: str(record.line),
        ANNOTATION_ROW: record.text,
    }
    return metadata

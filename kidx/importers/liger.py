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

Shared objects are named from what they are (``liger-bench-do-bench-backward``,
``liger-bench-nvidia-b200``, ``liger-{kernel}-{key}``, ``liger-{kernel}-{library}-
{backend}[-{variant}]``). Should two different specs of one kind get the same base
name in an import (a key differing only in punctuation or case), each of them gets
``-`` + 10 hex digits of its digest instead, so names stay unique and deterministic.

Workloads: parameters are the swept x value plus the extra config, typed as JSON gives
them (an x value is an int, else a float, else a string), under canonical names (the x
axis claims its name first; a key whose name is taken, such as a stale ``seq_len``
ceiling, keeps its raw name); config keys are taken in sorted order so key-order
variants of one config give one workload; nulls (swept placeholders) are dropped;
dtype moves to ``spec.dtype`` in short form and is omitted when the row has none.
Implementations: one per (kernel, normalised provider), see ``normalise_provider``.

Numbers: latency ns = round-half-up(Decimal(ms text) x 10^6); bytes = Decimal(MB text)
x 1,048,576 (Liger's "MB" is MiB) and must be an exact integer; ``sourceNative.metrics``
keeps float(text). A ``nan`` or empty y value makes a failed run with a null value,
never an invented number.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import json
import math
import os
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from kidx.errors import InvalidInputError, Location, Problem
from kidx.importers.framework import (
    ANNOTATION_FILE,
    ANNOTATION_LINE,
    API_VERSION,
    Conversion,
    SharedObjects,
    SkippedRecord,
    check_values,
    gpu_mismatches,
    hashed_name,
    read_text,
    slug,
    valid_labels,
)
from kidx.importers.gpus import KNOWN_GPUS, canonical_gpu_name, gpu_hardware
from kidx.kinds.metadata import label_value_error
from kidx.manifests.document import Document
from kidx.manifests.values import INT64_MAX, INT64_MIN

FAMILY = "liger_kernel_bench"
SOURCE_NAME = "liger-kernel-bench"
LIGER_REPOSITORY = "https://github.com/linkedin/Liger-Kernel"

HEADER = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
(
    _KERNEL, _PROVIDER, _MODE, _METRIC, _UNIT, _X_NAME, _X_LABEL, _X_VALUE,
    _Y50, _Y20, _Y80, _EXTRA, _GPU, _TIMESTAMP, _VERSION,
) = range(len(HEADER))

ANNOTATION_ROW = "liger.kernelindex.dev/row"

# Names published before this importer existed (see the module docstring).
LEGACY_RUN_NAMES = {
    "llama4_rope/backward/liger/nvidia-h100-80gb-hbm3/hidden8192-kv_heads8-q_heads32-seq16384-bf16/2025-08-07-21-42-15":
        "liger-llama4-rope-backward-liger-nvidia-h100-80gb-hbm3-hidden8192-kv-heads8-q-heads32-seq16384-bf16-",
}

KERNEL_TITLES = {
    "cross_entropy": "Cross-entropy loss",
    "distill_cosine_loss": "Cosine distillation loss",
    "distill_jsd_loss": "JSD distillation loss",
    "dyt": "Dynamic Tanh (DyT)",
    "embedding": "Embedding lookup",
    "fused_add_rms_norm": "Fused residual add + RMSNorm",
    "fused_linear_cpo_loss": "Fused linear + CPO loss",
    "fused_linear_cross_entropy": "Fused linear + cross-entropy",
    "fused_linear_grpo_loss_sequence": "Fused linear + GRPO loss (sequence-level)",
    "fused_linear_grpo_loss_token": "Fused linear + GRPO loss (token-level)",
    "fused_linear_jsd": "Fused linear + JSD",
    "fused_linear_orpo_loss": "Fused linear + ORPO loss",
    "fused_linear_simpo_loss": "Fused linear + SimPO loss",
    "fused_moe": "Fused mixture-of-experts",
    "fused_neighborhood_attention": "Fused neighborhood attention",
    "geglu": "GEGLU MLP",
    "group_norm": "Group normalization",
    "jsd": "Jensen–Shannon divergence",
    "kl_div": "KL divergence",
    "kto_loss": "KTO loss",
    "layer_norm": "Layer normalization",
    "llama4_rope": "Llama 4 rotary position embedding",
    "megatron_cross_entropy": "Megatron vocab-parallel cross-entropy",
    "megatron_rms_norm": "Megatron RMSNorm",
    "megatron_swiglu": "Megatron SwiGLU",
    "multi_token_attention": "Multi-token attention",
    "poly_norm": "PolyNorm",
    "qwen2vl_mrope": "Qwen2-VL multimodal RoPE",
    "relu_squared": "Squared ReLU",
    "rms_norm": "RMS normalization",
    "rope": "Rotary position embedding",
    "softmax": "Softmax",
    "sparse_multi_token_attention": "Sparse multi-token attention",
    "sparsemax": "Sparsemax",
    "swiglu": "SwiGLU MLP",
    "tiled_geglu": "Tiled GEGLU MLP",
    "tiled_swiglu": "Tiled SwiGLU MLP",
    "tvd": "Total variation distance",
}

# gpu_name -> (product, formFactor, architecture) of the GPUs in the published files
# (docs/liger-data.md §3.4), as kidx.importers.gpus describes them. Lookups go through
# that module, which knows these and more, in any spelling.
GPUS: dict[str, tuple[str, str | None, str | None]] = {
    name: KNOWN_GPUS[name]
    for name in (
        "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA A100-SXM4-80GB",
        "NVIDIA A100-SXM4-40GB", "NVIDIA B200", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090",
    )
}

# Parameter-name aliases (docs/liger-data.md §2.2). The x axis claims its name first.
_ALIASES = {
    "T": "seq", "seq_len": "seq",
    "hidden_size": "hidden", "H": "hidden",
    "num_q_heads": "q_heads", "num_attention_heads": "q_heads",
    "num_kv_heads": "kv_heads", "num_key_value_heads": "kv_heads",
    "B": "batch", "bsz": "batch", "batch_size": "batch",
    "V": "vocab", "vocab_size": "vocab",
    "BT": "tokens",
    "intermediate_size": "inter",
    "model_config": "model",
}
_DTYPES = {"bfloat16": "bf16", "float32": "fp32", "float16": "fp16"}

# Provider normalisation (docs/liger-data.md §3.2): provider -> (library, backend, variant).
_PROVIDERS: dict[str, tuple[str, str | None, str | None]] = {
    "torch": ("torch", "eager", None),
    "torch_compile": ("torch", "inductor", None),
    "huggingface": ("transformers", "eager", None),
    "deepspeed_tiled": ("deepspeed", "eager", "tiled"),
}
_LIGER_PROVIDER = re.compile(r"liger(?:[-_](triton|cutile|cutedsl)(?=$|[-_]))?(?:[-_](.+))?")
_MEGATRON_PROVIDER = re.compile(r"megatron(?:[-_](.+))?")
_REPOSITORIES = {
    "liger-kernel": LIGER_REPOSITORY,
    "torch": "https://github.com/pytorch/pytorch",
    "transformers": "https://github.com/huggingface/transformers",
    "deepspeed": "https://github.com/deepspeedai/DeepSpeed",
    "megatron-core": "https://github.com/NVIDIA/Megatron-LM",
}
_LIBRARY_TITLES = {
    "liger-kernel": "Liger",
    "torch": "PyTorch",
    "transformers": "Hugging Face Transformers",
    "deepspeed": "DeepSpeed",
    "megatron-core": "Megatron-Core",
}
_LIBRARY_SHORT = {"liger-kernel": "liger", "megatron-core": "megatron"}
_BACKEND_TITLES = {
    "triton": "Triton", "cutile": "cuTile", "cutedsl": "CuTe DSL",
    "eager": "eager", "inductor": "torch.compile",
}

_DO_BENCH = "via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread)"
_NO_VERSIONS = (
    "The upstream CSV records no CUDA, driver, or torch version; "
    "the Liger release rides each run's labels."
)
_SPEED_PASSES = {
    "forward": ("the forward pass of the module on fixed inputs", "forward pass"),
    "backward": (
        "the backward pass of the module output given a random upstream gradient",
        "backward pass",
    ),
    "full": (
        "a forward pass followed by the backward pass of its output given a random "
        "upstream gradient, timed together as one call",
        "forward and backward pass (full)",
    ),
    "no-grad-forward": (
        "the forward pass under torch.no_grad(), so no autograd graph is recorded",
        "forward pass without autograd (no-grad-forward)",
    ),
}
_MEMORY_PASSES = {
    "forward": ("the forward pass of the module on fixed inputs", "forward pass"),
    "backward": (
        "the backward pass of the module output given a random upstream gradient (the "
        "forward pass runs before measuring starts, so the activations it saved count "
        "toward the peak)",
        "backward pass",
    ),
    "full": (
        "a forward pass followed by the backward pass of its output given a random "
        "upstream gradient",
        "forward and backward pass (full)",
    ),
}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INTEGER = re.compile(r"[+-]?\d+\Z")
_TIME_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\Z")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_END = re.compile(r"(?:\r\n|\r|\n)\Z")
_CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")
_EXACT = decimal.Context(prec=1000, traps=[decimal.Inexact, decimal.InvalidOperation])
_WIDE = decimal.Context(prec=1000)
_MIB = 1 << 20


# The framework's result types, under the names this module has always used.
SkippedRow = SkippedRecord
LigerImport = Conversion


def convert_files(paths: list[str]) -> LigerImport:
    """Convert Liger CSV files (raw bytes, UTF-8, optional BOM) into manifests."""
    converter = _Converter()
    for path in paths:
        text = read_text(path, converter.problems)
        if text is not None:
            converter.add_text(text, path)
    return converter.finish()


def convert_text(text: str, source: str) -> LigerImport:
    """Convert the text of one Liger CSV file; ``source`` names it in results and errors."""
    converter = _Converter()
    converter.add_text(text, source)
    return converter.finish()


# --- names and small helpers -----------------------------------------------------------

def run_name(external_id: str) -> str:
    """The run's metadata.name: a function of its externalId alone."""
    legacy = LEGACY_RUN_NAMES.get(external_id)
    if legacy is not None:
        return legacy
    return hashed_name(slug("liger/" + external_id), external_id, 100)


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _short_dtype(text: str) -> str:
    bare = text[len("torch."):] if text.startswith("torch.") else text
    return _DTYPES.get(bare, re.sub(r"[^a-z0-9_]+", "_", bare.lower()).strip("_"))


def _manifest(kind: str, name: str, title: str, spec: dict) -> dict:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name, "title": title}, "spec": spec}


def _kernel_title(kernel: str) -> str:
    return KERNEL_TITLES.get(kernel, kernel)


def _strip_vendor(gpu: str) -> str:
    for prefix in ("NVIDIA ", "AMD "):
        if gpu.startswith(prefix):
            return gpu[len(prefix):]
    return gpu


# --- shared objects --------------------------------------------------------------------

def _protocol_manifest(metric: str, mode: str) -> tuple[str, dict]:
    if metric == "speed":
        what, pass_title = _SPEED_PASSES.get(mode) or _unknown_pass(mode)
        name = "liger-bench-do-bench-" + slug(mode)
        title = f"Liger benchmark harness · {pass_title}"
        measurement: dict[str, Any] = {"timer": "cuda_events", "primaryStatistic": "median"}
        notes = (
            f"Timed: {what}, {_DO_BENCH}. {_NO_VERSIONS} "
            "Comparable only within one kernel, workload, timed pass, and GPU."
        )
    else:
        what, pass_title = _MEMORY_PASSES.get(mode) or _unknown_pass(mode)
        name = "liger-bench-peak-memory-" + slug(mode)
        title = f"Liger benchmark harness · peak memory · {pass_title}"
        measurement = {"metric": "peak_memory", "primaryStatistic": "median", "repetitions": 10}
        notes = (
            f"Measured: peak allocated device memory while running {what}: "
            "torch.cuda.reset_peak_memory_stats(), the call, then "
            "torch.cuda.max_memory_allocated(), 10 times, with torch.quantile over the 10 "
            "samples at 0.5/0.2/0.8 (median with p20/p80 spread). The peak includes "
            "tensors already allocated when the call starts (inputs, weights). Upstream "
            "records MiB (bytes / 2**20, labelled MB); kidx stores bytes (MiB x 1048576, "
            f"exact). {_NO_VERSIONS} "
            "Comparable only within one kernel, workload, measured pass, and GPU."
        )
    spec = {
        "harness": {"name": "Liger-Kernel benchmark scripts", "repository": LIGER_REPOSITORY},
        "measurement": measurement,
        "comparability": {"notes": notes, "family": FAMILY},
    }
    return name, _manifest("BenchmarkProtocol", name, title, spec)


def _unknown_pass(mode: str) -> tuple[str, str]:
    if mode == "unspecified":
        return (
            "a pass the CSV does not name (empty kernel_operation_mode)",
            "unspecified pass",
        )
    return (
        f'the pass the benchmark script calls "{mode}" (the CSV does not say what it covers)',
        f"{mode} pass",
    )


def _environment_manifest(gpu: str) -> tuple[str, dict]:
    """The GPU-name-only environment of a row.

    A known GPU in any spelling ("NVIDIA A100 SXM4 80GB" for "NVIDIA A100-SXM4-80GB") is
    the table's GPU: one spec, one name. An unknown one keeps its text as the product,
    and its name carries 10 hex digits of that text, because the slug cannot tell
    spellings apart and a name shared by two specs would make each import of one
    spelling reconfigure the other's environment. Either way the name depends on the row
    alone, never on which other files were imported with it."""
    hardware = gpu_hardware(gpu)
    canonical = canonical_gpu_name(gpu)
    if canonical is not None:
        name = "liger-bench-" + slug(canonical)
        shown = canonical
    else:
        name = hashed_name("liger-bench-" + slug(gpu), gpu, 100)
        shown = gpu
    title = f"Liger benchmark host · {_strip_vendor(shown)}"
    return name, _manifest("ExecutionEnvironment", name, title, {"hardware": hardware, "software": {}})


def gpu_label(gpu: str) -> str:
    """The ``gpu`` label of a row: the slug of the GPU's name (its table spelling if known)."""
    return slug(canonical_gpu_name(gpu) or gpu)


def normalise_provider(provider: str) -> tuple[str, str | None, str | None]:
    """A raw kernel_provider as (library, backend, variant)."""
    known = _PROVIDERS.get(provider)
    if known is not None:
        return known
    match = _LIGER_PROVIDER.fullmatch(provider)
    if match:
        return "liger-kernel", match.group(1) or "triton", match.group(2)
    match = _MEGATRON_PROVIDER.fullmatch(provider)
    if match:
        return "megatron-core", None, match.group(1)
    return provider, None, None


def _implementation_manifest(kernel: str, provider: str) -> tuple[str, dict]:
    library, backend, variant = normalise_provider(provider)
    spec: dict[str, Any] = {"library": library, "operation": kernel}
    if backend:
        spec["backend"] = backend
    if variant:
        spec["variant"] = variant
    if library in _REPOSITORIES:
        spec["repository"] = _REPOSITORIES[library]
    parts = [_LIBRARY_SHORT.get(library, library), backend or "", variant or ""]
    name = slug("liger-" + kernel + "-" + "-".join(p for p in parts if p))
    details = [d for d in (_BACKEND_TITLES.get(backend or "", backend), variant) if d]
    what = _LIBRARY_TITLES.get(library, library)
    if details:
        what += f" ({', '.join(details)})"
    title = f"{_kernel_title(kernel)} · {what}"
    return name, _manifest("Implementation", name, title, spec)


def _workload_manifest(kernel: str, parameters: dict, dtype: str | None, key: str) -> tuple[str, dict]:
    spec: dict[str, Any] = {"family": FAMILY, "operation": kernel, "parameters": parameters}
    if dtype is not None:
        spec["dtype"] = dtype
    spec["key"] = key
    name = "liger-" + slug(kernel + "-" + key)
    shown = [f"{name_} {_render(value)}" for name_, value in sorted(parameters.items())]
    if dtype is not None:
        shown.append(dtype)
    title = " · ".join([_kernel_title(kernel), *shown])
    return name, _manifest("Workload", name, title, spec)


# --- the converter ---------------------------------------------------------------------

class _RowProblems(Exception):
    def __init__(self, problems: list[tuple[str | None, str]]):
        self.problems = problems


class _Converter:
    """Accumulates runs and shared objects over one or more CSV texts."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.skipped: list[SkippedRow] = []
        self.rows_read = 0
        self.runs: list[Document] = []
        self.shared = SharedObjects("liger")
        self._seen: dict[str, tuple[str, int, list[str]]] = {}  # externalId -> (source, line, fields)
        self._shapes: dict[tuple, tuple] = {}  # (x_name, x_label, x_value, extra) -> workload facts
        # per distinct text, as rows repeat them: gpu_name -> (its slug, its gpu label);
        # timestamp -> (observedAt or None, its externalId form)
        self._gpus: dict[str, tuple[str, str]] = {}
        self._times: dict[str, tuple[str | None, str]] = {}

    # reading ---------------------------------------------------------------------------
    def add_text(self, text: str, source: str) -> None:
        if text.startswith("\ufeff"):
            text = text[1:]  # convert_text gets text that read_text did not see
        lines = _LINE.findall(text)
        if not lines:
            self._problem(source, 1, None, "the file is empty; expected the Liger benchmark CSV header")
            return
        reader = csv.reader(iter(lines), strict=True)
        header_done = False
        data_row = 0
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
                error = None
            except StopIteration:
                break
            except csv.Error as exc:
                fields, error = [], f"malformed CSV record: {exc}"
            raw = _LINE_END.sub("", "".join(lines[start - 1 : reader.line_num]))
            if header_done:
                data_row += 1
                self.rows_read += 1
            marker = next((m for m in _CONFLICT_MARKERS if raw.startswith(m)), None)
            if marker is not None:
                self._problem(
                    source, start, None,
                    f"git conflict marker {raw!r}: the file holds an unresolved merge",
                )
                continue
            if error is not None:
                self._problem(source, start, None, error)
                if not header_done:
                    return
                continue
            if not header_done:
                if not self._check_header(fields, source, start):
                    return
                header_done = True
                continue
            if not fields:
                self.skipped.append(SkippedRow(source, start, "blank record"))
                continue
            if len(fields) != len(HEADER):
                self._problem(
                    source, start, None,
                    f"expected {len(HEADER)} fields, found {len(fields)}",
                )
                continue
            try:
                self._add_row(fields, raw, source, data_row, start)
            except _RowProblems as exc:
                for column, message in exc.problems:
                    self._problem(source, start, column, message)
        if not header_done:
            self._problem(source, 1, None, "the file has no header; expected the Liger benchmark CSV header")

    def _check_header(self, fields: list[str], source: str, line: int) -> bool:
        if tuple(fields) == HEADER:
            return True
        expected = ",".join(HEADER)
        if len(fields) != len(HEADER):
            detail = f"found {len(fields)} columns"
        else:
            i = next(i for i, (a, b) in enumerate(zip(fields, HEADER, strict=True)) if a != b)
            detail = f"column {i + 1} is {fields[i]!r}, expected {HEADER[i]!r}"
        self._problem(source, line, None, f"not a Liger benchmark CSV header ({detail}); expected {expected}")
        return False

    def _problem(self, source: str, line: int, column: str | None, message: str) -> None:
        self.problems.append(Problem(Location(source, line=line, path=column), message))

    # one row ---------------------------------------------------------------------------
    def _add_row(self, f: list[str], raw: str, source: str, data_row: int, line: int) -> None:
        bad: list[tuple[str | None, str]] = []

        def require(index: int) -> str:
            value = f[index]
            if value == "":
                bad.append((HEADER[index], "is empty"))
            return value

        kernel = require(_KERNEL)
        provider = require(_PROVIDER)
        mode = f[_MODE] or "unspecified"
        metric, unit = f[_METRIC], f[_UNIT]
        if metric == "speed":
            if unit != "ms":
                bad.append(("metric_unit", f"speed rows are in ms, found {unit!r}"))
        elif metric == "memory":
            if unit != "MB":
                bad.append(("metric_unit", f"memory rows are in MB, found {unit!r}"))
        else:
            bad.append(("metric_name", f"unknown metric {metric!r} (expected speed or memory)"))
        x_name = require(_X_NAME)
        x_text = require(_X_VALUE)
        gpu = require(_GPU)
        ys = {col: self._y_value(f[col], HEADER[col], metric, bad) for col in (_Y20, _Y50, _Y80)}
        shape = self._shape(x_name, f[_X_LABEL], x_text, f[_EXTRA], bad)
        timestamp = f[_TIMESTAMP]
        times = self._times.get(timestamp)
        if times is None:
            times = self._times[timestamp] = (_observed_at(timestamp), timestamp.replace(" ", "-").replace(":", "-"))
        observed, stamp = times
        if observed is None:
            bad.append(("timestamp", f"{timestamp!r} is not a time in %Y-%m-%d %H:%M:%S form"))
        version = f[_VERSION]
        if label_value_error(version) is not None:
            bad.append(("liger_version", f"{version!r} is not a valid label value"))
        if bad:
            raise _RowProblems(bad)
        assert shape is not None  # _shape adds a problem whenever it gives None

        parameters, dtype, key, signature = shape
        gpu_names = self._gpus.get(gpu)
        if gpu_names is None:
            gpu_names = self._gpus[gpu] = (slug(gpu), gpu_label(gpu))
        gpu_slug, gpu_label_value = gpu_names
        benchmark = f"{kernel}/{mode}" + ("/memory" if metric == "memory" else "")
        external_id = "/".join(
            [benchmark, provider, gpu_slug, key, stamp]
        )

        earlier = self._seen.get(external_id)
        if earlier is not None:
            first_source, first_line, first_fields = earlier
            where = f"line {first_line}" if first_source == source else f"{first_source} line {first_line}"
            if first_fields == f:
                self.skipped.append(SkippedRow(source, line, f"duplicate of {where}"))
                return
            differing = ", ".join(HEADER[i] for i, (a, b) in enumerate(zip(first_fields, f, strict=True)) if a != b)
            raise _RowProblems([(None, (
                f"externalId {external_id} was already read from {where} "
                f"with different values ({differing})"
            ))])
        self._seen[external_id] = (source, line, f)

        origin = (source, data_row, line)
        protocol = self.shared.add("BenchmarkProtocol", (metric, mode), origin,
                                lambda: _protocol_manifest(metric, mode))
        environment = self.shared.add("ExecutionEnvironment", (gpu,), origin,
                                   lambda: _environment_manifest(gpu))
        implementation = self.shared.add("Implementation", (kernel, provider), origin,
                                      lambda: _implementation_manifest(kernel, provider))
        workload = self.shared.add("Workload", (kernel, signature), origin,
                                lambda: _workload_manifest(kernel, parameters, dtype, key))

        spec: dict[str, Any] = {}
        missing = [(HEADER[c], f[c]) for c in (_Y50, _Y20, _Y80) if ys[c] is None]
        spec["status"] = "failed" if missing else "passed"
        scale = "ns" if metric == "speed" else "bytes"
        measured = "latency" if metric == "speed" else "peak_memory"
        median = ys[_Y50]
        if median is not None:
            if metric == "speed":
                spec["timing"] = {"latencyNs": {"median": median[0]}, "primaryStatistic": "median"}
            else:
                spec["memory"] = {"peakAllocatedBytes": {"median": median[0]}, "primaryStatistic": "median"}
        spec["observedAt"] = observed
        spec["measurements"] = [
            {"metric": measured, "statistic": stat, "unit": scale,
             "value": None if (y := ys[col]) is None else y[0]}
            for stat, col in (("p20", _Y20), ("p80", _Y80))
        ]
        if missing:
            spec["failure"] = {
                "reason": "MissingMeasurement",
                "message": "; ".join(
                    f"{column} is {'empty' if text == '' else repr(text)}" for column, text in missing
                ),
            }
        spec["sourceNative"] = {
            "source": SOURCE_NAME,
            "metrics": {
                f"{unit}_{q}": (None if (y := ys[col]) is None else y[1])
                for q, col in (("20", _Y20), ("50", _Y50), ("80", _Y80))
            },
            "benchmark": benchmark,
            "externalId": external_id,
        }
        spec["protocolDigest"] = protocol
        spec["workloadDigest"] = workload
        spec["environmentDigest"] = environment
        spec["implementationDigest"] = implementation

        title = f"{_kernel_title(kernel)} · {provider} · {mode}"
        if metric == "memory":
            title += " · peak memory"
        metadata: dict[str, Any] = {"name": run_name(external_id), "title": title}
        # what people select by; metadata, so the digest is the same with or without them
        labels = valid_labels({
            "liger_version": version, "kernel": kernel, "operation": mode, "provider": provider,
            "metric": metric, "gpu": gpu_label_value,
        })
        if labels:
            metadata["labels"] = labels
        metadata["annotations"] = {
            ANNOTATION_FILE: os.path.basename(source),
            ANNOTATION_LINE: str(line),
            ANNOTATION_ROW: raw,
        }
        body = {"apiVersion": API_VERSION, "kind": "BenchmarkRun", "metadata": metadata, "spec": spec}
        self.runs.append(Document(body, source, data_row, line))

    def _shape(self, x_name: str, x_label: str, x_text: str, extra: str, bad: list) -> tuple | None:
        """(parameters, dtype, key, signature) of a row's workload; cached per distinct input.
        None only with a problem added to ``bad``."""
        inputs = (x_name, x_label, x_text, extra)
        shape = self._shapes.get(inputs)
        if shape is not None:
            return shape
        config = self._config(extra, bad)
        if config is None or not x_name or not x_text:
            return None
        try:
            parameters, dtype = _parameters(x_name, x_label, x_text, config)
        except ValueError as exc:
            bad.append(("extra_benchmark_config_str", str(exc)))
            return None
        key = "-".join(f"{name}{_render(value)}" for name, value in sorted(parameters.items()))
        if dtype is not None:
            key = f"{key}-{dtype}" if key else dtype
        # the key alone can merge 1, 1.0 and "1" (or strings holding "-"); the signature cannot
        signature = (dtype, tuple(sorted((k, type(v).__name__, v) for k, v in parameters.items())))
        shape = self._shapes[inputs] = (parameters, dtype, key, signature)
        return shape

    def _y_value(self, text: str, column: str, metric: str, bad: list) -> tuple[int, float] | None:
        """(integer ns or bytes, float of the text), or None for a missing value (nan, empty)."""
        if text == "" or text.lower() == "nan":
            return None
        if not _NUMBER.match(text):
            bad.append((column, f"{text!r} is not a number"))
            return None
        number = float(text)
        if number in (float("inf"), float("-inf")):
            bad.append((column, f"{text!r} is out of range"))
            return None
        if number < 0:
            bad.append((column, f"{text!r} is negative"))
            return None
        exact = Decimal(text)
        if metric == "memory":
            try:
                scaled = _EXACT.multiply(exact, Decimal(_MIB))
            except decimal.Inexact:
                scaled = None
            if scaled is None or scaled != scaled.to_integral_value():
                bad.append((column, f"{text} MB is not a whole number of bytes ({text} x 1048576 is not an integer)"))
                return None
            return _stored_integer(int(scaled), text, "bytes", column, bad), number
        # speed (or an unknown metric, which is reported elsewhere): ms -> ns, half up
        nanoseconds = exact.scaleb(6, context=_EXACT).quantize(Decimal(1), ROUND_HALF_UP, _WIDE)
        return _stored_integer(int(nanoseconds), text, "ns", column, bad), number

    def _config(self, text: str, bad: list) -> dict | None:
        if text in ("", "null"):
            return {}
        try:
            value = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
        except (ValueError, _ConfigError) as exc:
            message = exc.args[0] if isinstance(exc, _ConfigError) else f"not valid JSON: {exc}"
            bad.append(("extra_benchmark_config_str", message))
            return None
        if not isinstance(value, dict):
            bad.append(("extra_benchmark_config_str", f"expected a JSON object, found {type(value).__name__}"))
            return None
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item) or isinstance(item, int) and not (
                    INT64_MIN <= item <= INT64_MAX):
                bad.append(("extra_benchmark_config_str",
                            f"key {key!r}: {_number_text(text, key)} is out of range (a number kidx stores is a "
                            "64-bit integer or a finite float)"))
                return None
            if isinstance(item, (dict, list)):
                bad.append(("extra_benchmark_config_str",
                            f"key {key!r} holds a {'list' if isinstance(item, list) else 'object'}; "
                            "only scalar values are supported"))
                return None
        return value

    # result ----------------------------------------------------------------------------
    def finish(self) -> LigerImport:
        if self.problems:
            raise InvalidInputError(self.problems)
        documents = [*self.shared.documents(), *self.runs]
        check_values(documents)
        return LigerImport(documents, self.rows_read, self.skipped)


class _ConfigError(Exception):
    pass


def _stored_integer(value: int, text: str, unit: str, column: str, bad: list) -> int:
    """``value`` when it fits in 64 bits, as apply requires; else a problem (and 0)."""
    if INT64_MIN <= value <= INT64_MAX:
        return value
    bad.append((column, f"{text!r} is out of range ({Decimal(value):.3e} {unit} does not fit in 64 bits)"))
    return 0


def _number_text(config: str, key: str) -> str:
    """The number as written for ``key`` in a config's JSON (json.loads keeps no text)."""
    match = re.search(re.escape(json.dumps(key)) + r"\s*:\s*(-?[0-9][0-9.eE+-]*)", config)
    return match.group(1) if match else "the value"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _ConfigError(f"key {key!r} appears twice")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise _ConfigError(f"{name} is not a number kidx can store")


def _observed_at(timestamp: str) -> str | None:
    match = _TIME_TEXT.match(timestamp)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return f"{timestamp[:10]}T{timestamp[11:]}.000Z"


def _typed_x(text: str) -> int | float | str:
    if _INTEGER.match(text):
        return int(text)
    if _NUMBER.match(text):
        number = float(text)
        if number not in (float("inf"), float("-inf")):
            return number
    return text


def _x_parameter_name(x_name: str, x_label: str) -> str:
    if x_name == "T":
        label = x_label.strip().lower()
        return "tokens" if label in ("total tokens", "num_tokens") else "seq"
    return _ALIASES.get(x_name, x_name)


def _parameters(x_name: str, x_label: str, x_text: str, config: dict) -> tuple[dict, str | None]:
    """Typed workload parameters and the short dtype (docs/liger-data.md §2.2).

    The x axis claims its canonical name first; config keys follow in sorted order (so
    key-order variants of one config give one workload); a key whose canonical name is
    taken (a stale sweep ceiling) keeps its raw name; nulls are swept placeholders and
    are dropped. Raises ValueError for a config that contradicts itself or the x axis.
    """
    x_value = _typed_x(x_text)
    parameters: dict[str, Any] = {_x_parameter_name(x_name, x_label): x_value}
    dtype = None
    for key in sorted(config):
        value = config[key]
        if value is None:
            continue
        if key == "dtype" and isinstance(value, str):
            dtype = _short_dtype(value)
            if not dtype:
                raise ValueError(f"dtype {value!r} has no short form")
            continue
        if key == x_name and value == x_value and type(value) is type(x_value):
            continue
        name = _ALIASES.get(key, key)
        if name in parameters:
            name = key
        if name in parameters:
            raise ValueError(
                f"key {key!r} = {_render(value)} conflicts with parameter {name!r} = "
                f"{_render(parameters[name])}"
            )
        parameters[name] = value
    return parameters, dtype



# runs must have run on the GPU an attached environment describes
check_environment = gpu_mismatches

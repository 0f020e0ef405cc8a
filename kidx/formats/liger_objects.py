"""The objects Liger runs refer to (the converter is kidx.formats.liger): a protocol per
metric and pass, an environment per GPU, an implementation per (kernel, normalised
provider), a workload per (kernel, shape), each named and titled from what it is
(``liger-bench-do-bench-backward``, ``liger-bench-nvidia-b200``, ``liger-{kernel}-{key}``,
``liger-{kernel}-{library}-{backend}[-{variant}]``). Each builder gives (base name, body)
for framework.SharedObjects, which keeps one object per digest and names it.
"""

from __future__ import annotations

import re
from typing import Any

from kidx.formats.framework import hashed_name, manifest, slug
from kidx.formats.gpus import KNOWN_GPUS, canonical_gpu_name, gpu_hardware
from kidx.formats.liger_fields import render

FAMILY = "liger_kernel_bench"
LIGER_REPOSITORY = "https://github.com/linkedin/Liger-Kernel"

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
# (docs/liger-data.md §3.4), as kidx.formats.gpus describes them. Lookups go through
# that module, which knows these and more, in any spelling.
GPUS: dict[str, tuple[str, str | None, str | None]] = {
    name: KNOWN_GPUS[name]
    for name in (
        "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA A100-SXM4-80GB",
        "NVIDIA A100-SXM4-40GB", "NVIDIA B200", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090",
    )
}


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


def kernel_title(kernel: str) -> str:
    return KERNEL_TITLES.get(kernel, kernel)


def _strip_vendor(gpu: str) -> str:
    for prefix in ("NVIDIA ", "AMD "):
        if gpu.startswith(prefix):
            return gpu[len(prefix):]
    return gpu


def protocol_manifest(metric: str, mode: str) -> tuple[str, dict]:
    """The protocol of a metric (speed or memory) and a pass: how Liger's scripts measure it."""
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
    return name, manifest("BenchmarkProtocol", name, title, spec)


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


def environment_manifest(gpu: str) -> tuple[str, dict]:
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
    return name, manifest("ExecutionEnvironment", name, title, {"hardware": hardware, "software": {}})


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


def implementation_manifest(kernel: str, provider: str) -> tuple[str, dict]:
    """The implementation of a kernel by a provider (normalised: ``normalise_provider``)."""
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
    title = f"{kernel_title(kernel)} · {what}"
    return name, manifest("Implementation", name, title, spec)


def workload_manifest(kernel: str, parameters: dict, dtype: str | None, key: str) -> tuple[str, dict]:
    """The workload of a kernel on one shape (liger_fields.shape's parameters, dtype and key)."""
    spec: dict[str, Any] = {"family": FAMILY, "operation": kernel, "parameters": parameters}
    if dtype is not None:
        spec["dtype"] = dtype
    spec["key"] = key
    name = "liger-" + slug(kernel + "-" + key)
    shown = [f"{name_} {render(value)}" for name_, value in sorted(parameters.items())]
    if dtype is not None:
        shown.append(dtype)
    title = " · ".join([kernel_title(kernel), *shown])
    return name, manifest("Workload", name, title, spec)

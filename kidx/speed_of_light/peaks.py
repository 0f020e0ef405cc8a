"""What a GPU can do: vendors' published peaks, and the achievable peaks kidx measured.

Published peaks are keyed by the environment's ``spec.hardware`` product and form factor
(as kidx.formats.gpus describes each GPU), per GPU, dense (no structured sparsity): where
a datasheet gives a Tensor Core figure only "with sparsity", the dense figure is half of
it. Each entry names its source. Sources, figures and the GPUs left out are listed in
docs/speed-of-light.md.

Measured peaks are what ``kidx env capture --measure-peaks`` reached on the machine (a
device-to-device copy, large matrix products). They vary from run to run, so they live in
the environment's annotations, outside its identity.
"""

from __future__ import annotations

from collections.abc import Mapping

from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

TERA = 10**12
GIGA = 10**9


class Peak(NamedTuple):
    """Per-GPU peaks: memory bandwidth in bytes/s, dense FLOP/s by math precision (``fp32``
    on the CUDA cores; ``tf32``, ``bf16``, ``fp16``, ``fp8`` on the Tensor Cores; a
    precision the GPU lacks is absent)."""

    gpu: str
    bandwidth: float
    flops: Mapping[str, float]
    source: str


def _peak(gpu, bandwidth_gb_s, fp32, tf32, bf16, fp16, fp8, source) -> Peak:
    flops = {"fp32": fp32, "tf32": tf32, "bf16": bf16, "fp16": fp16, "fp8": fp8}
    return Peak(gpu, bandwidth_gb_s * GIGA, {k: v * TERA for k, v in flops.items() if v is not None}, source)


_SPARSE = "Tensor Core figures with sparsity, halved"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe, A100 80GB SXM; TF32/BF16/FP16 dense)"
_A100_40 = "NVIDIA A100 Tensor Core GPU datasheet, 40GB edition (A100 40GB SXM: 1,555 GB/s)"
_H100 = f"NVIDIA H100 Tensor Core GPU datasheet (columns H100 SXM, H100 NVL; {_SPARSE})"
_H100_PCIE = f"NVIDIA H100 Tensor Core GPU datasheet, first edition (H100 PCIe: 2 TB/s; {_SPARSE})"
_H200 = f"NVIDIA H200 Tensor Core GPU datasheet (columns H200 SXM, H200 NVL; {_SPARSE})"
_B200 = f"NVIDIA HGX B200 specifications (individual Blackwell GPU, HGX B200 column; {_SPARSE})"
_GA102 = "NVIDIA Ampere GA102 GPU Architecture whitepaper (GeForce RTX 3090; Tensor with FP32 accumulate, dense)"
_AD102 = "NVIDIA Ada GPU Architecture whitepaper (GeForce RTX 4090; Tensor with FP32 accumulate, dense)"

# (product, formFactor) -> Peak. Figures in GB/s and TFLOP/s as the sources print them.
PUBLISHED: dict[tuple[str, str | None], Peak] = {
    ("NVIDIA A100", "SXM4 40GB"): _peak("A100 SXM4 40GB", 1555, 19.5, 156, 312, 312, None, _A100_40),
    ("NVIDIA A100", "SXM4 80GB"): _peak("A100 SXM4 80GB", 2039, 19.5, 156, 312, 312, None, _A100),
    ("NVIDIA A100", "80GB PCIe"): _peak("A100 80GB PCIe", 1935, 19.5, 156, 312, 312, None, _A100),
    ("NVIDIA H100", "80GB HBM3"): _peak("H100 SXM 80GB HBM3", 3350, 67, 494.5, 989.5, 989.5, 1979, _H100),
    ("NVIDIA H100", "PCIe"): _peak("H100 PCIe 80GB", 2000, 51, 378, 756.5, 756.5, 1513, _H100_PCIE),
    ("NVIDIA H100", "NVL"): _peak("H100 NVL 94GB", 3900, 60, 417.5, 835.5, 835.5, 1670.5, _H100),
    ("NVIDIA H200", None): _peak("H200 SXM 141GB", 4800, 67, 494.5, 989.5, 989.5, 1979, _H200),
    ("NVIDIA H200", "NVL"): _peak("H200 NVL 141GB", 4800, 60, 417.5, 835.5, 835.5, 1670.5, _H200),
    ("NVIDIA B200", None): _peak("B200 (HGX)", 7700, 75, 1100, 2250, 2250, 4500, _B200),
    ("NVIDIA GeForce RTX 3090", None): _peak("GeForce RTX 3090", 936, 35.6, 35.6, 71, 71, None, _GA102),
    ("NVIDIA GeForce RTX 4090", None): _peak("GeForce RTX 4090", 1008, 82.6, 82.6, 165.2, 165.2, 330.3, _AD102),
}

# the math precision a workload's dtype runs matrix products in: torch's default for fp32
# matmul is full FP32 (torch.backends.cuda.matmul.allow_tf32 is False)
PRECISION_OF_DTYPE = {
    "fp32": "fp32", "bf16": "bf16", "fp16": "fp16",
    "fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e4m3fn": "fp8", "fp8_e5m2": "fp8",
}

ANNOTATION = "kernelindex.dev/"
MEASURED_BANDWIDTH = ANNOTATION + "measured-memory-bandwidth"  # bytes/s, an integer as text
MEASURED_FLOPS = ANNOTATION + "measured-flops-"  # + precision: FLOP/s, an integer as text
MEASURED_METHOD = ANNOTATION + "measured-peaks-method"
MEASURED_AT = ANNOTATION + "measured-peaks-at"
MEASURED_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


def published_peak(hardware: Mapping[str, Any] | None) -> Peak | None:
    if not isinstance(hardware, Mapping):
        return None
    return PUBLISHED.get((hardware.get("product"), hardware.get("formFactor")))  # type: ignore[arg-type]


class MeasuredPeak(NamedTuple):
    bandwidth: float | None
    flops: Mapping[str, float]


def measured_peak(annotations: Mapping[str, str] | None) -> MeasuredPeak | None:
    """The measured peaks an environment's annotations record, or None."""
    if not annotations:
        return None
    bandwidth = _positive(annotations.get(MEASURED_BANDWIDTH))
    flops = {}
    for precision in MEASURED_PRECISIONS:
        value = _positive(annotations.get(MEASURED_FLOPS + precision))
        if value is not None:
            flops[precision] = value
    if bandwidth is None and not flops:
        return None
    return MeasuredPeak(bandwidth, flops)


def _positive(text) -> float | None:
    if not isinstance(text, str) or not text.isdigit():
        return None
    value = float(int(text))
    return value if value > 0 else None

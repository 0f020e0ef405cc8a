"""GPU names as drivers report them, and what kidx records about each.

``torch.cuda.get_device_name`` and NVML report one product under a few spellings over
driver versions ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"). Names are therefore
looked up by their slug (lower case, punctuation runs as one ``-``), so every spelling of a
known product gives one hardware description, whichever file or machine it came from.
"""

from __future__ import annotations

import re
from typing import Any

# canonical gpu name -> (product, formFactor, architecture)
KNOWN_GPUS: dict[str, tuple[str, str | None, str | None]] = {
    "NVIDIA H100 80GB HBM3": ("NVIDIA H100", "80GB HBM3", "sm_90"),
    "NVIDIA H100 PCIe": ("NVIDIA H100", "PCIe", "sm_90"),
    "NVIDIA H100 NVL": ("NVIDIA H100", "NVL", "sm_90"),
    "NVIDIA H200": ("NVIDIA H200", None, "sm_90"),
    "NVIDIA H200 NVL": ("NVIDIA H200", "NVL", "sm_90"),
    "NVIDIA A100-SXM4-80GB": ("NVIDIA A100", "SXM4 80GB", "sm_80"),
    "NVIDIA A100-SXM4-40GB": ("NVIDIA A100", "SXM4 40GB", "sm_80"),
    "NVIDIA A100 80GB PCIe": ("NVIDIA A100", "80GB PCIe", "sm_80"),
    "NVIDIA B200": ("NVIDIA B200", None, "sm_100"),
    "NVIDIA L40S": ("NVIDIA L40S", None, "sm_89"),
    "NVIDIA L4": ("NVIDIA L4", None, "sm_89"),
    "NVIDIA A10G": ("NVIDIA A10G", None, "sm_86"),
    "NVIDIA GeForce RTX 3090": ("NVIDIA GeForce RTX 3090", None, "sm_86"),
    "NVIDIA GeForce RTX 4090": ("NVIDIA GeForce RTX 4090", None, "sm_89"),
}
# First word of an unknown name -> vendor (older NVIDIA parts say "Tesla", ...).
VENDOR_WORDS = {
    "nvidia": "nvidia", "tesla": "nvidia", "quadro": "nvidia", "geforce": "nvidia",
    "amd": "amd", "radeon": "amd", "instinct": "amd", "intel": "intel",
}

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """Lower-case; each run of characters outside [a-z0-9] becomes one ``-``; trimmed."""
    return _SLUG.sub("-", text.lower()).strip("-")


_BY_SLUG = {slug(name): name for name in KNOWN_GPUS}


def canonical_gpu_name(name: str) -> str | None:
    """The table's spelling of a known GPU, whatever its case or punctuation; else None."""
    return _BY_SLUG.get(slug(name))


def describe_gpu(name: str) -> tuple[str, str, str | None, str | None]:
    """(vendor, product, formFactor, architecture) for a reported GPU name.

    A known name in any spelling gives the table's description; an unknown one keeps its
    text as the product, with the vendor guessed from its first word."""
    canonical = canonical_gpu_name(name)
    if canonical is not None:
        product, form_factor, architecture = KNOWN_GPUS[canonical]
        return "nvidia", product, form_factor, architecture
    words = name.split()
    first = words[0] if words else name
    vendor = VENDOR_WORDS.get(first.lower(), slug(first) or "unknown")
    return vendor, name, None, None


def gpu_hardware(name: str, architecture: str | None = None) -> dict[str, Any]:
    """``spec.hardware`` of an environment with GPU ``name``: vendor and product, and
    formFactor and architecture when known; ``architecture`` read from the device itself
    takes the place of the table's."""
    vendor, product, form_factor, known_architecture = describe_gpu(name)
    architecture = architecture or known_architecture
    hardware: dict[str, Any] = {"vendor": vendor, "product": product}
    if form_factor:
        hardware["formFactor"] = form_factor
    if architecture:
        hardware["architecture"] = architecture
    return hardware


def vendor_of(name: str) -> str:
    return describe_gpu(name)[0]

"""An ExecutionEnvironment manifest from the facts a machine reports.

Identity (``spec``, hence the digest) holds what makes results comparable: two machines
of the same kind with the same software get one digest. Everything that differs between
such machines, or between two captures of one machine, is an annotation:

* spec.hardware: vendor, product, formFactor, architecture (sm_XY from the compute
  capability), count (GPUs of that product), memoryBytes (of one GPU); for a machine
  without a GPU, the CPU (vendor, model, machine architecture).
* spec.host.cpu: the CPU model (it feeds the GPU and launches its kernels).
* spec.software: driver, cuda (the runtime torch was built with), cuda-driver (the
  newest CUDA the driver supports), python, os, and torch, triton, liger-kernel,
  transformers where installed.
* annotations (informational): host name, GPU UUIDs, clocks at capture time, capture
  time, kernel release, CPU count, where the GPU facts came from, and what could not be
  read.

The name is derived from the spec: ``{product}[-{formFactor}]-{count}x-{10 hex of the
digest}`` (``cpu-{model}-{hex}`` without a GPU), so one spec always gets one name.
"""

from __future__ import annotations

import datetime
import platform
from typing import Any

from kidx.capture.probes import Facts
from kidx.formats.gpus import gpu_hardware, slug
from kidx.identity import digest_of
from kidx.kinds.metadata import API_VERSION

ANNOTATION_PREFIX = "kernelindex.dev/"
_CPU_VENDORS = {"intel": "intel", "amd": "amd", "genuineintel": "intel", "authenticamd": "amd", "arm": "arm"}


def environment_manifest(facts: Facts, name: str | None = None, now: datetime.datetime | None = None) -> dict:
    spec: dict[str, Any] = {"hardware": _hardware(facts)}
    if facts.gpus and facts.cpu:
        spec["host"] = {"cpu": facts.cpu}
    spec["software"] = _software(facts)
    body: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "ExecutionEnvironment", "metadata": {}, "spec": spec}
    body["metadata"] = {
        "name": name or _name(spec, digest_of(body)),
        "title": _title(spec, facts),
        "annotations": _annotations(facts, now or datetime.datetime.now(datetime.UTC)),
    }
    return body


def _hardware(facts: Facts) -> dict:
    if not facts.gpus:
        model = facts.cpu or platform.processor() or "unknown CPU"
        word = model.split()[0].lower().split("(")[0] if model.split() else ""
        cpu: dict[str, Any] = {"vendor": _CPU_VENDORS.get(word, slug(word) or "unknown"), "product": model}
        if platform.machine():
            cpu["architecture"] = platform.machine()
        return cpu
    first = facts.gpus[0]
    capability = first.compute_capability
    hardware = gpu_hardware(first.name, "sm_" + capability.replace(".", "") if capability else None)
    hardware["count"] = sum(1 for gpu in facts.gpus if gpu.name == first.name)
    if first.memory_bytes:
        hardware["memoryBytes"] = first.memory_bytes
    return hardware


def _software(facts: Facts) -> dict:
    software: dict[str, str] = {}
    if facts.driver:
        software["driver"] = facts.driver
    if facts.cuda_runtime:
        software["cuda"] = facts.cuda_runtime
    if facts.cuda_driver:
        software["cuda-driver"] = facts.cuda_driver
    software.update(facts.libraries)
    software["python"] = facts.python
    software["os"] = facts.os
    return software


def _annotations(facts: Facts, now: datetime.datetime) -> dict[str, str]:
    annotations = {
        "hostname": facts.hostname,
        "captured-at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kernel": facts.kernel,
    }
    if facts.cpu_count:
        annotations["cpu-count"] = str(facts.cpu_count)
    if facts.gpus:
        annotations["gpu-source"] = facts.gpu_source or ""
        annotations["gpus"] = "; ".join(f"{index}: {gpu.name}" for index, gpu in enumerate(facts.gpus))
        uuids = [gpu.uuid for gpu in facts.gpus if gpu.uuid]
        if uuids:
            annotations["gpu-uuids"] = ", ".join(uuids)
        clocks = [
            f"{index}: sm {gpu.sm_clock_mhz} MHz, memory {gpu.memory_clock_mhz} MHz"
            for index, gpu in enumerate(facts.gpus)
            if gpu.sm_clock_mhz is not None or gpu.memory_clock_mhz is not None
        ]
        if clocks:
            annotations["clocks-at-capture"] = "; ".join(clocks)
    if facts.notes:
        annotations["capture-notes"] = "; ".join(facts.notes)
    return {ANNOTATION_PREFIX + key: value for key, value in annotations.items() if value}


def _name(spec: dict, digest: str) -> str:
    hardware = spec["hardware"]
    suffix = digest.split(":", 1)[1][:10]
    if "count" in hardware:
        base = slug(" ".join(filter(None, [hardware["product"], hardware.get("formFactor")])))
        base = f"{base}-{hardware['count']}x"
    else:
        base = "cpu-" + slug(hardware["product"])
    return base[:200].rstrip("-") + "-" + suffix


def _title(spec: dict, facts: Facts) -> str:
    hardware, software = spec["hardware"], spec["software"]
    if "count" in hardware:
        parts = [f"{hardware['count']} × " + " ".join(filter(None, [hardware["product"], hardware.get("formFactor")]))]
    else:
        parts = [f"CPU only · {hardware['product']}"]
    for key, shown in (("torch", "torch"), ("cuda", "CUDA"), ("driver", "driver")):
        if key in software:
            parts.append(f"{shown} {software[key]}")
    return " · ".join(parts)

"""What the machine says about itself: GPUs, drivers, libraries, CPU and OS.

Each probe returns facts or a note saying why it could not (a tool missing, a library
not installed, no device); nothing here raises for a missing tool. GPUs are read from
NVML (``nvidia-ml-py``), else ``nvidia-smi``, else torch, the first that answers.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass, field

NVIDIA_SMI_TIMEOUT_S = 20
NVML_EXTRA_HINT = "pip install 'kidx[nvml]'"
# Python distributions whose versions are part of an environment's software, as
# software key -> distribution name.
LIBRARIES = {"torch": "torch", "triton": "triton", "liger-kernel": "liger_kernel", "transformers": "transformers"}


@dataclass
class Gpu:
    name: str
    memory_bytes: int | None = None
    compute_capability: str | None = None  # "9.0"
    uuid: str | None = None
    sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None


@dataclass
class Facts:
    gpus: list[Gpu] = field(default_factory=list)
    gpu_source: str | None = None  # nvml, nvidia-smi or torch
    driver: str | None = None
    cuda_driver: str | None = None  # the CUDA version the driver supports
    cuda_runtime: str | None = None  # the CUDA runtime torch was built with
    libraries: dict[str, str] = field(default_factory=dict)
    python: str = ""
    os: str = ""
    kernel: str = ""
    cpu: str | None = None
    cpu_count: int | None = None
    hostname: str = ""
    notes: list[str] = field(default_factory=list)  # what could not be read, and why


def gather() -> Facts:
    facts = Facts(
        python=platform.python_version(),
        os=_os_name(),
        kernel=platform.release(),
        cpu=_cpu_model(),
        cpu_count=os.cpu_count(),
        hostname=socket.gethostname(),
    )
    for key, distribution in LIBRARIES.items():
        try:
            facts.libraries[key] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            facts.notes.append(f"{key}: not installed")
    if facts.cpu is None:
        facts.notes.append("CPU model: not found in /proc/cpuinfo or platform.processor()")
    for probe in (_from_nvml, _from_nvidia_smi, _from_torch):
        if probe(facts):
            break
    if not facts.gpus:
        facts.notes.append("no GPU found: this is a CPU environment")
    if "torch" in facts.libraries and facts.cuda_runtime is None:
        facts.cuda_runtime = _torch_cuda_runtime()
    return facts


# --- GPUs ------------------------------------------------------------------------------

def _from_nvml(facts: Facts) -> bool:
    if importlib.util.find_spec("pynvml") is None:
        facts.notes.append(f"NVML: nvidia-ml-py is not installed ({NVML_EXTRA_HINT})")
        return False
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        facts.notes.append(f"NVML: {_nvml_text(exc)}")
        return False
    try:
        facts.driver = _text(pynvml.nvmlSystemGetDriverVersion())
        version = pynvml.nvmlSystemGetCudaDriverVersion()
        facts.cuda_driver = f"{version // 1000}.{version % 1000 // 10}"
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            gpus.append(Gpu(
                name=_text(pynvml.nvmlDeviceGetName(handle)),
                memory_bytes=int(pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                compute_capability=f"{major}.{minor}",
                uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                sm_clock_mhz=_optional(lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                memory_clock_mhz=_optional(lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
            ))
    except Exception as exc:
        facts.notes.append(f"NVML: {_nvml_text(exc)}")
        facts.driver = facts.cuda_driver = None
        return False
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    if not gpus:
        facts.notes.append("NVML: the driver reports no GPU")
        return False
    facts.gpus, facts.gpu_source = gpus, "nvml"
    return True


_SMI_FIELDS = "name,memory.total,compute_cap,uuid,driver_version,clocks.sm,clocks.mem"


def _from_nvidia_smi(facts: Facts) -> bool:
    program = shutil.which("nvidia-smi")
    if program is None:
        facts.notes.append("nvidia-smi: not found on PATH")
        return False
    try:
        done = subprocess.run(
            [program, f"--query-gpu={_SMI_FIELDS}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        facts.notes.append(f"nvidia-smi: could not run ({exc})")
        return False
    if done.returncode != 0:
        reason = (done.stdout + done.stderr).strip().splitlines()
        facts.notes.append(f"nvidia-smi: exit {done.returncode}" + (f" ({reason[0]})" if reason else ""))
        return False
    gpus = []
    for line in done.stdout.splitlines():
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(_SMI_FIELDS.split(",")) or not values[0]:
            continue
        name, memory, capability, uuid, driver, sm_clock, memory_clock = values
        facts.driver = _known(driver) or facts.driver
        gpus.append(Gpu(
            name=name,
            memory_bytes=int(memory) * 1048576 if memory.isdigit() else None,  # MiB
            compute_capability=_known(capability),
            uuid=_known(uuid),
            sm_clock_mhz=int(sm_clock) if sm_clock.isdigit() else None,
            memory_clock_mhz=int(memory_clock) if memory_clock.isdigit() else None,
        ))
    if not gpus:
        facts.notes.append("nvidia-smi: reports no GPU")
        return False
    facts.gpus, facts.gpu_source = gpus, "nvidia-smi"
    return True


def _from_torch(facts: Facts) -> bool:
    if "torch" not in facts.libraries:
        return False  # already noted as not installed
    try:
        import torch

        if not torch.cuda.is_available():
            facts.notes.append("torch: torch.cuda.is_available() is False")
            return False
        gpus = []
        for index in range(torch.cuda.device_count()):
            properties = torch.cuda.get_device_properties(index)
            gpus.append(Gpu(
                name=properties.name,
                memory_bytes=int(properties.total_memory),
                compute_capability=f"{properties.major}.{properties.minor}",
            ))
        facts.cuda_runtime = torch.version.cuda
    except Exception as exc:
        facts.notes.append(f"torch: could not read the GPUs ({type(exc).__name__}: {exc})")
        return False
    facts.gpus, facts.gpu_source = gpus, "torch"
    return bool(gpus)


def _torch_cuda_runtime() -> str | None:
    """torch.version.cuda, read from torch/version.py without importing torch (seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        try:
            with open(os.path.join(folder, "version.py"), encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            continue
        match = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
        return match.group(1) if match else None
    return None


# --- host ------------------------------------------------------------------------------

def _os_name() -> str:
    try:
        with open("/etc/os-release", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}".strip() or "unknown"


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or None


# --- small helpers -----------------------------------------------------------------------

def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_text(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _optional(read):
    try:
        return int(read())
    except Exception:
        return None


def _known(value: str) -> str | None:
    return None if value in ("", "[N/A]", "N/A", "[Not Supported]") else value

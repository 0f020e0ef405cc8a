"""What the machine says about itself: GPUs, drivers, libraries, CPU and OS.

Each probe returns facts or a note saying why it could not (a tool missing, a library
not installed, no device); nothing here raises for a missing tool. GPUs are read from
NVML (``nvidia-ml-py``), else ``nvidia-smi``, else torch, the first that answers.

A broken driver can make ``nvmlInit`` or ``torch.cuda.is_available()`` hang for good, so
those probes run in a child Python process and ``nvidia-smi`` in its own; each is given
``KIDX_PROBE_TIMEOUT`` seconds (20 by default). A probe that does not answer in time is
abandoned (killed) and reported as a warning; capture goes on with the next one.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field

from kidx.errors import install_hint

PROBE_TIMEOUT_ENV = "KIDX_PROBE_TIMEOUT"
DEFAULT_PROBE_TIMEOUT_S = 20.0
_KILLED_WAIT_S = 2.0  # a child stuck in the driver may not even die: it is then left behind
NVML_EXTRA_HINT = install_hint("nvml")
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
    warnings: list[str] = field(default_factory=list)  # probes that did not answer in time (also in notes)


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
    timeout = probe_timeout()
    for probe in (_from_nvml, _from_nvidia_smi, _from_torch):
        if probe(facts, timeout):
            break
    if not facts.gpus:
        facts.notes.append("no GPU found: this is a CPU environment")
    if "torch" in facts.libraries and facts.cuda_runtime is None:
        facts.cuda_runtime = _torch_cuda_runtime()
    return facts


# --- GPUs ------------------------------------------------------------------------------

def probe_timeout() -> float:
    """Seconds each GPU probe may take: KIDX_PROBE_TIMEOUT, else 20."""
    configured = os.environ.get(PROBE_TIMEOUT_ENV, "").strip()
    if not configured:
        return DEFAULT_PROBE_TIMEOUT_S
    try:
        seconds = float(configured)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        from kidx.errors import UsageError

        raise UsageError(f'{PROBE_TIMEOUT_ENV}="{configured}" is not a number of seconds greater than 0')
    return seconds


def _timed_out(facts: Facts, probe: str, call: str, timeout: float) -> None:
    message = f"{probe}: no answer within {timeout:g} s ({call} hung); skipped (set {PROBE_TIMEOUT_ENV} to wait longer)"
    facts.warnings.append(message)
    facts.notes.append(message)


def _run(command: list[str], timeout: float, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes] | None:
    """(exit status, stdout, stderr) of ``command``, or None when it ran past ``timeout``:
    it is then killed, and not waited for beyond a moment (a process stuck in a driver
    call may not die at once)."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        try:
            process.communicate(timeout=_KILLED_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        return None
    return process.returncode, out, err


def _in_child(facts: Facts, probe: str, timeout: float) -> bool | None:
    """Run ``probe`` (nvml or torch) in a child Python and merge what it found into
    ``facts``: its answer, or None when it timed out."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), package_root]))
    code = "import sys; from kidx.capture.probes import child_main; child_main(sys.argv[1])"
    try:
        done = _run([sys.executable, "-c", code, probe], timeout, env)
    except OSError as exc:
        facts.notes.append(f"{probe}: could not start the probe ({exc})")
        return False
    if done is None:
        return None
    status, out, err = done
    try:
        found = json.loads(out)
    except ValueError:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {status}"]
        facts.notes.append(f"{probe}: the probe failed ({last[0]})")
        return False
    child = Facts(**{key: value for key, value in found["facts"].items() if key != "gpus"})
    child.gpus = [Gpu(**gpu) for gpu in found["facts"]["gpus"]]
    facts.notes.extend(child.notes)
    if found["answer"]:
        facts.gpus, facts.gpu_source = child.gpus, child.gpu_source
        facts.driver = child.driver or facts.driver
        facts.cuda_driver = child.cuda_driver or facts.cuda_driver
        facts.cuda_runtime = child.cuda_runtime or facts.cuda_runtime
    return bool(found["answer"])


def child_main(probe: str) -> None:
    """The child's side of ``_in_child``: run one probe, print its facts as JSON."""
    facts = Facts()
    answer = {"nvml": _nvml_probe, "torch": _torch_probe}[probe](facts)
    sys.stdout.write(json.dumps({"answer": answer, "facts": dataclasses.asdict(facts)}))


def _from_nvml(facts: Facts, timeout: float) -> bool:
    if importlib.util.find_spec("pynvml") is None:
        facts.notes.append(f"NVML: nvidia-ml-py is not installed ({NVML_EXTRA_HINT})")
        return False
    answer = _in_child(facts, "nvml", timeout)
    if answer is None:
        _timed_out(facts, "NVML", "nvmlInit or a device query", timeout)
    return bool(answer)


def _nvml_probe(facts: Facts) -> bool:
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
                sm_clock_mhz=_optional(functools.partial(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM)),
                memory_clock_mhz=_optional(
                    functools.partial(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM)
                ),
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


def _from_nvidia_smi(facts: Facts, timeout: float) -> bool:
    program = shutil.which("nvidia-smi")
    if program is None:
        facts.notes.append("nvidia-smi: not found on PATH")
        return False
    try:
        done = _run([program, f"--query-gpu={_SMI_FIELDS}", "--format=csv,noheader,nounits"], timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        facts.notes.append(f"nvidia-smi: could not run ({exc})")
        return False
    if done is None:
        _timed_out(facts, "nvidia-smi", "nvidia-smi", timeout)
        return False
    status, raw_out, raw_err = done
    # a broken tool may print anything: bytes that are not UTF-8 are shown, never fatal
    stdout, stderr = raw_out.decode("utf-8", "replace"), raw_err.decode("utf-8", "replace")
    if status != 0:
        reason = (stdout + stderr).strip().splitlines()
        facts.notes.append(f"nvidia-smi: exit {status}" + (f" ({reason[0]})" if reason else ""))
        return False
    gpus = []
    for line in stdout.splitlines():
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(_SMI_FIELDS.split(",")) or not values[0]:
            continue
        name, memory, capability, uuid, driver, sm_clock, memory_clock = values
        facts.driver = _known(driver) or facts.driver
        gpus.append(Gpu(
            name=name,
            memory_bytes=_mebibytes(memory),
            compute_capability=_known(capability),
            uuid=_known(uuid),
            sm_clock_mhz=_whole(sm_clock),
            memory_clock_mhz=_whole(memory_clock),
        ))
    if not gpus:
        facts.notes.append("nvidia-smi: reports no GPU")
        return False
    facts.gpus, facts.gpu_source = gpus, "nvidia-smi"
    return True


def _from_torch(facts: Facts, timeout: float) -> bool:
    if "torch" not in facts.libraries:
        return False  # already noted as not installed
    answer = _in_child(facts, "torch", timeout)
    if answer is None:
        _timed_out(facts, "torch", "torch.cuda.is_available() or a device query", timeout)
    return bool(answer)


def _torch_probe(facts: Facts) -> bool:
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


def _whole(text: str) -> int | None:
    """A whole number written in ASCII digits (``"²"`` is a digit to str.isdigit, not here)."""
    return int(text) if text.isascii() and text.isdigit() else None


def _mebibytes(text: str) -> int | None:
    mebibytes = _whole(text)
    return None if mebibytes is None else mebibytes * 1048576


def _known(value: str) -> str | None:
    return None if value in ("", "[N/A]", "N/A", "[Not Supported]") else value

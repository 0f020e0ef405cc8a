"""kidx env capture: a GPU machine (through fake NVML and nvidia-smi), a machine without a
GPU, identity versus annotations, and --apply. Run as a process with PATH and PYTHONPATH
under the test's control, so what the machine "reports" is known."""

from __future__ import annotations

import json
import os
import stat
import sys
import time

import pytest

from kidx.identity import digest_of

SMI_TWO_H200 = (
    "NVIDIA H200, 143771, 9.0, GPU-b2d8e352-3e74-17dc-e592-2016041b28c1, 580.159.04, 345, 3201\n"
    "NVIDIA H200, 143771, 9.0, GPU-00000000-1111-2222-3333-444444444444, 580.159.04, 1980, 3201\n"
)
NVML_FAILS = """
class NVMLError(Exception):
    pass
def nvmlInit():
    raise NVMLError("NVML Shared Library Not Found")
"""
NVML_ONE_H100 = """
NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
class _Memory:
    total = 85520809984
def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlSystemGetDriverVersion(): return "550.54.15"
def nvmlSystemGetCudaDriverVersion(): return 12040
def nvmlDeviceGetCount(): return 1
def nvmlDeviceGetHandleByIndex(index): return index
def nvmlDeviceGetName(handle): return b"NVIDIA H100 80GB HBM3"
def nvmlDeviceGetMemoryInfo(handle): return _Memory()
def nvmlDeviceGetCudaComputeCapability(handle): return (9, 0)
def nvmlDeviceGetUUID(handle): return "GPU-h100"
def nvmlDeviceGetClockInfo(handle, which): return {1: %d, 2: 2619}[which]
"""


@pytest.fixture
def machine(tmp_path, kidx_process):
    """capture(nvidia_smi=…, nvml=…): kidx env capture on a machine whose tools are fakes.

    nvidia_smi: the text a fake nvidia-smi prints (None: no nvidia-smi on PATH; an int:
    it fails with that exit status; "HANG": it never answers). nvml: source of a fake
    pynvml module (None: NVML fails to load, as on a machine without the driver). torch:
    source of a fake torch package, installed as torch 2.5.0 (None: no torch)."""

    def capture(*args: str, nvidia_smi: str | bytes | int | None = None, nvml: str = NVML_FAILS,
                torch: str | None = None, env: dict | None = None):
        bin_dir, lib_dir = tmp_path / "bin", tmp_path / "lib"
        bin_dir.mkdir(exist_ok=True)
        lib_dir.mkdir(exist_ok=True)
        (lib_dir / "pynvml.py").write_text(nvml)
        smi = bin_dir / "nvidia-smi"
        if smi.exists():
            smi.unlink()
        if nvidia_smi is not None:
            if isinstance(nvidia_smi, int):
                body = f"echo 'NVIDIA-SMI has failed because it could not communicate with the driver'; exit {nvidia_smi}"
            elif nvidia_smi == "HANG":
                body = "exec sleep 600"
            else:
                text = nvidia_smi if isinstance(nvidia_smi, bytes) else nvidia_smi.encode()
                (tmp_path / "smi.txt").write_bytes(text)
                body = f"cat {tmp_path / 'smi.txt'}"
            smi.write_text(f"#!/bin/sh\n{body}\n")
            smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
        if torch is not None:
            (lib_dir / "torch").mkdir(exist_ok=True)
            (lib_dir / "torch" / "__init__.py").write_text(torch)
            (lib_dir / "torch-2.5.0.dist-info").mkdir(exist_ok=True)
            (lib_dir / "torch-2.5.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\n"
                                                                        "Version: 2.5.0\n")
        variables = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "PYTHONPATH": str(lib_dir), **(env or {})}
        return kidx_process("env", "capture", *args, env=variables)

    return capture


def test_without_a_gpu_gives_a_cpu_environment_and_says_why(machine):
    code, out, err = machine("-o", "json")
    assert code == 0, err
    body = json.loads(out)
    hardware = body["spec"]["hardware"]
    assert "count" not in hardware and "host" not in body["spec"]
    assert hardware["product"] and hardware["vendor"]
    assert body["metadata"]["name"].startswith("cpu-")
    assert body["spec"]["software"]["python"] == ".".join(map(str, sys.version_info[:3]))
    lines = err.splitlines()
    assert "note: NVML: NVML Shared Library Not Found" in lines
    assert "note: nvidia-smi: not found on PATH" in lines
    assert lines[-1] == "note: no GPU found: this is a CPU environment"
    assert "Traceback" not in err
    notes = body["metadata"]["annotations"]["kernelindex.dev/capture-notes"]
    assert "nvidia-smi: not found on PATH" in notes and "no GPU found" in notes


def test_a_failing_nvidia_smi_is_reported_not_raised(machine):
    code, out, err = machine(nvidia_smi=9)
    assert code == 0
    assert ("note: nvidia-smi: exit 9 (NVIDIA-SMI has failed because it could not communicate with the driver)"
            in err.splitlines())
    assert "no GPU found" in err and "Traceback" not in err


def test_gpus_from_nvidia_smi(machine):
    code, out, err = machine("-o", "json", nvidia_smi=SMI_TWO_H200)
    assert code == 0, err
    body = json.loads(out)
    assert body["spec"]["hardware"] == {
        "vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90", "count": 2,
        "memoryBytes": 143771 * 1048576,
    }
    assert body["spec"]["software"]["driver"] == "580.159.04"
    annotations = body["metadata"]["annotations"]
    assert annotations["kernelindex.dev/gpu-source"] == "nvidia-smi"
    assert annotations["kernelindex.dev/gpu-uuids"] == (
        "GPU-b2d8e352-3e74-17dc-e592-2016041b28c1, GPU-00000000-1111-2222-3333-444444444444")
    assert annotations["kernelindex.dev/clocks-at-capture"] == (
        "0: sm 345 MHz, memory 3201 MHz; 1: sm 1980 MHz, memory 3201 MHz")
    assert body["metadata"]["name"] == "nvidia-h200-2x-" + digest_of(body).split(":")[1][:10]
    assert body["metadata"]["title"].startswith("2 × NVIDIA H200")
    assert "no GPU found" not in err


def test_nvml_comes_first_and_gives_driver_and_cuda(machine):
    code, out, err = machine("-o", "json", nvidia_smi=SMI_TWO_H200, nvml=NVML_ONE_H100 % 1980)
    assert code == 0, err
    body = json.loads(out)
    assert body["spec"]["hardware"] == {
        "vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "80GB HBM3", "architecture": "sm_90",
        "count": 1, "memoryBytes": 85520809984,
    }
    assert body["spec"]["software"]["driver"] == "550.54.15"
    assert body["spec"]["software"]["cuda-driver"] == "12.4"
    assert body["metadata"]["annotations"]["kernelindex.dev/gpu-source"] == "nvml"


def test_clocks_uuids_and_host_are_not_identity(machine, tmp_path):
    """Two captures of one kind of machine that differ only in clocks (and capture time)
    share one digest and one name: those are annotations."""
    first = json.loads(machine("-o", "json", nvml=NVML_ONE_H100 % 345).out)
    second = json.loads(machine("-o", "json", nvml=NVML_ONE_H100 % 1980).out)
    assert first["metadata"]["annotations"]["kernelindex.dev/clocks-at-capture"] != (
        second["metadata"]["annotations"]["kernelindex.dev/clocks-at-capture"])
    assert digest_of(first) == digest_of(second)
    assert first["metadata"]["name"] == second["metadata"]["name"]
    assert set(first["spec"]) == {"hardware", "host", "software"}


def test_yaml_by_default_and_apply(machine, kidx_process):
    code, out, err = machine(nvidia_smi=SMI_TWO_H200)
    assert code == 0 and out.startswith("apiVersion: kernelindex.dev/v1alpha1\nkind: ExecutionEnvironment\n")
    name = next(line.split(": ")[1] for line in out.splitlines() if line.startswith("  name: "))
    code, out, err = machine("--apply", nvidia_smi=SMI_TWO_H200)
    assert (code, out) == (0, f"executionenvironment.kernelindex.dev/{name} created\n")
    code, out, err = kidx_process("get", "env", name, "-o", "jsonpath={.spec.hardware.count}")
    assert (code, out) == (0, "2")


def test_apply_dry_run_and_name(machine, kidx_process):
    code, out, err = machine("--apply", "--dry-run", "--name", "lab-h200", nvidia_smi=SMI_TWO_H200)
    assert (code, out) == (0, "executionenvironment.kernelindex.dev/lab-h200 created (dry run)\n")
    assert kidx_process("get", "envs", "-o", "name").out == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (("-o", "wide"), 'error: unable to match a printer suitable for the output format "wide", allowed formats are: json,name,yaml\n'),
        (("-o", "name"), "error: -o name needs --apply\n"),
        (("--dry-run",), "error: --dry-run needs --apply\n"),
    ],
)
def test_bad_options(machine, args, message):
    code, out, err = machine(*args)
    assert (code, out) == (1, "")
    assert err.endswith(message)


# --- probes that hang or print garbage --------------------------------------------------

NVML_HANGS = """
import time
def nvmlInit():
    time.sleep(600)
"""
TORCH_HANGS = """
import time
class cuda:
    @staticmethod
    def is_available():
        time.sleep(600)
"""
QUICK = {"KIDX_PROBE_TIMEOUT": "1"}


def _timed(capture, *args, **kwargs):
    started = time.monotonic()
    result = capture(*args, **kwargs)
    return result, time.monotonic() - started


def test_a_hanging_nvml_is_abandoned_with_a_warning(machine):
    (code, out, err), seconds = _timed(machine, "-o", "json", nvml=NVML_HANGS, nvidia_smi=SMI_TWO_H200, env=QUICK)
    assert code == 0, err
    assert seconds < 20  # one second for the probe, the rest is start-up on a loaded machine
    assert ("Warning: NVML: no answer within 1 s (nvmlInit or a device query hung); skipped (set "
            "KIDX_PROBE_TIMEOUT to wait longer)") in err.splitlines()
    body = json.loads(out)
    assert body["metadata"]["annotations"]["kernelindex.dev/gpu-source"] == "nvidia-smi"  # the next probe answered
    assert "NVML: no answer within 1 s" in body["metadata"]["annotations"]["kernelindex.dev/capture-notes"]


def test_a_hanging_torch_is_abandoned_with_a_warning(machine):
    (code, out, err), seconds = _timed(machine, "-o", "json", torch=TORCH_HANGS, env=QUICK)
    assert code == 0, err
    assert seconds < 20
    assert ("Warning: torch: no answer within 1 s (torch.cuda.is_available() or a device query hung); skipped "
            "(set KIDX_PROBE_TIMEOUT to wait longer)") in err.splitlines()
    body = json.loads(out)
    assert body["spec"]["software"]["torch"] == "2.5.0"
    assert "count" not in body["spec"]["hardware"]  # no GPU was read: a CPU environment


def test_a_hanging_nvidia_smi_is_abandoned_with_a_warning(machine):
    (code, out, err), seconds = _timed(machine, "-o", "json", nvidia_smi="HANG", env=QUICK)
    assert code == 0, err
    assert seconds < 20
    assert ("Warning: nvidia-smi: no answer within 1 s (nvidia-smi hung); skipped (set KIDX_PROBE_TIMEOUT to wait "
            "longer)") in err.splitlines()


def test_torch_that_answers_gives_its_gpus(machine):
    torch = """
class _Properties:
    name, total_memory, major, minor = "NVIDIA H100 80GB HBM3", 85520809984, 9, 0
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def device_count(): return 1
    @staticmethod
    def get_device_properties(index): return _Properties()
class version:
    cuda = "12.4"
"""
    code, out, err = machine("-o", "json", torch=torch)
    assert code == 0, err
    body = json.loads(out)
    assert body["spec"]["hardware"]["product"] == "NVIDIA H100" and body["spec"]["hardware"]["count"] == 1
    assert body["spec"]["software"]["cuda"] == "12.4"
    assert body["metadata"]["annotations"]["kernelindex.dev/gpu-source"] == "torch"


def test_nvidia_smi_output_that_is_not_utf8_is_read(machine):
    garbage = b"NVIDIA H200\xff\xfe, 143771, 9.0, GPU-1, 580.159.04, 345, 3201\n"
    code, out, err = machine("-o", "json", nvidia_smi=garbage)
    assert code == 0, err
    body = json.loads(out)
    assert body["metadata"]["annotations"]["kernelindex.dev/gpus"] == "0: NVIDIA H200\ufffd\ufffd"
    assert body["spec"]["hardware"]["memoryBytes"] == 143771 * 1048576


def test_superscript_digits_from_nvidia_smi_are_not_numbers(machine):
    code, out, err = machine("-o", "json", nvidia_smi="NVIDIA H200, 14377\u00b9, 9.0, GPU-1, 580.159.04, \u00b2, 3201\n")
    assert code == 0, err
    body = json.loads(out)
    assert "memoryBytes" not in body["spec"]["hardware"]
    assert body["metadata"]["annotations"]["kernelindex.dev/clocks-at-capture"] == "0: sm None MHz, memory 3201 MHz"


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf"])
def test_a_bad_probe_timeout_is_a_usage_error(machine, value):
    code, out, err = machine(env={"KIDX_PROBE_TIMEOUT": value})
    assert (code, out) == (1, "")
    assert err == f'error: KIDX_PROBE_TIMEOUT="{value}" is not a number of seconds greater than 0\n'

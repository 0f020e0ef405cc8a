"""The GPUs' state as kidx record keeps it: UUID, default clock and the clock event
(throttle) reasons beside the clocks, from NVML or nvidia-smi, and from drivers that know
the reasons by their older name or not at all (a stand-in nvidia-smi on PATH, a stand-in
NVML module)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kidx.capture import gpu_state
from kidx.capture.gpu_state import GpuState, gpu_states, reason_text


def smi(folder: Path, monkeypatch, script: str) -> Path:
    folder.mkdir()
    asked = folder / "asked.txt"
    program = folder / "nvidia-smi"
    program.write_text(f"#!/bin/sh\necho \"$*\" >> {asked}\n{script}")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder) + os.pathsep + os.environ["PATH"])
    monkeypatch.setitem(sys.modules, "pynvml", None)  # NVML is not there: nvidia-smi is asked
    return asked


def test_nvidia_smi_gives_uuid_default_clock_and_reasons(tmp_path, monkeypatch):
    smi(tmp_path / "bin", monkeypatch, "echo '0, GPU-aaa, 1410, 1980, 2619, 250.5, 61, 1755, 0x0000000000000024'\n"
                                       "echo '1, GPU-bbb, 1980, 1980, 2619, 90.1, 40, 1755, 0x0000000000000000'\n")
    assert gpu_states() == [GpuState(0, 1410, 1980, 2619, 250.5, 61, "GPU-aaa", 1755, 0x24),
                            GpuState(1, 1980, 1980, 2619, 90.1, 40, "GPU-bbb", 1755, 0)]
    assert gpu_states()[0].text() == ("0: sm 1410 MHz (max 1980), memory 2619 MHz, 250.5 W, 61 C, clocks held by "
                                      "sw-power-cap+sw-thermal-slowdown")
    assert gpu_states()[1].reference_sm_mhz == 1755


def test_a_driver_that_knows_only_throttle_reasons_is_asked_by_that_name(tmp_path, monkeypatch):
    asked = smi(tmp_path / "bin", monkeypatch,
                'case "$*" in *clocks_event_reasons*) echo "Field is not a valid field to query." ; exit 2 ;; '
                "*clocks_throttle_reasons*) echo '0, GPU-aaa, 345, 1980, 2619, 70, 33, [N/A], 0x0000000000000001' ;; "
                "esac\n")
    (state,) = gpu_states()
    assert state == GpuState(0, 345, 1980, 2619, 70.0, 33, "GPU-aaa", None, 1)
    assert state.text().endswith(", clocks held by gpu-idle") and state.reference_sm_mhz == 1980
    assert [line.split()[0].split(",")[-1] for line in asked.read_text().splitlines()] == [
        "clocks_event_reasons.active", "clocks_throttle_reasons.active"]


def test_an_old_driver_gives_the_basic_state(tmp_path, monkeypatch):
    smi(tmp_path / "bin", monkeypatch, 'case "$*" in *uuid*) exit 2 ;; esac\necho "0, 1400, 1980, 3201, 350.25, 45"\n')
    assert gpu_states() == [GpuState(0, 1400, 1980, 3201, 350.25, 45)]
    assert gpu_states()[0].text() == "0: sm 1400 MHz (max 1980), memory 3201 MHz, 350.25 W, 45 C"


def test_nvml_gives_the_same(monkeypatch):
    class Nvml:
        NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

        nvmlInit = nvmlShutdown = staticmethod(lambda: None)  # noqa: N815 - NVML's names
        nvmlDeviceGetCount = staticmethod(lambda: 1)  # noqa: N815
        nvmlDeviceGetHandleByIndex = staticmethod(lambda index: index)  # noqa: N815
        nvmlDeviceGetPowerUsage = staticmethod(lambda handle: 300500)  # noqa: N815
        nvmlDeviceGetUUID = staticmethod(lambda handle: b"GPU-ccc")  # noqa: N815
        nvmlDeviceGetClockInfo = staticmethod(lambda handle, clock: 1600 if clock == 1 else 2619)  # noqa: N815
        nvmlDeviceGetMaxClockInfo = staticmethod(lambda handle, clock: 1980)  # noqa: N815
        nvmlDeviceGetTemperature = staticmethod(lambda handle, sensor: 70)  # noqa: N815
        nvmlDeviceGetDefaultApplicationsClock = staticmethod(lambda handle, clock: 1980)  # noqa: N815
        nvmlDeviceGetCurrentClocksEventReasons = staticmethod(lambda handle: 0x8 | 0x400)  # noqa: N815

    monkeypatch.setitem(sys.modules, "pynvml", Nvml)
    (state,) = gpu_states()
    assert state == GpuState(0, 1600, 1980, 2619, 300.5, 70, "GPU-ccc", 1980, 0x408)
    assert state.text() == "0: sm 1600 MHz (max 1980), memory 2619 MHz, 300.5 W, 70 C, clocks held by hw-slowdown+0x400"


@pytest.mark.parametrize(("mask", "text"), [(0, "none"), (0x1, "gpu-idle"), (0x84, "sw-power-cap+hw-power-brake-slowdown")])
def test_reason_names(mask, text):
    assert reason_text(mask) == text


def test_without_nvml_or_nvidia_smi_there_is_no_state(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(gpu_state.shutil, "which", lambda name: None)
    assert gpu_states() == []

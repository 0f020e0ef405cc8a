"""The state of each GPU at one moment: SM and memory clocks (and the SM's maximum),
power draw and temperature, read through NVML where ``nvidia-ml-py`` is installed, else
``nvidia-smi``. kidx record reads it before and after each process it runs: information
about the run (annotations), never part of any identity."""

from __future__ import annotations

import shutil

from kidx.capture.probes import _known, _run, _whole
from kidx.records import NamedTuple

STATE_TIMEOUT_S = 10.0
_SMI_FIELDS = "index,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu"


class GpuState(NamedTuple):
    gpu: int  # the GPU's index
    sm_mhz: int | None
    max_sm_mhz: int | None
    memory_mhz: int | None
    power_w: float | None
    temperature_c: int | None

    def text(self) -> str:
        parts = []
        if self.sm_mhz is not None:
            parts.append(f"sm {self.sm_mhz} MHz" + (f" (max {self.max_sm_mhz})" if self.max_sm_mhz else ""))
        if self.memory_mhz is not None:
            parts.append(f"memory {self.memory_mhz} MHz")
        if self.power_w is not None:
            parts.append(f"{self.power_w:g} W")
        if self.temperature_c is not None:
            parts.append(f"{self.temperature_c} C")
        return f"{self.gpu}: " + ", ".join(parts)


def gpu_states() -> list[GpuState]:
    """Each GPU's state now; empty when neither NVML nor nvidia-smi can say."""
    return _from_nvml() or _from_nvidia_smi()


def _from_nvml() -> list[GpuState]:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # not installed, no driver: nvidia-smi is asked instead
        return []
    try:
        states = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            power = _reading(pynvml.nvmlDeviceGetPowerUsage, handle)
            states.append(GpuState(index, _reading(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
                                   _reading(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM),
                                   _reading(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM),
                                   None if power is None else power / 1000,
                                   _reading(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU)))
        return states
    except Exception:
        return []
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _reading(call, *arguments) -> int | None:
    try:
        return int(call(*arguments))
    except Exception:  # a reading the GPU does not support is unknown
        return None


def _from_nvidia_smi() -> list[GpuState]:
    program = shutil.which("nvidia-smi")
    if program is None:
        return []
    try:
        done = _run([program, f"--query-gpu={_SMI_FIELDS}", "--format=csv,noheader,nounits"], STATE_TIMEOUT_S)
    except OSError:
        return []
    if done is None or done[0] != 0:
        return []
    states = []
    for line in done[1].decode("utf-8", "replace").splitlines():
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(_SMI_FIELDS.split(",")) or _whole(values[0]) is None:
            continue
        index, sm, max_sm, memory, power, temperature = values
        states.append(GpuState(int(index), _whole(sm), _whole(max_sm), _whole(memory), _watts(power),
                               _whole(temperature)))
    return states


def _watts(text: str) -> float | None:
    known = _known(text)
    try:
        return float(known) if known is not None else None
    except ValueError:
        return None

"""The state of each GPU at one moment: SM and memory clocks (the SM's maximum and default),
power draw, temperature and the reasons the driver holds the clocks where they are
(throttle reasons, which NVML now calls clock event reasons), with the GPU's UUID, read
through NVML where ``nvidia-ml-py`` is installed, else ``nvidia-smi``. kidx record reads
it before and after each process it runs (information about the run: annotations, never
part of any identity), and ``record --gpus`` reads from it which GPUs exist."""

from __future__ import annotations

import shutil

from kidx.capture.probes import _known, _run, _whole
from kidx.records import NamedTuple

STATE_TIMEOUT_S = 10.0
#: what older drivers answer for (no UUID, default clock or reasons): asked when the fuller query is refused
_SMI_BASIC_FIELDS = "index,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu"
#: the fuller queries, newest name of the reasons first (drivers before 535 know only the throttle name)
_SMI_FIELDS = tuple(f"index,uuid,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,"
                    f"clocks.default_applications.graphics,{reasons}"
                    for reasons in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"))

#: NVML's clock event (throttle) reason bits, by the name kidx writes
CLOCK_REASONS = (
    (0x1, "gpu-idle"), (0x2, "applications-clocks-setting"), (0x4, "sw-power-cap"), (0x8, "hw-slowdown"),
    (0x10, "sync-boost"), (0x20, "sw-thermal-slowdown"), (0x40, "hw-thermal-slowdown"),
    (0x80, "hw-power-brake-slowdown"), (0x100, "display-clock-setting"),
)


class GpuState(NamedTuple):
    gpu: int  # the GPU's index
    sm_mhz: int | None
    max_sm_mhz: int | None
    memory_mhz: int | None
    power_w: float | None
    temperature_c: int | None
    uuid: str | None = None
    default_sm_mhz: int | None = None  # the default applications clock of the SM
    reasons: int | None = None  # the active clock event (throttle) reasons, NVML's bit mask

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
        if self.reasons is not None:
            parts.append(f"clocks held by {reason_text(self.reasons)}")
        return f"{self.gpu}: " + ", ".join(parts)

    @property
    def reference_sm_mhz(self) -> int | None:
        """The SM clock a timed sample is held to: the default applications clock, else the maximum."""
        return self.default_sm_mhz or self.max_sm_mhz


def reason_text(mask: int) -> str:
    """The reasons of NVML's bit mask by name (``none`` for none; unknown bits in hex)."""
    names = [name for bit, name in CLOCK_REASONS if mask & bit]
    unknown = mask & ~sum(bit for bit, _ in CLOCK_REASONS)
    if unknown:
        names.append(f"0x{unknown:x}")
    return "+".join(names) or "none"


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
        reasons = (getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                   or getattr(pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None))
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            power = _reading(pynvml.nvmlDeviceGetPowerUsage, handle)
            uuid = _text_reading(pynvml.nvmlDeviceGetUUID, handle)
            states.append(GpuState(index, _reading(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
                                   _reading(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM),
                                   _reading(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM),
                                   None if power is None else power / 1000,
                                   _reading(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
                                   uuid,
                                   _reading(pynvml.nvmlDeviceGetDefaultApplicationsClock, handle,
                                            pynvml.NVML_CLOCK_SM),
                                   _reading(reasons, handle) if reasons is not None else None))
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


def _text_reading(call, *arguments) -> str | None:
    try:
        value = call(*arguments)
        return value.decode() if isinstance(value, bytes) else str(value)
    except Exception:
        return None


def _from_nvidia_smi() -> list[GpuState]:
    program = shutil.which("nvidia-smi")
    if program is None:
        return []
    for fields in (*_SMI_FIELDS, _SMI_BASIC_FIELDS):
        lines = _smi_lines(program, fields)
        if lines is None:
            return []
        states = [state for state in (_smi_state(line, fields) for line in lines) if state is not None]
        if states:
            return states
    return []


def _smi_lines(program: str, fields: str) -> list[str] | None:
    """nvidia-smi's answer to a query of ``fields``: [] when it refused the query (an older
    driver that knows a field by another name), None when it could not run."""
    try:
        done = _run([program, f"--query-gpu={fields}", "--format=csv,noheader,nounits"], STATE_TIMEOUT_S)
    except OSError:
        return None
    if done is None:
        return None
    return done[1].decode("utf-8", "replace").splitlines() if done[0] == 0 else []


def _smi_state(line: str, fields: str) -> GpuState | None:
    values = [value.strip() for value in line.split(",")]
    named = fields.split(",")
    if len(values) != len(named) or _whole(values[0]) is None:
        return None
    value = dict(zip(named, values, strict=True))
    reasons = value.get(named[-1]) if named[-1].endswith("reasons.active") else None
    return GpuState(int(value["index"]), _whole(value["clocks.sm"]), _whole(value["clocks.max.sm"]),
                    _whole(value["clocks.mem"]), _watts(value["power.draw"]), _whole(value["temperature.gpu"]),
                    _known(value["uuid"]) if "uuid" in value else None,
                    _whole(value.get("clocks.default_applications.graphics", "")),
                    _mask(reasons) if reasons is not None else None)


def _mask(text: str) -> int | None:
    try:
        return int(text, 16) if text.lower().startswith("0x") else None
    except ValueError:
        return None


def _watts(text: str) -> float | None:
    known = _known(text)
    try:
        return float(known) if known is not None else None
    except ValueError:
        return None

"""Measured achievable peaks of the first GPU, with torch: ``kidx env capture --measure-peaks``.

* memory bandwidth: a device-to-device copy of a buffer far larger than the L2 cache
  (``dst.copy_(src)``), counted as its bytes read plus its bytes written;
* FLOP/s: an n × n by n × n matrix product (2·n³ FLOPs) in fp32 (TF32 off, torch's
  default), tf32 (TF32 on), bf16 and fp16.

Each is timed with CUDA events around every call, after warm-up calls, and the median of
the timed calls is kept. The figures go into the environment's annotations
(kidx.speed_of_light.peaks names the keys), never its spec: they vary from run to run.
The measurement runs in a child Python that is stopped after TIMEOUT_S, so a GPU or
driver that hangs ends in an error rather than a hang.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

from kidx.errors import KidxError
from kidx.speed_of_light.peaks import MEASURED_AT, MEASURED_BANDWIDTH, MEASURED_FLOPS, MEASURED_METHOD

COPY_BYTES = 2 << 30  # 2 GiB, or an eighth of the free memory when that is less
MATMUL_SIZE = 8192
WARMUP = 3
REPETITIONS = 20
# the measurement runs in a child process, killed when it takes longer (a GPU that hangs)
TIMEOUT_S = 300
# figures beyond these are no GPU's (a broken torch or driver timing): refused, with a warning.
# Today's fastest reach about 8e12 B/s and 5e15 FLOP/s; the bounds leave a wide margin.
MAX_BANDWIDTH = 10**14  # bytes/s
MAX_FLOPS = 10**17  # FLOP/s


class PeakMeasurementError(KidxError):
    """The peaks cannot be measured on this machine (no torch, no CUDA device)."""


@dataclass
class MeasuredPeaks:
    bandwidth: int | None  # bytes/s; None when what was measured was refused
    flops: dict[str, int] = field(default_factory=dict)  # precision -> FLOP/s
    method: str = ""
    refused: list[str] = field(default_factory=list)  # figures outside physical bounds, said as warnings

    def annotations(self, now: datetime.datetime) -> dict[str, str]:
        if self.bandwidth is None and not self.flops:
            return {}
        shown = {MEASURED_BANDWIDTH: str(self.bandwidth)} if self.bandwidth is not None else {}
        shown.update({MEASURED_FLOPS + precision: str(value) for precision, value in self.flops.items()})
        shown[MEASURED_METHOD] = self.method
        shown[MEASURED_AT] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        return shown

    def summary(self) -> str:
        if self.bandwidth is None and not self.flops:
            return "measured peaks: none recorded"
        memory = f"memory {self.bandwidth / 1e9:.0f} GB/s" if self.bandwidth is not None else "memory not recorded"
        flops = ", ".join(f"{precision} {value / 1e12:.1f}" for precision, value in self.flops.items()) or "none"
        return f"measured peaks: {memory}; matmul TFLOP/s: {flops}"


def _within(value: object, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= limit


def checked_peaks(answer: object) -> MeasuredPeaks:
    """The child's answer as MeasuredPeaks: a figure outside physical bounds (zero,
    negative, beyond any GPU) is left out and said in ``refused``; an answer of another
    shape is an error."""
    peaks = answer.get("peaks") if isinstance(answer, dict) else None
    flops = peaks.get("flops") if isinstance(peaks, dict) else None
    if not isinstance(peaks, dict) or not isinstance(flops, dict) or not isinstance(peaks.get("method"), str):
        raise PeakMeasurementError("--measure-peaks failed: the measurement's answer is not one kidx wrote")
    refused = []
    bandwidth = peaks.get("bandwidth")
    if not _within(bandwidth, MAX_BANDWIDTH):
        refused.append(f"--measure-peaks: the memory bandwidth measured, {bandwidth!r} bytes/s, is outside "
                       f"physical bounds (above 0, at most {MAX_BANDWIDTH:.0e}): not recorded (a broken torch or "
                       "driver timing?)")
        bandwidth = None
    kept = {}
    for precision, value in flops.items():
        if isinstance(precision, str) and _within(value, MAX_FLOPS):
            kept[precision] = value
        else:
            refused.append(f"--measure-peaks: the {precision} matmul FLOP/s measured, {value!r}, is outside "
                           f"physical bounds (above 0, at most {MAX_FLOPS:.0e}): not recorded (a broken torch or "
                           "driver timing?)")
    return MeasuredPeaks(bandwidth, kept, peaks["method"], refused)


def measure_peaks(timeout: float = TIMEOUT_S) -> MeasuredPeaks:
    """Measure in a child Python, so a hung GPU or driver call ends in an error, not a hang."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), package_root]))
    code = "from kidx.speed_of_light.measure import child_main; child_main()"
    try:
        child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
    except OSError as exc:
        raise PeakMeasurementError(f"--measure-peaks: could not start the measurement ({exc})") from exc
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        try:  # a process stuck in a driver call may not die at once: not waited for long
            child.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        raise PeakMeasurementError(f"--measure-peaks: no answer within {timeout:g} s (the GPU or its driver hung); "
                                   "nothing was measured") from None
    try:
        answer = json.loads(out)
    except ValueError:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {child.returncode}"]
        raise PeakMeasurementError(f"--measure-peaks failed: {last[0]}") from None
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        raise PeakMeasurementError(answer["error"])
    return checked_peaks(answer)


def child_main() -> None:
    """The child's side of ``measure_peaks``: measure, print the peaks or the error as JSON
    on its standard output, which carries nothing else: what torch, a driver or a library
    prints there goes to standard error instead."""
    answer_file = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    try:
        answer: dict = {"peaks": dataclasses.asdict(_measure_here())}
    except PeakMeasurementError as exc:
        answer = {"error": str(exc)}
    sys.stdout.flush()
    answer_file.write(json.dumps(answer))
    answer_file.close()


def _measure_here() -> MeasuredPeaks:
    try:
        import torch
    except ImportError as exc:
        raise PeakMeasurementError(
            f"--measure-peaks needs torch with a CUDA device: torch cannot be imported ({exc})") from exc
    try:
        if not torch.cuda.is_available():
            raise PeakMeasurementError("--measure-peaks needs a CUDA device: torch.cuda.is_available() is False")
        return _measure(torch)
    except PeakMeasurementError:
        raise
    except Exception as exc:  # an out-of-memory error, a driver failure: said, never a traceback
        raise PeakMeasurementError(f"--measure-peaks failed: {type(exc).__name__}: {exc}") from exc


def _measure(torch) -> MeasuredPeaks:
    device = "cuda:0"
    free, _ = torch.cuda.mem_get_info(0)
    size = min(COPY_BYTES, free // 8) // 4096 * 4096
    buffers = [torch.empty(size, dtype=torch.uint8, device=device) for _ in range(2)]
    buffers[0].fill_(1)
    seconds = _median_seconds(torch, lambda: buffers[1].copy_(buffers[0]))
    bandwidth = round(2 * size / seconds)
    buffers.clear()  # free them before the matrices are made
    flops: dict[str, int] = {}
    n = MATMUL_SIZE
    matmul = torch.backends.cuda.matmul
    was = matmul.allow_tf32
    try:
        for precision, dtype, tf32 in (
            ("fp32", torch.float32, False), ("tf32", torch.float32, True),
            ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
        ):
            matmul.allow_tf32 = tf32
            a = torch.randn(n, n, dtype=dtype, device=device)
            b = torch.randn(n, n, dtype=dtype, device=device)
            out = torch.empty(n, n, dtype=dtype, device=device)
            seconds = _median_seconds(torch, lambda a=a, b=b, out=out: torch.matmul(a, b, out=out))
            flops[precision] = round(2 * n**3 / seconds)
            del a, b, out
    finally:
        matmul.allow_tf32 = was
    name = torch.cuda.get_device_name(0)
    method = (
        f"torch {torch.__version__} on GPU 0 ({name}): device-to-device copy of {size} bytes, "
        f"read + write counted; matmul {n}x{n}x{n}, 2*n^3 FLOPs, per precision (fp32 with TF32 off); "
        f"each the median of {REPETITIONS} calls timed with CUDA events after {WARMUP} warm-up calls"
    )
    return MeasuredPeaks(bandwidth, flops, method)


def _median_seconds(torch, call) -> float:
    for _ in range(WARMUP):
        call()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(REPETITIONS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in pairs) / 1000  # ms -> s

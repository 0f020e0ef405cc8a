"""What this GPU reached: a device-to-device copy (bytes read + written over time) and an
8192^3 bf16 matrix product on random data (2*n^3 FLOP over time); mean of 10 timed
repetitions after 3 warm-ups, CUDA events. Prints one JSON object."""
import json
import torch

def timed(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps / 1e3

n = 1 << 30  # 1 Gi elements of fp32: 4 GiB each way
src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
dst = torch.empty_like(src)
copy_s = timed(lambda: dst.copy_(src))
del src, dst
m = 8192
a = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
b = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
mm_s = timed(lambda: a @ b)
a32, b32 = a.float(), b.float()
torch.backends.cuda.matmul.allow_tf32 = False
fp32_s = timed(lambda: a32 @ b32, reps=3, warm=1)
print(json.dumps({
    "gpu": torch.cuda.get_device_name(0),
    "copy": {"bytes_each_way": n * 4, "seconds": copy_s, "bytes_per_second": 2 * n * 4 / copy_s},
    "matmul_bf16": {"n": m, "seconds": mm_s, "flop_per_second": 2 * m**3 / mm_s},
    "matmul_fp32": {"n": m, "seconds": fp32_s, "flop_per_second": 2 * m**3 / fp32_s},
}, indent=2))

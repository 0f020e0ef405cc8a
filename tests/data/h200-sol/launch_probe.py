"""Why NVBench (cold, sync=True) and triton.testing.do_bench disagree on Liger's kernels:
time each forward three ways, with CUDA events, L2 flushed before each call:
  idle:   synchronize, record start, call, record end, synchronize (the GPU waits for the host
          to enqueue the kernel: the host's launch time is inside the interval), like NVBench's
          cold measurement without its blocking kernel;
  queued: flush and call enqueued back to back with no synchronize (the GPU is still busy
          flushing while the host enqueues), like do_bench;
  host:   the host time of the call alone (perf_counter around it, no synchronize)."""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.getcwd())
import benchmark_llama4_rope as rope
import benchmark_rms_norm as rms
import torch
from utils import SingleBenchmarkRunInput

REPS = 200
cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")


def measure(fn):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    idle, queued, host = [], [], []
    for _ in range(REPS):
        cache.zero_()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        t0 = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t0)
        e.record()
        torch.cuda.synchronize()
        idle.append(s.elapsed_time(e) / 1000)
    pairs = []
    for _ in range(REPS):
        cache.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        pairs.append((s, e))
    torch.cuda.synchronize()
    queued = [s.elapsed_time(e) / 1000 for s, e in pairs]
    return {k: statistics.median(v) for k, v in (("idle", idle), ("queued", queued), ("host", host))}


results = {}
for provider in ("liger", "huggingface"):
    x, layer = rms.setup_rms_norm(SingleBenchmarkRunInput(
        x=32768, kernel_provider=provider, kernel_operation_mode="forward",
        extra_benchmark_config={"hidden_size": 8192, "dtype": torch.bfloat16, "eps": 1e-6}))
    results[f"rms_norm/{provider}"] = measure(lambda: layer(x))
    q, forward = rope.setup_llama4_rope(SingleBenchmarkRunInput(
        x=16384, kernel_provider=provider, kernel_operation_mode="forward",
        extra_benchmark_config={"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8,
                                "dtype": torch.bfloat16}))
    results[f"llama4_rope/{provider}"] = measure(lambda: forward(None))
print(json.dumps(results, indent=2))

"""A stand-in for one of Liger-Kernel's benchmark scripts, for the stand-in GPU
(fake_gpu/README.md): it times a forward call (two kernels a graph can capture) and a
backward call (which a graph cannot capture) with triton.testing.do_bench, as Liger's
utils do, and appends their rows to ../data/all_benchmark_data.csv (or
all_benchmark_data_<LIGER_BENCH_TARGET>.csv), in Liger's columns.

usage: python liger_stand_in.py [--fail-after N] [--no-do-bench]

Each process takes the next number (``runs-so-far/N``, made atomically) for its rows'
timestamps, and writes the GPU it was shown (``CUDA_VISIBLE_DEVICES``) to ``gpus-seen.txt``.
"""
import csv
import os
import sys
import time

import torch
import triton

HEADER = ["kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "metric_unit", "x_name",
          "x_label", "x_value", "y_value_50", "y_value_20", "y_value_80", "extra_benchmark_config_str", "gpu_name",
          "timestamp", "liger_version"]
CONFIG = '{"hidden_size": 4096, "dtype": "torch.bfloat16", "eps": 1e-06}'

here = os.path.dirname(os.path.abspath(__file__))
counter = os.path.join(here, "runs-so-far")
os.makedirs(counter, exist_ok=True)
runs = 1
while True:  # this process's number: the first free one, taken atomically (processes may run at once)
    try:
        os.close(os.open(os.path.join(counter, str(runs)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        break
    except FileExistsError:
        runs += 1
if "--fail-after" in sys.argv and runs > int(sys.argv[sys.argv.index("--fail-after") + 1]):
    sys.exit("the stand-in fails, as asked")


def forward():
    torch.fake_kernel(0.002)
    torch.fake_kernel(0.003)


def backward():
    torch.fake_kernel(0.010)
    torch.fake_uncapturable()


rows = []
for mode, call in (("forward", forward), ("backward", backward)):
    if "--no-do-bench" in sys.argv:
        median, p20, p80 = 0.5, 0.4, 0.6
    else:
        median, p20, p80 = triton.testing.do_bench(call, grad_to_none=None, rep=10, quantiles=[0.5, 0.2, 0.8])
    rows.append(["rms_norm", "liger", mode, "speed", "ms", "T", "Sequence length", 1024, median, p20, p80, CONFIG,
                 "NVIDIA H200", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1_780_000_000 + runs)), "0.8.2"])
target = os.environ.get("LIGER_BENCH_TARGET", "").strip().lower()
path = os.path.join(here, "..", "data", f"all_benchmark_data_{target}.csv" if target else "all_benchmark_data.csv")
new = not os.path.exists(path)
with open(path, "a", newline="") as handle:
    writer = csv.writer(handle)
    if new:
        writer.writerow(HEADER)
    writer.writerows(rows)
with open(os.path.join(here, "gpus-seen.txt"), "a") as handle:
    handle.write(f"{runs} {os.environ.get('CUDA_VISIBLE_DEVICES', '-')}\n")
print(f"the stand-in wrote {len(rows)} rows to {os.path.basename(path)}")

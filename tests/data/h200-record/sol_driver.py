"""Liger-Kernel's harness for one kernel at the large shape of ../h200-aa/ only: speed
(forward, backward, full) of providers liger and huggingface, written by Liger's own
utils to ../data/all_benchmark_data.csv (relative to the scripts folder, the working
directory).

usage: python3 sol_driver.py rms_norm|llama4_rope
"""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch
from utils import build_speed_bench_fn, run_benchmarks

KERNEL = sys.argv[1]
if KERNEL == "rms_norm":
    import benchmark_rms_norm as script
    setup, x_label, x_values = script.setup_rms_norm, "Sequence length", [32768]
    config = {"hidden_size": 8192, "dtype": torch.bfloat16, "eps": 1e-6}
elif KERNEL == "llama4_rope":
    import benchmark_llama4_rope as script
    setup, x_label, x_values = script.setup_llama4_rope, "sequence length", [16384]
    config = {"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": torch.bfloat16}
else:
    raise SystemExit(f"unknown kernel {KERNEL}")

run_benchmarks(
    bench_test_fn=build_speed_bench_fn(setup), kernel_name=KERNEL, metric_name="speed", metric_unit="ms",
    x_name="T", x_label=x_label, x_values=x_values, kernel_providers=["liger", "huggingface"],
    kernel_operation_modes=["forward", "backward", "full"], extra_benchmark_configs=[config], overwrite=False,
)

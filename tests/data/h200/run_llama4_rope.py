"""Liger's llama4_rope harness at the seed's workload: hidden 8192, 32 q heads, 8 kv heads,
bf16, sequence length 1024..16384, providers liger and huggingface; speed (forward, backward,
full) and memory (full), written by Liger's own utils to ../data/all_benchmark_data.csv."""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import torch

import benchmark_llama4_rope as script
from utils import build_memory_bench_fn, build_speed_bench_fn, run_benchmarks

config = {"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": torch.bfloat16}
common = dict(
    kernel_name="llama4_rope", x_name="T", x_label="sequence length",
    x_values=[2**i for i in range(10, 15)], kernel_providers=["liger", "huggingface"],
    extra_benchmark_configs=[config], overwrite=False,
)
run_benchmarks(bench_test_fn=build_speed_bench_fn(script.setup_llama4_rope),
               kernel_operation_modes=["forward", "backward", "full"], metric_name="speed", metric_unit="ms", **common)
run_benchmarks(bench_test_fn=build_memory_bench_fn(script.setup_llama4_rope),
               kernel_operation_modes=["full"], metric_name="memory", metric_unit="MB", **common)

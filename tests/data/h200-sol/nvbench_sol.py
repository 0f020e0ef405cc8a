"""NVBench (cuda-bench) timing of Liger's RMSNorm and llama4 RoPE forward against Hugging
Face's at large shapes, with each state's global memory reads and writes declared from the
tensors' own sizes, so NVBench reports the bandwidth it saw.

RMSNorm: x of 32768 x 8192 bf16, weight 8192; reads x and weight, writes y (x's shape).
llama4 RoPE: hidden 8192, 32 query heads, 8 key/value heads (head_dim 256), sequence 16384,
bf16; reads q, k and freqs_cis, writes the rotated q and k (their shapes)."""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import benchmark_llama4_rope as rope
import benchmark_rms_norm as rms
import cuda.bench as bench
import torch
from utils import SingleBenchmarkRunInput

RMS_CONFIG = {"hidden_size": 8192, "dtype": torch.bfloat16, "eps": 1e-6}
ROPE_CONFIG = {"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": torch.bfloat16}


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def run_on_stream(state, fn):
    torch.cuda.synchronize()

    def launcher(launch):
        stream = torch.cuda.ExternalStream(launch.get_stream().addressof())
        with torch.cuda.stream(stream):
            fn()

    state.exec(launcher, sync=True)


@bench.register()
@bench.axis.int64("T", [32768])
@bench.axis.string("Provider", ["liger", "huggingface"])
def rms_norm_forward(state):
    x, layer = rms.setup_rms_norm(SingleBenchmarkRunInput(
        x=state.get_int64("T"), kernel_provider=state.get_string("Provider"),
        kernel_operation_mode="forward", extra_benchmark_config=RMS_CONFIG))
    state.add_global_memory_reads(nbytes(x) + nbytes(layer.weight), column_name="x+w")
    state.add_global_memory_writes(nbytes(x), column_name="y")
    run_on_stream(state, lambda: layer(x))


@bench.register()
@bench.axis.int64("T", [16384])
@bench.axis.string("Provider", ["liger", "huggingface"])
def llama4_rope_forward(state):
    run_input = SingleBenchmarkRunInput(
        x=state.get_int64("T"), kernel_provider=state.get_string("Provider"),
        kernel_operation_mode="forward", extra_benchmark_config=ROPE_CONFIG)
    # the harness's setup makes q, k and freqs_cis; recreate them the same way to size them
    torch.manual_seed(0)
    q, forward = rope.setup_llama4_rope(run_input)
    T, heads, head_dim = q.shape[1], q.shape[2], q.shape[3]
    kv_heads = ROPE_CONFIG["num_key_value_heads"]
    k_bytes = T * kv_heads * head_dim * q.element_size()
    freqs_bytes = T * (head_dim // 2) * 8  # complex64 per rotated pair
    state.add_global_memory_reads(nbytes(q) + k_bytes + freqs_bytes, column_name="q+k+freqs")
    state.add_global_memory_writes(nbytes(q) + k_bytes, column_name="q'+k'")
    run_on_stream(state, lambda: forward(None))


if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)

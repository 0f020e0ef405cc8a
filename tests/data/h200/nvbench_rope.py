"""NVBench (cuda-bench) timing of Liger's llama4 RoPE forward against Hugging Face's, at the
seed's shape (hidden 8192, 32 q heads, 8 kv heads, bf16), sequence lengths 4096 and 16384."""
import os
import sys

sys.path.insert(0, os.getcwd())  # Liger's scripts folder: the harness imports its siblings

import cuda.bench as bench
import torch

import benchmark_llama4_rope as script
from utils import SingleBenchmarkRunInput

CONFIG = {"hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "dtype": torch.bfloat16}


@bench.register()
@bench.axis.int64("Seq", [4096, 16384])
@bench.axis.string("Provider", ["liger", "huggingface"])
def llama4_rope_forward(state: bench.State) -> None:
    run_input = SingleBenchmarkRunInput(
        x=state.get_int64("Seq"), kernel_provider=state.get_string("Provider"),
        kernel_operation_mode="forward", extra_benchmark_config=CONFIG,
    )
    _, forward = script.setup_llama4_rope(run_input)
    torch.cuda.synchronize()

    def launcher(launch: bench.Launch) -> None:
        stream = torch.cuda.ExternalStream(launch.get_stream().addressof())
        with torch.cuda.stream(stream):
            forward(None)

    state.exec(launcher, sync=True)


if __name__ == "__main__":
    bench.run_all_benchmarks(sys.argv)

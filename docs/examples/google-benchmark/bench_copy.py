"""A small Google Benchmark program (the google-benchmark package): copying a buffer of
64 B, 512 B and 4 KiB (docs/commands/record.md)."""

import google_benchmark as benchmark


@benchmark.register
@benchmark.option.range_multiplier(8)
@benchmark.option.range(64, 4096)
def copy(state):
    data = bytes(state.range(0))
    while state:
        bytearray(data)
    state.bytes_processed = state.iterations * state.range(0)


if __name__ == "__main__":
    benchmark.main()

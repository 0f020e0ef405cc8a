"""A small Google Benchmark program (the google-benchmark package) for the importer's
tests: a benchmark with byte and item counters, one with arguments, a custom counter and
another time unit, one timed manually, a complexity fit, and one that fails."""

import google_benchmark as benchmark
from google_benchmark import Counter


@benchmark.register
def sum_list(state):
    data = list(range(1000))
    while state:
        sum(data)
    state.bytes_processed = state.iterations * 8000
    state.items_processed = state.iterations * 1000


@benchmark.register
@benchmark.option.unit(benchmark.kMicrosecond)
@benchmark.option.arg(100)
@benchmark.option.arg(1000)
def sort_list(state):
    n = state.range(0)
    data = list(range(n, 0, -1))
    while state:
        sorted(data)
    state.counters["elements"] = n
    state.counters["rate"] = Counter(n, Counter.kIsRate)


@benchmark.register
@benchmark.option.use_manual_time()
def manual(state):
    while state:
        state.set_iteration_time(0.000002)


@benchmark.register
@benchmark.option.range_multiplier(4)
@benchmark.option.range(8, 32)
@benchmark.option.complexity(benchmark.oN)
def linear(state):
    n = state.range(0)
    while state:
        sum(range(n))
    state.complexity_n = n


@benchmark.register
def broken(state):
    state.skip_with_error("no device")
    while state:
        pass


if __name__ == "__main__":
    benchmark.main()

"""The pytest-benchmark tests of the docs' sample project (docs/commands/import.md)."""

import pytest


def _sum_of_squares(n: int) -> int:
    return sum(i * i for i in range(n))


@pytest.mark.parametrize("n", [100, 1000])
def test_sum_of_squares(benchmark, n):
    assert benchmark(_sum_of_squares, n) == (n - 1) * n * (2 * n - 1) // 6


def test_sorted(benchmark):
    data = list(range(500, 0, -1))
    assert benchmark(sorted, data)[0] == 1

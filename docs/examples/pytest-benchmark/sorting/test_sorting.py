"""Two implementations of one operation, in one pytest-benchmark group, so that kidx compares
them (docs/commands/import.md, "What compares with what")."""

import pytest


def insertion_sort(values: list[int]) -> list[int]:
    result = list(values)
    for i in range(1, len(result)):
        item, j = result[i], i - 1
        while j >= 0 and result[j] > item:
            result[j + 1] = result[j]
            j -= 1
        result[j + 1] = item
    return result


@pytest.mark.benchmark(group="sort")
@pytest.mark.parametrize("n", [100, 400])
def test_builtin(benchmark, n):
    data = list(range(n, 0, -1))
    assert benchmark(sorted, data) == sorted(data)


@pytest.mark.benchmark(group="sort")
@pytest.mark.parametrize("n", [100, 400])
def test_insertion(benchmark, n):
    data = list(range(n, 0, -1))
    assert benchmark(insertion_sort, data) == sorted(data)

"""A stand-in for torch.profiler: a Chrome trace of record_function ranges and kernels."""
import contextlib
import json

from torch import timeline


def _us(ms):
    return round(ms * 1000, 6)


class ProfilerActivity:
    CPU = "cpu"
    CUDA = "cuda"


_ranges = []


@contextlib.contextmanager
def record_function(name):
    start = timeline.now
    yield
    _ranges.append((name, start, timeline.now - start))


class profile:  # noqa: N801 - torch's name
    def __init__(self, activities=None):
        self.events = []

    def __enter__(self):
        timeline.profiling = True
        timeline.kernels.clear()
        _ranges.clear()
        return self

    def __exit__(self, *exc):
        timeline.profiling = False
        # microseconds, rounded as a real trace's are: a range that ends as the next flush begins
        # must not seem to hold it through a rounding error of the virtual clock
        self.events = [{"ph": "X", "cat": "user_annotation", "name": name, "ts": _us(start), "dur": _us(length)}
                       for name, start, length in _ranges]
        self.events += [{"ph": "X", "cat": "kernel", "name": name, "ts": _us(start), "dur": _us(length)}
                        for start, length, name in timeline.kernels]

    def export_chrome_trace(self, path):
        with open(path, "w") as handle:
            json.dump({"traceEvents": self.events}, handle)

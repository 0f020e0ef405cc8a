"""A stand-in for the parts of PyTorch's CUDA API that kidx's timers use (see ../README.md)."""
import contextlib
import os

HOST_MS = 0.030  # host latency per launch outside a graph
FLUSH_MS = 0.040  # one L2 flush
GRAPH_LAUNCH_MS = 0.003  # what a graph's replay costs before its first kernel
int8 = "int8"
bfloat16 = "bfloat16"


class _Timeline:
    def __init__(self):
        self.now = 0.0  # ms
        self.capturing = None  # the graph being captured
        self.kernels = []  # (start ms, duration ms, name) while profiling
        self.profiling = False


timeline = _Timeline()


def _run_kernel(ms, name="fake_kernel"):
    if timeline.profiling:
        timeline.kernels.append((timeline.now, ms, name))
    timeline.now += ms


def _launch(ms, name, host_ms):
    if timeline.capturing is not None:
        timeline.capturing.kernels.append((ms, name))
        return
    timeline.now += host_ms
    _run_kernel(ms, name)


def fake_kernel(ms):
    """A kernel of ``ms`` milliseconds."""
    _launch(ms, "fake_kernel", HOST_MS)


def fake_uncapturable():
    if timeline.capturing is not None:
        raise RuntimeError("operation not permitted when stream is capturing")
    fake_kernel(0.002)


class _Buffer:
    def __init__(self, size):
        self.size = size

    def zero_(self):
        _launch(FLUSH_MS, "flush", 0.0)
        return self

    def add_(self, value):
        _launch(0.001, "add", 0.0)
        return self


def empty(size, dtype=None, device=None):
    return _Buffer(size)


def zeros(size, dtype=None, device=None):
    return _Buffer(size)


class _Properties:
    L2_cache_size = 60 * 2**20
    uuid = "0b8f2d4e-1111-2222-3333-444455556666"


class _Event:
    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = timeline.now

    def elapsed_time(self, other):
        return other.at - self.at


class _Stream:
    def wait_stream(self, other):
        pass


class _Graph:
    def __init__(self):
        self.kernels = []

    def replay(self):
        timeline.now += GRAPH_LAUNCH_MS
        for ms, name in self.kernels:
            _run_kernel(ms, name)


class cuda:  # noqa: N801 - the module's name
    Event = _Event
    Stream = _Stream
    CUDAGraph = _Graph
    available = not os.environ.get("FAKE_GPU_ABSENT")

    @staticmethod
    def is_available():
        return cuda.available

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def get_device_properties(device):
        return _Properties()

    @staticmethod
    def current_stream():
        return _Stream()

    @staticmethod
    @contextlib.contextmanager
    def stream(stream):
        yield

    @staticmethod
    @contextlib.contextmanager
    def graph(graph):
        timeline.capturing = graph
        try:
            yield
        finally:
            timeline.capturing = None

    clock_readings = 0  # how often clock_rate has been read

    @staticmethod
    def clock_rate():
        if os.environ.get("FAKE_GPU_SM_CLOCK") == "no-nvml":  # as PyTorch without NVML's binding
            raise ModuleNotFoundError("pynvml does not seem to be installed")
        readings = os.environ.get("FAKE_GPU_SM_CLOCK", "1980").split(",")  # read in turn, the last one repeated
        cuda.clock_readings += 1
        return int(readings[min(cuda.clock_readings, len(readings)) - 1])

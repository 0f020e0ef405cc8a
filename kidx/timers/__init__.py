"""GPU timers that measure the kernel, not the host: what ``kidx.measure`` and
``kidx record --timer`` time with (docs/measuring.md).

- ``settings``: the timers and cache states by name, a timer's settings, and the
  ``spec.measurement`` of the protocol they make (pure Python, no torch);
- ``summaries``: what ``triton.testing.do_bench`` returns, computed from samples the way
  it computes it (pure Python);
- ``profiler_trace``: the device time of each timed call, read from a profiler trace
  (pure Python);
- ``cuda``: the timers themselves, on PyTorch's CUDA API, imported only when one runs;
- ``do_bench``: a drop-in ``triton.testing.do_bench`` that times with a kidx timer, and
  ``site/sitecustomize.py``, which installs it in a harness's process.

This package imports nothing of kidx above ``kidx.errors``: the replacement do_bench runs
inside a harness's own Python, which may have none of kidx's dependencies.
"""

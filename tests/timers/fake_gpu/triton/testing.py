"""A stand-in for triton.testing: do_bench returns a fixed answer (see ../README.md)."""


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    fn()
    return [1.0, 0.9, 1.1] if quantiles is not None else 1.0

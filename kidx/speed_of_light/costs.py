"""Bytes moved and floating-point operations of one invocation of a workload.

Two sources, in this order (docs/speed-of-light.md):

* declared: the workload's optional ``spec.cost`` (``bytes``, ``flops``), set by whoever
  recorded it, for example from NVBench's declared global-memory reads and writes;
* formula: the arithmetic below, keyed by workload family and operation, from the
  workload's parameters and dtype as the Liger importer stores them and the pass the run
  timed (forward, backward, full, no-grad-forward).

A cost is the *compulsory* traffic of the operation: each input read once, each output
written once, plus the per-row statistics a forward pass saves for its backward pass
(rstd, mean, log-sum-exp) and the backward pass reads back. An implementation that moves
more (an unfused eager chain, a recomputation, a zero-filled gradient) shows as a lower
fraction of the peak; that is the point. FLOPs are counted only where they bound the
kernel (the matrix products of the MLP kernels); the element-wise and row-reduction
kernels do a few FLOPs per byte, far below any GPU's ridge point, so their FLOPs are not
recorded and their speed of light is their bandwidth.

A parameter set a formula does not know (another version of the harness, a model-config
sweep whose shapes live in the harness's registry) gives no cost: never a guess.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping

from kidx.records import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

LIGER_FAMILY = "liger_kernel_bench"
PASSES = ("forward", "backward", "full", "no-grad-forward")

# bytes per element of a workload dtype (spec.dtype, short form)
ELEMENT_BYTES = {
    "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e4m3fn": 1, "fp8_e5m2": 1,
}
FP32 = 4
INT64 = 8
COMPLEX64 = 8


class Cost(NamedTuple):
    """What one invocation costs. ``source`` is ``declared`` (the workload's spec.cost) or
    ``formula``; ``formula`` names the formula (``liger_kernel_bench/rms_norm/forward``)."""

    bytes: int | None
    flops: int | None
    source: str
    formula: str | None = None


class Traffic(NamedTuple):
    """The two passes of an operation, from which every timed pass is composed:
    forward = reads + writes + saved; no-grad-forward = reads + writes (nothing is saved
    without autograd); backward = backward_reads + backward_writes; full = forward +
    backward (one call, as Liger's harness times it)."""

    reads: int
    writes: int
    saved: int
    backward_reads: int
    backward_writes: int
    flops: int | None = None
    backward_flops: int | None = None

    def of(self, timed_pass: str) -> tuple[int, int | None] | None:
        forward = self.reads + self.writes + self.saved
        backward = self.backward_reads + self.backward_writes
        if timed_pass == "forward":
            return forward, self.flops
        if timed_pass == "no-grad-forward":
            return self.reads + self.writes, self.flops
        if timed_pass == "backward":
            return backward, self.backward_flops
        if timed_pass == "full":
            flops = None if self.flops is None or self.backward_flops is None else self.flops + self.backward_flops
            return forward + backward, flops
        return None


class _Shape:
    """The parameters a formula reads, checked: every name it needs present and an
    integer > 0, and no name outside the ones it knows (else None, never a guess)."""

    def __init__(self, parameters: Mapping[str, Any], needed: tuple[str, ...], ignored: tuple[str, ...]):
        self.ok = set(parameters) >= set(needed) and set(parameters) <= set(needed) | set(ignored)
        values = {name: parameters.get(name) for name in needed}
        self.values: dict[str, int] = {k: v for k, v in values.items() if type(v) is int and v > 0}
        if len(self.values) != len(needed):
            self.ok = False

    def __getitem__(self, name: str) -> int:
        return self.values[name]


def _first_shape(parameters, *alternatives: tuple[tuple[str, ...], tuple[str, ...]]) -> _Shape | None:
    for needed, ignored in alternatives:
        shape = _Shape(parameters, needed, ignored)
        if shape.ok:
            return shape
    return None


# --- the Liger kernels ---------------------------------------------------------------------
# Each function takes (parameters, element bytes) and gives Traffic, or None when the
# parameters are not a shape it knows. The derivations are in docs/speed-of-light.md.

# The token-length sweep of the harness records the sweep's ceiling as bsz/seq_len in the
# config; the setups of the norms, softmax and RoPE ignore it (their x is (T, hidden)).
_SWEEP_CEILING = ("batch", "seq_len")


def _rows_and_columns(parameters) -> tuple[int, int] | None:
    """(rows, columns) of a norm's input: M × hidden when hidden is swept (x H) or M × N
    (x N), else seq × hidden (x T, the token-length sweep)."""
    shape = _first_shape(
        parameters,
        (("M", "hidden"), ("eps",)),
        (("M", "N"), ("eps",)),
        (("seq", "hidden"), ("eps", *_SWEEP_CEILING)),
    )
    if shape is None:
        return None
    rows = shape["M"] if "M" in shape.values else shape["seq"]
    columns = shape["N"] if "N" in shape.values else shape["hidden"]
    return rows, columns


def _over_rows(traffic: Callable[[int, int, int], Traffic]) -> Callable[[Any, int], Traffic | None]:
    """A norm's function of (parameters, element bytes), from ``traffic(rows, columns,
    element bytes)`` of its input (``_rows_and_columns``)."""

    @functools.wraps(traffic)
    def norm(parameters, element: int) -> Traffic | None:
        found = _rows_and_columns(parameters)
        return None if found is None else traffic(*found, element)

    return norm


@_over_rows
def rms_norm(m: int, n: int, element: int) -> Traffic:
    """y = x / rms(x) · w over rows of x (M × N); w (N) stays fp32 in every version of the
    harness (the module is moved to the device, never cast)."""
    x = m * n * element
    return Traffic(
        reads=x + n * FP32, writes=x, saved=m * FP32,  # y; rstd
        backward_reads=2 * x + n * FP32 + m * FP32,  # dy, x, w, rstd
        backward_writes=x + n * FP32,  # dx, dw
    )


@_over_rows
def layer_norm(m: int, n: int, element: int) -> Traffic:
    """y = (x − mean) / std · w + b over rows of x (M × N); w and b in the dtype."""
    x = m * n * element
    return Traffic(
        reads=x + 2 * n * element, writes=x, saved=2 * m * FP32,  # y; mean, rstd
        backward_reads=2 * x + n * element + 2 * m * FP32,  # dy, x, w, mean, rstd
        backward_writes=x + 2 * n * element,  # dx, dw, db
    )


def softmax(parameters, element: int) -> Traffic | None:
    """y = softmax(x) along the last axis of x (M × N); the backward reads y, not x."""
    shape = _first_shape(parameters, (("M", "N"), ()), (("tokens", "hidden"), ("batch", "seq")))
    if shape is None:
        return None
    m = shape["M"] if "M" in shape.values else shape["tokens"]
    n = shape["N"] if "N" in shape.values else shape["hidden"]
    x = m * n * element
    return Traffic(reads=x, writes=x, saved=0, backward_reads=2 * x, backward_writes=x)  # dy, y; dx


def cross_entropy(parameters, element: int) -> Traffic | None:
    """Mean cross-entropy of logits (BT × V) against int64 targets (BT)."""
    shape = _first_shape(parameters, (("batch", "seq", "vocab"), ()), (("tokens", "vocab"), ("batch", "seq")))
    if shape is None:
        return None
    bt = shape["tokens"] if "tokens" in shape.values else shape["batch"] * shape["seq"]
    logits = bt * shape["vocab"] * element
    return Traffic(
        reads=logits + bt * INT64, writes=FP32, saved=bt * FP32,  # loss; log-sum-exp
        backward_reads=logits + bt * INT64 + bt * FP32,  # logits, targets, lse
        backward_writes=logits,  # d logits
    )


def embedding(parameters, element: int) -> Traffic | None:
    """out = W[ids] for ids (B × T, int64, uniform in [0, V)) and W (V × D)."""
    shape = _first_shape(parameters, (("vocab", "batch", "seq", "D"), ()))
    if shape is None:
        return None
    v, d, tokens = shape["vocab"], shape["D"], shape["batch"] * shape["seq"]
    rows_read = round(v * -math.expm1(tokens * math.log1p(-1 / v))) if v > 1 else 1  # distinct ids
    return Traffic(
        reads=tokens * INT64 + rows_read * d * element, writes=tokens * d * element, saved=0,
        backward_reads=tokens * d * element + tokens * INT64,  # d out, ids
        backward_writes=v * d * element,  # dW, dense
    )


def _rope_shape(parameters) -> tuple[int, int, int, int] | None:
    shape = _first_shape(parameters, (("seq", "hidden", "q_heads", "kv_heads"), _SWEEP_CEILING))
    if shape is None or shape["hidden"] % shape["q_heads"]:
        return None
    return shape["seq"], shape["q_heads"], shape["kv_heads"], shape["hidden"] // shape["q_heads"]


def _rope(parameters, element: int, table_bytes: Callable[[int, int], int]) -> Traffic | None:
    found = _rope_shape(parameters)
    if found is None:
        return None
    s, hq, hkv, d = found
    q, k, table = s * hq * d * element, s * hkv * d * element, table_bytes(s, d)
    return Traffic(
        reads=q + k + table, writes=q + k, saved=0,
        # the harness backpropagates the rotated q only: dq = rotate⁻¹(dy)
        backward_reads=q + table, backward_writes=q,
    )


def rope(parameters, element: int) -> Traffic | None:
    """Llama RoPE of q (S × Hq × D) and k (S × Hkv × D) with cos and sin (S × D each, dtype)."""
    return _rope(parameters, element, lambda s, d: 2 * s * d * element)


def llama4_rope(parameters, element: int) -> Traffic | None:
    """Llama 4 RoPE: q and k as complex pairs times freqs_cis (S × D/2, complex64)."""
    return _rope(parameters, element, lambda s, d: s * (d // 2) * COMPLEX64)


def gated_mlp(parameters, element: int) -> Traffic | None:
    """LlamaMLP with a gated activation: y = down(act(gate(x)) · up(x)), x (B·T × H),
    gate and up (I × H), down (H × I): three matrix products of 2·BT·H·I FLOPs each."""
    shape = _first_shape(
        parameters,
        (("batch", "seq", "hidden", "inter"), ("hidden_act", "seq_len")),
        # x BT: the setup's x is (bsz, x, hidden), so the tokens are batch × tokens
        (("batch", "tokens", "hidden", "inter"), ("hidden_act", "seq")),
    )
    if shape is None:
        return None
    t = shape["batch"] * (shape["tokens"] if "tokens" in shape.values else shape["seq"])
    h, i = shape["hidden"], shape["inter"]
    x, weights, activations = t * h * element, 3 * h * i * element, 2 * t * i * element
    return Traffic(
        reads=x + weights, writes=x, saved=activations,  # y; gate(x), up(x)
        backward_reads=2 * x + weights + activations,  # dy, x, W, gate(x), up(x)
        backward_writes=x + weights,  # dx, dW
        flops=6 * t * h * i, backward_flops=12 * t * h * i,  # dX and dW of each product
    )


# operation -> (formula, dtype when the workload records none, or None: needed)
LIGER_FORMULAS: dict[str, tuple[Callable[[Any, int], Traffic | None], str | None]] = {
    "rms_norm": (rms_norm, None),
    "layer_norm": (layer_norm, None),
    "softmax": (softmax, None),
    # the harness draws logits with torch.randn's default dtype in every version
    "cross_entropy": (cross_entropy, "fp32"),
    "embedding": (embedding, None),
    "rope": (rope, None),
    "llama4_rope": (llama4_rope, None),
    "swiglu": (gated_mlp, None),
    "geglu": (gated_mlp, None),
}


def declared_cost(workload_spec: Mapping[str, Any]) -> Cost | None:
    declared = workload_spec.get("cost")
    if not isinstance(declared, Mapping):
        return None
    moved, flops = declared.get("bytes"), declared.get("flops")
    moved = moved if type(moved) is int else None
    flops = flops if type(flops) is int else None
    if moved is None and flops is None:
        return None
    return Cost(moved, flops, "declared")


def formula_cost(workload_spec: Mapping[str, Any], timed_pass: str | None) -> Cost | None:
    if workload_spec.get("family") != LIGER_FAMILY or timed_pass not in PASSES:
        return None
    operation = workload_spec.get("operation")
    known = LIGER_FORMULAS.get(operation) if isinstance(operation, str) else None
    if known is None:
        return None
    formula, default_dtype = known
    dtype = workload_spec.get("dtype", default_dtype)
    element = ELEMENT_BYTES.get(dtype) if isinstance(dtype, str) else None
    parameters = workload_spec.get("parameters")
    if element is None or not isinstance(parameters, Mapping):
        return None
    traffic = formula(parameters, element)
    found = traffic.of(timed_pass) if traffic is not None else None
    if found is None:
        return None
    return Cost(found[0], found[1], "formula", f"{LIGER_FAMILY}/{operation}/{timed_pass}")


def cost_of(workload_spec: Mapping[str, Any], timed_pass: str | None) -> Cost | None:
    """The declared cost when the workload has one, else the formula's, else None."""
    return declared_cost(workload_spec) or formula_cost(workload_spec, timed_pass)


def timed_pass(run_spec: Mapping[str, Any], workload_spec: Mapping[str, Any]) -> str | None:
    """The pass a Liger speed run timed: the second segment of its benchmark,
    ``{operation}/{pass}`` (memory runs have a third segment, ``/memory``)."""
    if workload_spec.get("family") != LIGER_FAMILY:
        return None
    benchmark = (run_spec.get("sourceNative") or {}).get("benchmark")
    if not isinstance(benchmark, str):
        return None
    parts = benchmark.split("/")
    if len(parts) != 2 or parts[0] != workload_spec.get("operation"):
        return None
    return parts[1]

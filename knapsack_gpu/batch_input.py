"""A batch of instances, read and checked once (:func:`read`) and made whole at each row's exact scale; and the
answers put back in the caller's terms (:meth:`Batch.answer`).

Shapes follow torch's batched ops: weights and values (*, n), any number of leading batch dimensions (weights may
be (n,), shared by every row), a capacity per row (*,) or one for all; the answers are (*,) and (*, n). A list of
rows of different lengths is padded with items of weight 0 and value 0 (never chosen). A bad entry is named by its
full index (``weights[3, 17] = nan``), as torch.testing names a mismatch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import dyadic
from .limits import MAX_EXACT_FLOAT_INT, MAX_WEIGHT
from .problem import is_tensor, tensor_array


@dataclass(eq=False)
class Batch:
    """A checked batch: B = prod(shape) rows of n items, whole numbers at each row's scale.

    Attributes:
        shape: the leading batch shape (*); B rows in all.
        n: items a row (padding included).
        W: (B, n) int64 weights times 2**kw (C-contiguous), >= 0 and < 2**62.
        C: (B,) int64 capacities at the same scale, rounded down (at most the row's total weight).
        P: (B, n) int64 values times 2**kv (zeros on the rows whose float values do not scale: see ``whole``).
        V: (B, n) float64 values as given where they are floats, else None.
        whole: (B,) bool: the row's values are whole numbers at scale 2**kv (always, for whole-number values).
        kw, kv: (B,) int64 exponents of the weights' and the values' scales.
        float_weights, float_values: the caller's dtypes were floats (the answers' weight and value are float64).
        like: the device of a tensor the caller passed (the answers go there), or None (numpy answers).
    """

    shape: tuple
    n: int
    W: np.ndarray
    C: np.ndarray
    P: np.ndarray
    V: np.ndarray | None
    whole: np.ndarray
    kw: np.ndarray
    kv: np.ndarray
    float_weights: bool
    float_values: bool
    like: object = None

    @property
    def rows(self) -> int:
        return int(self.W.shape[0])

    def values_of(self, b: int) -> np.ndarray:
        """Row b's values as the planner takes them: whole numbers at the row's scale, else the floats given."""
        return self.P[b] if self.whole[b] else self.V[b]

    def exponent_range(self, which: str) -> tuple[int, int]:
        k = self.kw if which == "weights" else self.kv
        return (int(k.min()), int(k.max())) if k.size else (0, 0)

    def answer(self, value, float_value, weight, chosen) -> list:
        """The answers in the caller's terms: [value, selected, weight] shaped (*,), (*, n), (*,), as numpy arrays or
        tensors on the caller's device, from each row's whole numbers at its scale (``float_value``: the rows solved
        in float values)."""
        if self.float_values:
            v = np.where(self.whole, np.ldexp(value.astype(np.float64), -self.kv), float_value)
        else:
            v = value
        w = np.ldexp(weight.astype(np.float64), -self.kw) if self.float_weights else weight
        out = [v.reshape(self.shape), chosen.reshape(*self.shape, self.n), w.reshape(self.shape)]
        if self.like is not None:
            import torch

            out = [torch.from_numpy(a).to(self.like) for a in out]
        return out


def read(weights, values, capacity) -> Batch:
    """Check a batch and make it whole.

    Raises:
        TypeError, ValueError: as :func:`knapsack_gpu.solve_batch` describes, naming the entry by its full index.
    """
    like = next((x.device for x in (weights, values, capacity) if is_tensor(x)), None)
    v, v_lengths = _array(values, "values")
    w, w_lengths = _array(weights, "weights")
    if v_lengths is not None or w_lengths is not None:  # a list of rows of different lengths: row by row alike
        _same_lengths(w, w_lengths, v, v_lengths)
    if v.ndim == 0:
        raise ValueError("values must have at least one dimension (n,) or (*, n), got a single number")
    if w.ndim == 0:
        raise ValueError("weights must have at least one dimension (n,) or (*, n), got a single number")
    shape = v.shape[:-1]
    n = v.shape[-1]
    if w.shape[-1] != n:
        raise ValueError(f"weights have {w.shape[-1]} items a row but values have {n}: they must match")
    if w.ndim > 1 and w.shape != v.shape:
        raise ValueError(f"weights have shape {w.shape} but values {v.shape}: they must match (or weights be (n,))")
    B = math.prod(shape)
    _check_weights(w)
    _check_values(v)
    c = _capacities(capacity, shape)
    W2 = np.broadcast_to(w, (*shape, n)).reshape(B, n)
    C1 = np.ascontiguousarray(c.reshape(B))
    label = _labels(shape)
    float_weights = w.dtype.kind == "f"
    if float_weights:
        Wi, caps, kw = _scale_weights(np.ascontiguousarray(W2, dtype=np.float64), C1, label)
    else:
        Wi = np.ascontiguousarray(W2, dtype=np.int64)
        kw = np.zeros(B, dtype=np.int64)
        caps = dyadic.capacities(Wi, C1, kw, label)
    V2 = v.reshape(B, n)
    float_values = v.dtype.kind == "f"
    if float_values:
        V2 = np.ascontiguousarray(V2, dtype=np.float64)
        P, kv, whole = _whole_values(V2)
    else:
        P = np.ascontiguousarray(V2, dtype=np.int64)
        kv, whole = np.zeros(B, dtype=np.int64), np.ones(B, dtype=bool)
        _check_totals(P, shape)
    return Batch(shape, n, np.ascontiguousarray(Wi), caps, np.ascontiguousarray(P), V2 if float_values else None,
                 whole, kw, kv, float_weights, float_values, like)  # fmt: skip


def _at(name: str, shape: tuple, flat: int) -> str:
    return f"{name}[{', '.join(str(int(i)) for i in np.unravel_index(flat, shape))}]"


def _labels(shape: tuple):
    """How :mod:`knapsack_gpu.dyadic` names an entry of row b (flat) of a batch of this shape: weights[3, 17]."""

    def label(name: str, b: int, i: int | None = None) -> str:
        at = [str(int(x)) for x in np.unravel_index(b, shape)] if shape else []
        at += [] if i is None else [str(i)]
        return f"{name}[{', '.join(at)}]" if at else name

    return label


def _compiled():
    """The compiled kernels where numba may run them (a batch's CPU path needs them: they compile on first use),
    else None (numpy's twins)."""
    from . import numba_jit

    if not numba_jit.enabled():
        return None
    from .states import modes

    return modes.compiled()


def _scale_weights(W: np.ndarray, C: np.ndarray, label) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`knapsack_gpu.dyadic.scale_rows` of every row: in one compiled pass a row where the kernels run, the
    rows they flag (and every row without them) through the numpy twin, which names what is wrong."""
    B = W.shape[0]
    K = _compiled()
    if K is None or not W.size:
        return dyadic.scale_rows(W, C.astype(np.float64) if C.dtype.kind == "f" else C, label)
    Wi = np.empty(W.shape, dtype=np.int64)
    caps, k, flag = np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64), np.empty(B, dtype=np.int64)
    exact = C.dtype.kind == "f" or int(C.max(initial=0)) < 2**53  # (whole capacities as exact doubles)
    K.scale_rows_c(W, C.astype(np.float64) if exact else np.zeros(B), 0, B, Wi, caps, k, flag)
    twin = np.flatnonzero(flag) if exact else np.arange(B)
    if twin.size:
        names = lambda name, b, i=None: label(name, int(twin[b]), i)  # noqa: E731 (the rows' own indices)
        Wi[twin], caps[twin], k[twin] = dyadic.scale_rows(W[twin], C[twin], names)
    return Wi, caps, k


def _whole_values(V: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`knapsack_gpu.dyadic.whole_values` of every row, in one compiled pass a row where the kernels run."""
    K = _compiled()
    if K is None or not V.size:
        return dyadic.whole_values(V)
    B = V.shape[0]
    P, k, ok = np.empty(V.shape, dtype=np.int64), np.empty(B, dtype=np.int64), np.empty(B, dtype=np.bool_)
    K.whole_values_c(V, 0, B, float(MAX_EXACT_FLOAT_INT), P, k, ok)
    return P, k, ok


def _same_lengths(w: np.ndarray, w_lengths, v: np.ndarray, v_lengths) -> None:
    """Rows of different lengths: each row of weights as long as its row of values (padding must not pair a value
    with a weight that is not there)."""
    if w.ndim == 1:
        raise ValueError("values are rows of different lengths: shared weights (n,) need rows of n values")
    wl = w_lengths if w_lengths is not None else np.full(w.shape[0], w.shape[-1])
    vl = v_lengths if v_lengths is not None else np.full(v.shape[0], v.shape[-1])
    if wl.shape != vl.shape:
        raise ValueError(f"weights have {wl.shape[0]} rows but values have {vl.shape[0]}: they must match")
    differ = np.flatnonzero(wl != vl)
    if differ.size:
        b = int(differ[0])
        raise ValueError(f"weights[{b}] has {wl[b]} items but values[{b}] has {vl[b]}: each row must match")


def _array(x, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """An argument as a numpy array of real numbers (any shape), and where it was a list of rows of different
    lengths, those lengths (the rows padded with zeros); else None."""
    lengths = None
    if is_tensor(x):
        return tensor_array(x, name), None
    if isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, (list, tuple)):
        try:
            arr = np.asarray(x)
        except ValueError:  # rows of different lengths
            arr = None
        if arr is None or arr.dtype == object:
            arr, lengths = _padded(x, name)
    else:
        raise TypeError(f"{name} must be a tensor, a numpy array or a list of rows, got {type(x).__name__}")
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must be numbers, got booleans ({arr.dtype}); convert them to int first")
    if kind not in "iuf":
        raise TypeError(f"{name} must be real numbers, got dtype {arr.dtype}")
    return arr, lengths


def _padded(rows, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows of different lengths as one array, each padded with zeros to the longest (items of weight 0 and value
    0: never chosen)."""
    arrs = []
    for b, row in enumerate(rows):
        a = tensor_array(row, f"{name}[{b}]") if is_tensor(row) else np.asarray(row)
        if a.ndim != 1:
            raise ValueError(f"{name}[{b}] must be a row of numbers, got shape {a.shape}")
        if a.dtype.kind not in "iuf" and a.size:
            raise TypeError(f"{name}[{b}] must be real numbers, got dtype {a.dtype}")
        arrs.append(a)
    n = max((a.size for a in arrs), default=0)
    dtype = np.result_type(*[a.dtype for a in arrs if a.size] or [np.int64])
    out = np.zeros((len(arrs), n), dtype=dtype)
    for b, a in enumerate(arrs):
        out[b, : a.size] = a
    return out, np.array([a.size for a in arrs], dtype=np.int64)


def _first_bad(arr: np.ndarray, bad: np.ndarray, name: str, why: str) -> None:
    if bad.any():
        flat = int(np.flatnonzero(bad.reshape(-1))[0])
        raise ValueError(f"{_at(name, arr.shape, flat)} = {arr.reshape(-1)[flat]!r}: {why}")


def _check_weights(w: np.ndarray) -> None:
    if w.dtype.kind == "f":
        _first_bad(w, ~np.isfinite(w), "weights", "weights must be finite")
    if w.size and w.min() < 0:
        _first_bad(w, w < 0, "weights", "weights must be >= 0")
    if w.dtype.kind in "iu" and w.size and w.max() >= MAX_WEIGHT:
        _first_bad(w, w >= MAX_WEIGHT, "weights", "weights must be < 2**62")


def _check_values(v: np.ndarray) -> None:
    if v.dtype.kind == "f":
        _first_bad(v, ~np.isfinite(v), "values", "values must be finite")
    if v.size and v.min() < 0:
        _first_bad(v, v < 0, "values", "values must be >= 0")
    if v.dtype.kind == "u" and v.size and v.max() >= 2**63:
        _first_bad(v, v >= np.uint64(2**63), "values", "does not fit in int64")


def _check_totals(P: np.ndarray, shape: tuple) -> None:
    """Whole-number values: every row's optimum must fit the int64 answers (rows that may pass it are summed in
    Python integers)."""
    if not P.size:
        return
    near = np.flatnonzero(P.max(axis=1) >= (2**63 - 1) // P.shape[1])
    for b in near.tolist():
        if sum(P[b].tolist()) >= 2**63:
            raise ValueError(
                f"{_at('values', shape, b)}: this row's values sum to 2**63 or more, so its optimum may pass the "
                "int64 answers of a batch; solve it with knapsack_gpu.solve (exact in Python integers)"
            )


def _capacities(capacity, shape: tuple) -> np.ndarray:
    """The capacities as an array of shape ``shape`` (int64 for whole numbers, else float64), checked."""
    if is_tensor(capacity):
        c = tensor_array(capacity, "capacity")
    elif isinstance(capacity, (np.ndarray, list, tuple, int, float, np.integer, np.floating)):
        c = np.asarray(capacity) if not isinstance(capacity, int) or capacity < 2**63 else np.asarray(float(capacity))
    else:
        raise TypeError(f"capacity must be a number or one per row, got {type(capacity).__name__} {capacity!r}")
    if c.dtype.kind not in "iuf":
        raise TypeError(f"capacity must be a number or one per row, got dtype {c.dtype}")
    try:
        c = np.broadcast_to(c, shape)
    except ValueError:
        raise ValueError(f"capacity has shape {c.shape} but the batch has shape {shape}: give one per row") from None
    if c.dtype.kind == "u":  # (int64 where it fits; larger whole capacities are exact as their float's floor)
        c = c.astype(np.int64) if not c.size or c.max() < 2**63 else c.astype(np.float64)
    for bad, why in ((~np.isfinite(c) if c.dtype.kind == "f" else None, "finite"), (c < 0, ">= 0")):
        if bad is not None and bad.any():
            flat = int(np.flatnonzero(bad.reshape(-1))[0])
            where = _at("capacity", shape, flat) if shape else "capacity"
            raise ValueError(f"{where} = {c.reshape(-1)[flat]!r}: capacity must be {why}")
    return c.astype(np.float64) if c.dtype.kind == "f" else c

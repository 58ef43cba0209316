"""Validate what the caller passed and normalise it into numpy arrays.

Everything downstream may assume: weights are int64 >= 0, values are int64 >= 0 (``integral``) or finite
float64 >= 0, the two have the same length, and the capacity is a Python int >= 0.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass

import numpy as np

from . import dyadic, jit
from .arith import exact_sum
from .limits import MAX_EXACT_FLOAT_INT, MAX_WEIGHT  # noqa: F401  (re-exported)
from .states import modes


@dataclass(frozen=True)
class Instance:
    """A validated instance.

    Attributes:
        weights: int64 array of shape (n,), C-contiguous, every entry >= 0.
        values: shape (n,), C-contiguous, int64 when ``integral`` else float64; every entry finite and >= 0.
        capacity: the knapsack capacity, >= 0.
        integral: every value is a whole number, so the optimum is computed in exact integers.
        exponent: ``weights`` and ``capacity`` are the caller's times 2**exponent (0: as given): float weights
            made whole numbers exactly, the capacity rounded down at the same scale.
    """

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    integral: bool
    # weights and capacity as given times 2**exponent (float weights made whole: :mod:`knapsack_gpu.dyadic`)
    exponent: int = 0

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])


def is_tensor(x: object) -> bool:
    """Whether ``x`` is a torch tensor, without importing torch (where it is not imported, nothing is one)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def tensor_array(x, name: str) -> np.ndarray:
    """A dense tensor of real numbers on any device -> numpy (any shape); anything else is refused by name."""
    import torch

    accepted = "pass a dense (strided) tensor of integers or real floats on the CPU or a CUDA device"
    if x.is_meta or x.device.type == "meta":
        raise TypeError(f"{name} is on the meta device and has no values; {accepted}")
    if x.is_nested:
        raise TypeError(f"{name} is a nested tensor; {accepted}")
    if x.layout != torch.strided:
        raise TypeError(f"{name} is a {x.layout} tensor; {accepted} (e.g. {name}.to_dense())")
    if x.is_quantized:
        raise TypeError(f"{name} is a quantized {x.dtype} tensor; {accepted} (e.g. {name}.dequantize())")
    if x.is_complex():
        raise TypeError(f"{name} must be real numbers, got a {x.dtype} tensor")
    if x.dtype == torch.bool:
        raise TypeError(f"{name} must be numbers, got a torch.bool tensor; convert it to int first")
    x = x.detach()
    if x.is_floating_point() and x.dtype not in (torch.float16, torch.float32, torch.float64):
        x = x.to(torch.float64)  # bfloat16 and float8 have no numpy type; float64 holds them exactly
    return x.cpu().numpy()


def _as_array(x: object, name: str) -> np.ndarray:
    if is_tensor(x):
        arr = tensor_array(x, name)
    elif isinstance(x, np.ndarray):
        arr = x
    elif isinstance(x, (list, tuple)):
        for i, e in enumerate(x):  # one rule for booleans everywhere: they are not numbers here
            if isinstance(e, (bool, np.bool_)):
                raise TypeError(f"{name}[{i}] = {e!r} is not a number (booleans are refused; convert them to int)")
        try:
            arr = np.asarray(x)
        except ValueError as exc:  # ragged nesting
            raise ValueError(f"{name} must be a flat 1-D sequence of numbers: {exc}") from None
        # numpy turns Python ints past int64 into float64 silently; keep them exact (or refuse them) instead.
        big_ints = arr.dtype.kind == "f" and all(isinstance(e, numbers.Integral) and not isinstance(e, bool) for e in x)
        if arr.dtype.kind not in "iuf" or big_ints:
            arr = np.asarray(x, dtype=object)
    else:
        raise TypeError(f"{name} must be a list, tuple, numpy array or torch tensor, got {type(x).__name__}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(arr.shape)}")
    if arr.size == 0:
        return arr.astype(np.int64)
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must be numbers, got booleans ({arr.dtype}); convert them to int first")
    if kind == "f" and arr.dtype.itemsize < 8:
        arr = arr.astype(np.float64)  # float16/float32: exact in float64
    if kind in "iuf":
        return arr
    if kind != "O":
        raise TypeError(f"{name}[0] = {arr[0]!r} is not a number ({name} has dtype {arr.dtype})")
    return _object_array(arr, name)


def _object_array(arr: np.ndarray, name: str) -> np.ndarray:
    """Mixed Python numbers (or big ints) -> int64 or float64, naming the first bad entry."""
    all_int = True
    for i, item in enumerate(arr):
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real):
            raise TypeError(f"{name}[{i}] = {item!r} is not a number")
        if not isinstance(item, numbers.Integral):
            all_int = False
    if all_int:
        for i, item in enumerate(arr):
            if not -(2**63) <= int(item) < 2**63:
                raise ValueError(f"{name}[{i}] = {item} does not fit in int64: exact arithmetic stops at 2**63")
        return arr.astype(np.int64)
    return arr.astype(np.float64)


def _reject(arr: np.ndarray, bad: np.ndarray, name: str, why: str) -> None:
    """Raise ValueError naming the first flagged entry."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {arr[i]}: {why}")


def _check_values(values: np.ndarray) -> tuple[np.ndarray, bool]:
    if values.dtype.kind == "u":
        _reject(values, values >= np.uint64(2**63), "values", "does not fit in int64: exact arithmetic stops at 2**63")
    if values.dtype.kind != "f":
        v = values.astype(np.int64, copy=False)  # read only from here on: no copy needed
        if v.size and v.min() < 0:  # one reduction; the mask that names the index only on the way to an error
            _reject(v, v < 0, "values", "values must be >= 0")
        return v, True
    v = values.astype(np.float64, copy=False)
    _reject(v, ~np.isfinite(v), "values", "values must be finite")
    _reject(v, v < 0, "values", "values must be >= 0")
    whole = bool(np.all(v == np.floor(v))) and (v.size == 0 or float(v.max()) <= MAX_EXACT_FLOAT_INT)
    return (v.astype(np.int64), True) if whole else (v, False)


# What the error for fractional weights says where the caller solves whole numbers only (solve() scales them)
WHOLE_ONLY = (
    "weights must be whole numbers here (knapsack_gpu.solve and solve_batch solve float weights exactly, at their "
    "power-of-two scale: float32 in [0, 1) times 2**24 are whole numbers)"
)


def _check_weights(weights: np.ndarray) -> np.ndarray:
    if weights.dtype.kind == "f":
        _reject(weights, ~np.isfinite(weights), "weights", "weights must be finite")
        _reject(weights, weights != np.floor(weights), "weights", WHOLE_ONLY)
    if weights.size:
        if weights.dtype == np.int64:  # one reduction: read as uint64, a negative weight is >= 2**63
            bad = weights.view(np.uint64).max() >= MAX_WEIGHT
        else:
            bad = weights.min() < 0 or weights.max() >= MAX_WEIGHT
        if bad:
            _reject(weights, weights < 0, "weights", "weights must be >= 0")
            _reject(weights, weights >= MAX_WEIGHT, "weights", "weights must be < 2**62")
    return weights.astype(np.int64, copy=False)


def capacity_number(capacity: object) -> int | float:
    """The capacity as a Python int, or a finite float >= 0 where it is not a whole number (only whole-number
    weights' solves take one: :func:`make_instance` rounds it down); TypeError/ValueError naming the problem."""
    if type(capacity) is int and 0 <= capacity < MAX_WEIGHT:  # the common case, without the ABC checks below
        return capacity
    if isinstance(capacity, np.ndarray) or is_tensor(capacity):
        count = capacity.size if isinstance(capacity, np.ndarray) else capacity.numel()
        if count != 1:
            raise ValueError(f"capacity must be a single number, got shape {tuple(capacity.shape)}")
        capacity = capacity.item()
    if isinstance(capacity, (bool, np.bool_)) or not isinstance(capacity, numbers.Real):
        raise TypeError(f"capacity must be a number, got {type(capacity).__name__} {capacity!r}")
    if isinstance(capacity, numbers.Integral):
        return check_capacity(int(capacity))
    c = float(capacity)
    if not math.isfinite(c):
        raise ValueError(f"capacity = {capacity}: capacity must be finite")
    if c < 0:
        raise ValueError(f"capacity = {capacity}: capacity must be >= 0")
    return check_capacity(int(c)) if c == math.floor(c) and c < MAX_WEIGHT else c


def check_capacity(capacity: object) -> int:
    """Return the capacity as a Python int, or raise TypeError/ValueError naming the problem."""
    if type(capacity) is int and 0 <= capacity < MAX_WEIGHT:  # the common case, without the ABC checks below
        return capacity
    if isinstance(capacity, np.ndarray) or is_tensor(capacity):
        count = capacity.size if isinstance(capacity, np.ndarray) else capacity.numel()
        if count != 1:
            raise ValueError(f"capacity must be a single number, got shape {tuple(capacity.shape)}")
        capacity = capacity.item()
    if isinstance(capacity, (bool, np.bool_)) or not isinstance(capacity, numbers.Real):
        raise TypeError(f"capacity must be an integer, got {type(capacity).__name__} {capacity!r}")
    if not isinstance(capacity, numbers.Integral):
        c = float(capacity)
        if not math.isfinite(c):
            raise ValueError(f"capacity = {capacity}: capacity must be a finite whole number")
        if c != math.floor(c):
            raise ValueError(f"capacity = {capacity}: capacity must be a whole number")
        capacity = int(c)
    capacity = int(capacity)
    if capacity < 0:
        raise ValueError(f"capacity = {capacity}: capacity must be >= 0")
    if capacity >= MAX_WEIGHT:
        raise ValueError(f"capacity = {capacity}: capacity must be < 2**62")
    return capacity


def make_instance(weights: object, values: object, capacity: object, *, floats: bool = False) -> Instance:
    """Validate and normalise a knapsack instance.

    Args:
        weights: 1-D whole numbers >= 0 (list, tuple, numpy array or torch tensor); with ``floats``, any finite
            numbers >= 0.
        values: 1-D finite numbers >= 0, same length as ``weights``.
        capacity: a whole number >= 0; with ``floats``, any finite number >= 0.
        floats: float weights and capacities are taken exactly (:mod:`knapsack_gpu.dyadic`: the weights times the
            power of two that makes them whole, the capacity times it, rounded down; ``Instance.exponent`` says
            which). False: whole numbers only (a profile's capacities are its cells).

    Returns:
        An :class:`Instance`.

    Raises:
        TypeError: an argument is not numeric or not array-like.
        ValueError: shapes differ, or an entry is negative, non-finite or fractional where whole numbers are needed
            (:class:`knapsack_gpu.dyadic.ScaleError`: float weights whose exact scale passes 2**62).
    """
    w = _as_array(weights, "weights")
    v = _as_array(values, "values")
    if w.shape[0] != v.shape[0]:
        raise ValueError(f"weights has {w.shape[0]} entries but values has {v.shape[0]}: they must match")
    c = capacity_number(capacity) if floats else check_capacity(capacity)
    exponent = 0
    if floats and (type(c) is float or (w.dtype.kind == "f" and not _whole(w))):
        w, c, exponent = _scaled(w, c)
    checked = _checked_compiled(w, v)
    if checked is not None:
        w, v, integral = checked
    else:
        w = _contiguous(_check_weights(w))  # a strided view (a file's column) would compile kernels anew
        v, integral = _check_values(v)
        v = _contiguous(v)
    return Instance(weights=w, values=v, capacity=c, integral=integral, exponent=exponent)


def _whole(w: np.ndarray) -> bool:
    """Whether float weights are finite whole numbers (else the exact scale, or the error naming the entry)."""
    with np.errstate(invalid="ignore"):
        return bool(np.all(w == np.floor(w)))


def _scaled(w: np.ndarray, c: int | float) -> tuple[np.ndarray, int, int]:
    """Weights (any real dtype) and a capacity made whole at their exact power-of-two scale (the entries checked
    first, by name): whole-number weights keep their scale, the capacity rounded down (at or past the total
    weight: the total, every item fits)."""
    if w.dtype.kind != "f":
        w = _check_weights(w)
        cap = math.floor(c)
        if cap >= MAX_WEIGHT:
            cap = min(cap, exact_sum(w))
        return w, check_capacity(cap), 0
    _reject(w, ~np.isfinite(w), "weights", "weights must be finite")
    _reject(w, w < 0, "weights", "weights must be >= 0")
    W, caps, k = dyadic.scale_rows(w[None, :], np.array([c], dtype=np.float64))
    return W[0], int(caps[0]), int(k[0])


def _contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` itself where it is C-contiguous (np.ascontiguousarray makes a new view even then: ~0.7 us)."""
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _checked_compiled(w: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """What :func:`_check_weights` and :func:`_check_values` make of C-contiguous int64 weights and int64 or float64
    values, (weights, values, integral), from one compiled pass where this process has the states engine's kernels
    loaded (numpy takes a pass per check: ~5 us for int64 values and ~12 us for float ones at n = 2,000). None
    (another dtype or layout, kernels not loaded, an entry out of range) sends the arrays through numpy's checks,
    which name the entry."""
    loaded = jit.ready("i") or jit.ready("f")
    if not (loaded and w.dtype == np.int64 and w.flags.c_contiguous and v.flags.c_contiguous):
        return None
    if v.dtype == np.int64:
        return (w, v, True) if modes.compiled().items_valid(w, v) else None
    if v.dtype != np.float64:
        return None
    kind = modes.compiled().float_items_valid(w, v)
    return None if kind == 0 else (w, v.astype(np.int64), True) if kind == 2 else (w, v, False)

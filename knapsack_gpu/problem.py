"""Validate what the caller passed and normalise it into numpy arrays.

Everything downstream may assume: weights are int64 >= 0, values are int64 >= 0 (``integral``) or finite
float64 >= 0, the two have the same length, and the capacity is a Python int >= 0.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from . import jit
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
    """

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    integral: bool

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])


def _tensor_array(x: torch.Tensor, name: str) -> np.ndarray:
    """A dense 1-D tensor of real numbers on any device -> numpy; anything else is refused by name."""
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
    if isinstance(x, torch.Tensor):
        arr = _tensor_array(x, name)
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


def _check_weights(weights: np.ndarray) -> np.ndarray:
    if weights.dtype.kind == "f":
        _reject(weights, ~np.isfinite(weights), "weights", "weights must be finite whole numbers")
        _reject(weights, weights != np.floor(weights), "weights", "weights must be whole numbers")
    if weights.size:
        if weights.dtype == np.int64:  # one reduction: read as uint64, a negative weight is >= 2**63
            bad = weights.view(np.uint64).max() >= MAX_WEIGHT
        else:
            bad = weights.min() < 0 or weights.max() >= MAX_WEIGHT
        if bad:
            _reject(weights, weights < 0, "weights", "weights must be >= 0")
            _reject(weights, weights >= MAX_WEIGHT, "weights", "weights must be < 2**62")
    return weights.astype(np.int64, copy=False)


def check_capacity(capacity: object) -> int:
    """Return the capacity as a Python int, or raise TypeError/ValueError naming the problem."""
    if type(capacity) is int and 0 <= capacity < MAX_WEIGHT:  # the common case, without the ABC checks below
        return capacity
    if isinstance(capacity, (torch.Tensor, np.ndarray)):
        count = capacity.numel() if isinstance(capacity, torch.Tensor) else capacity.size
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


def make_instance(weights: object, values: object, capacity: object) -> Instance:
    """Validate and normalise a knapsack instance.

    Args:
        weights: 1-D whole numbers >= 0 (list, tuple, numpy array or torch tensor).
        values: 1-D finite numbers >= 0, same length as ``weights``.
        capacity: a whole number >= 0.

    Returns:
        An :class:`Instance`.

    Raises:
        TypeError: an argument is not numeric or not array-like.
        ValueError: shapes differ, or an entry is negative, non-finite or fractional where whole numbers are needed.
    """
    w = _as_array(weights, "weights")
    v = _as_array(values, "values")
    if w.shape[0] != v.shape[0]:
        raise ValueError(f"weights has {w.shape[0]} entries but values has {v.shape[0]}: they must match")
    checked = _checked_compiled(w, v)
    if checked is not None:
        w, v, integral = checked
    else:
        w = _contiguous(_check_weights(w))  # a strided view (a file's column) would compile kernels anew
        v, integral = _check_values(v)
        v = _contiguous(v)
    return Instance(weights=w, values=v, capacity=check_capacity(capacity), integral=integral)


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

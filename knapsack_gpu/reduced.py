"""Reduced values: the same dense DP in fewer bytes a cell (../shared/ALGORITHMS.md, "Reduced values").

For whole-number values and integers P >= 1, Q >= 1, run the DP on h(c) = Q*f(c) - P*c with item values
r_i = Q*v_i - P*w_i: h'(c) = max(h(c), h(c - w_i) + r_i) is f's recurrence multiplied through, so every decision is
the same (ties included: both sides of a comparison sit at the same c) and f(C) = (h(C) + P*C) / Q.

What the dtype must hold is the range of h over the cells that can matter, not the size of f:
- above: any cell has h <= R+ = the sum of positive r (h(c) = Q*v(S) - P*c <= r(S) for the set S it stands for);
- below: with L a lower bound on the optimum, the cell an optimal solution passes after item j has
  h >= T_j = Q*L - P*C - (sum of positive r of the items after j) >= T = Q*L - P*C - R+. A floor F = T - 1, applied to
  the empty profile (h_0(c) = max(-P*c, F)), changes no value that can reach the optimum: anything built on a floored
  cell stays at most F + R+ < Q*L - P*C, strictly below every cell of an optimal path, so it never wins a max or a
  split, and decisions along the backtrack are the exact ones. Updates never go below F - max(-r) (old >= F,
  candidate >= F + min r), and never need clamping.
Only the span [F - max(-r), R+] must fit: rows may hold h minus a constant offset (max commutes with it).
The same F serves every Hirschberg sub-problem: a part of an optimal solution reaches at least Q*L - P*C minus the
other parts' R+, so its cells clear the same T.

With P/Q near the break item's efficiency the r_i are small exactly on the instances where bounds prune least
(Jooken's, P = Q = 1: r in [-298, 298], R+ 6e3-6.2e4): int32 where f needs int64, int16 where f needs int32.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .arith import exact_sum
from .lazy import torch

NARROW = ("int16", "int32", "int64")  # (names: torch is imported only where a dense plan is made)
# The narrowest dtype reduced values take on each device. On the H200 (gpu_check-noise-budget.json) the pruned plan of
# Jooken n = 1200, c = 1e8, g = 10 ran in int16 at 1.7e10 cells/s where the plain int32 dense plan ran as many cells
# over as many single-item launches at 2.3e11; the item kernel's PTX differs between the two only in its load and
# store widths, and where the time goes is not yet measured (gpu_check's profile section), so on CUDA reduced values
# stop at int32, the dtype measured fast there, until int16 is.
NARROWEST = {"cpu": "int16", "cuda": "int32"}
MAX_Q = 64  # denominators tried for P/Q; a larger Q widens r as fast as it fits the efficiency
# Below this capacity a plain row is a few MB: fewer bytes a cell buy nothing worth dropping the prefix rule for
# (a reduced profile above the prefix weight is Q*V - P*c, not a constant, so every cell up to C is computed).
MIN_CAPACITY = 1 << 20


@dataclass(frozen=True)
class Scale:
    """Rows hold h - offset, h = Q*f - P*c, floored at ``floor`` (in stored units; see the module docstring). The
    offset shifts h's range into the dtype's when its span fits but its position does not (max is shift-invariant)."""

    P: int
    Q: int
    offset: int
    floor: int

    @property
    def ramp(self) -> tuple[int, int, int]:
        """(P, stored value at c = 0, floor) for :class:`knapsack_gpu.dense.passes.base.Job`."""
        return self.P, -self.offset, self.floor

    def value(self, h: int, cap: int) -> int:
        """f at capacity ``cap`` from the stored value there (exact: it stands for a whole-number f)."""
        num = int(h) + self.offset + self.P * cap
        if num % self.Q:
            raise RuntimeError(
                f"internal error: reduced value {h} at capacity {cap} is not Q*f - P*c - offset "
                f"(P, Q, offset = {self.P}, {self.Q}, {self.offset})"
            )
        return num // self.Q

    def reduced(self, f: int, cap: int) -> int:
        """The stored value at capacity ``cap`` of a whole-number value f."""
        return self.Q * int(f) - self.P * cap - self.offset

    def as_dict(self) -> dict:
        return {"P": self.P, "Q": self.Q, "offset": self.offset, "floor": self.floor}


def candidates(weights: np.ndarray, values: np.ndarray, capacity: int) -> list[tuple[int, int]]:
    """(P, Q) pairs to try: the convergents of the break item's efficiency v_b / w_b with Q <= MAX_Q (the best
    rational approximations with small denominators), P >= 1."""
    if weights.size == 0:
        return []
    eff = values / np.maximum(weights, 1)
    order = np.argsort(-eff, kind="stable")
    prefix = np.cumsum(weights[order])
    b = order[min(int(np.searchsorted(prefix, capacity, side="right")), order.size - 1)]
    target = Fraction(int(values[b]), max(1, int(weights[b])))
    out = []
    for q in range(1, MAX_Q + 1):
        approx = target.limit_denominator(q)
        pair = (approx.numerator, approx.denominator)
        if approx.numerator >= 1 and pair not in out:
            out.append(pair)
    return out or [(1, 1)]


def choose(
    weights: np.ndarray,
    values: np.ndarray,
    capacity: int,
    lower: int,
    current: torch.dtype,
    narrowest: str = "int16",
) -> tuple[Scale, torch.dtype] | None:
    """The narrowest reduced dtype for a standard-mode DP over these items, or None when none is narrower than
    ``current`` (today's f dtype) or the profile is too short for fewer bytes to matter.

    Args:
        weights, values: the DP's items (whole numbers, int64).
        capacity: the DP's capacity C.
        lower: a lower bound on the DP's optimum (the tighter, the higher the floor).
        current: the dtype the plain DP would use.
        narrowest: no dtype narrower than this (its name: the device's, :data:`NARROWEST`).
    """
    if capacity < MIN_CAPACITY or weights.size == 0:
        return None
    size = torch.empty((), dtype=current).element_size()
    top_w, top_v = int(weights.max()), int(values.max())
    best = None
    for P, Q in candidates(weights, values, capacity):
        if Q * top_v + P * top_w >= 2**62:
            continue  # r could wrap in int64
        r = _item_values(weights, values, P, Q)
        pos = exact_sum(r[r > 0])
        floor = Q * int(lower) - P * capacity - pos - 1
        low = floor + min(0, int(r.min()))  # the lowest candidate an update forms
        for name in NARROW[NARROW.index(narrowest) :]:
            dtype = getattr(torch, name)
            info = torch.iinfo(dtype)
            if info.bits // 8 >= size or (best is not None and info.bits >= best[2]):
                break
            if pos - low <= info.max - info.min:
                offset = 0 if (low >= info.min and pos <= info.max) else low - info.min
                best = (Scale(P, Q, offset, floor - offset), dtype, info.bits)
                break
    return None if best is None else best[:2]


def _item_values(weights: np.ndarray, values: np.ndarray, P: int, Q: int) -> np.ndarray:
    """r_i = Q*v_i - P*w_i in int64 (the caller checked that Q*v + P*w stays below 2**62)."""
    return Q * values.astype(np.int64) - P * weights.astype(np.int64)


def reduced_values(weights: np.ndarray, values: np.ndarray, scale: Scale, dtype: torch.dtype) -> np.ndarray:
    """r_i = Q*v_i - P*w_i in ``dtype`` (exact: :func:`choose` checked the range and that int64 does not wrap)."""
    from .dtypes import numpy_dtype

    return _item_values(weights, values, scale.P, scale.Q).astype(numpy_dtype(dtype))

"""Exact reductions applied before any DP: each keeps the optimum and the canonical (dp_knapsack) selection.

- zero-value items are never needed (a strict-improvement backtrack never takes them);
- items heavier than the capacity can never be taken;
- zero-weight items with positive value are always taken;
- when everything left fits, everything left is taken;
- weights and capacity are divided by the gcd of the weights (capacity rounded down);
- when the total weight S exceeds C by less than C, the complement is shorter: choose what to leave out, covering
  at least S - C of weight at the least lost value (``cover`` mode of the passes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .dtypes import choose_dtype, dantzig_bound, fits, numpy_dtype
from .problem import Instance


@dataclass(frozen=True)
class Reduced:
    """What is left for the DP after the reductions.

    Attributes:
        items: original indices of the items the DP decides, ascending.
        weights: their weights in DP units (divided by ``gcd``), int64.
        values: their values, int64 or float64, all > 0.
        capacity: the capacity in DP units.
        cover: the DP solves the complement (what to leave out) over ``target + 1`` cover levels.
        target: the profile's last index: ``capacity`` or, in cover mode, ``sum(weights) - capacity``.
        forced: original indices taken without any DP.
        gcd: the divisor applied to weights and capacity.
        dtype: the DP dtype.
        applied: names of the reductions that changed something, for ``stats``.
    """

    items: np.ndarray
    weights: np.ndarray
    values: np.ndarray
    capacity: int
    cover: bool
    target: int
    forced: np.ndarray
    gcd: int
    dtype: torch.dtype
    applied: tuple[str, ...]

    @property
    def n(self) -> int:
        return int(self.items.shape[0])

    def dp_values(self) -> np.ndarray:
        """Values as the passes add them: in the DP dtype, negated in cover mode (leaving an item out loses it)."""
        v = self.values.astype(numpy_dtype(self.dtype))
        return -v if self.cover else v


def _bytes(length: int, dtype: torch.dtype) -> int:
    return length * (torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits) // 8


def reduce(inst: Instance, requested: torch.dtype | None = None, *, whole_profile: bool = False) -> Reduced:
    """Apply the exact reductions.

    Args:
        inst: a validated instance.
        requested: the caller's dtype, or None to choose an exact one.
        whole_profile: keep every capacity meaningful (for :func:`knapsack_gpu.profile`): no take-all, no complement.

    Returns:
        A :class:`Reduced` problem; ``n == 0`` means the answer is ``forced``.

    Raises:
        ValueError: from :func:`choose_dtype`.
    """
    w, v, cap = inst.weights, inst.values, inst.capacity
    applied: list[str] = []
    positive = v > 0
    if not positive.all():
        applied.append("zero-value")
    fitting = w <= cap
    if not fitting.all():
        applied.append("heavy")
    free = positive & (w == 0)
    if free.any():
        applied.append("zero-weight")
    keep = positive & fitting & (w > 0)
    forced = np.flatnonzero(free)
    items = np.flatnonzero(keep)
    wk, vk = w[items], v[items]
    total_w = int(wk.sum()) if items.size else 0

    if not whole_profile and total_w <= cap:
        if items.size:
            applied.append("take-all")
        forced = np.union1d(forced, items)
        items = items[:0]
        wk, vk = wk[:0], vk[:0]

    g = math.gcd(*wk.tolist()) if wk.size else 1
    if g > 1:
        applied.append("gcd")
        wk = wk // g
        cap //= g
        total_w //= g

    bound = None
    if inst.integral:
        # Forced values count too: profile() adds them to every capacity in the DP dtype.
        bound = int(v[forced].sum()) + (min(int(vk.sum()), dantzig_bound(wk, vk, cap)) if vk.size else 0)
    dtype = choose_dtype(inst.integral, bound, requested)

    cover = False
    target = cap
    if not whole_profile and items.size and total_w - cap < cap:
        # Complement: the sentinel for "cannot cover" and the split sums reach twice the value total.
        cover_bound = 2 * int(vk.sum()) + 2 if inst.integral else None
        cover_dtype = dtype if fits(dtype, cover_bound) else None
        if cover_dtype is None and requested is None and fits(torch.int64, cover_bound):
            cover_dtype = torch.int64
        if cover_dtype is not None and _bytes(total_w - cap + 1, cover_dtype) < _bytes(cap + 1, dtype):
            cover, target, dtype = True, total_w - cap, cover_dtype
            applied.append("complement")

    return Reduced(
        items=items,
        weights=wk.astype(np.int64),
        values=vk,
        capacity=cap,
        cover=cover,
        target=target,
        forced=forced,
        gcd=g,
        dtype=dtype,
        applied=tuple(applied),
    )

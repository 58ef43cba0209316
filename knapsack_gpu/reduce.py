"""Exact reductions applied before any DP. Each keeps every optimal selection (or, where noted, one of them).

- zero-value items are never needed (a strict-improvement backtrack never takes them);
- items heavier than the capacity can never be taken;
- zero-weight items with positive value are always taken;
- when everything left fits, everything left is taken;
- identical items (same weight and value) become binary bundles of 1, 2, 4, ... copies (any count stays reachable),
  so a few hundred distinct items replace thousands (default mode only: it changes which copies are chosen);
- variable fixing (Dembo and Hammer): an item whose opposite choice bounds every solution below the lower bound L
  keeps its LP choice; the selections worth L or more, every optimal one among them, all agree with it;
- weights and capacity are divided by the gcd of the weights (capacity rounded down).

The complement (choose what to leave out) is a choice of the plan, not a reduction: see :mod:`knapsack_gpu.plan`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import bounds as bounds_mod
from .arith import exact_sum
from .bounds import Bounds
from .dtypes import choose_dtype
from .lazy import torch
from .problem import Instance


@dataclass(frozen=True)
class Groups:
    """How DP items map back to the caller's items: DP item k stands for ``size[k]`` copies out of group
    ``group[k]``, whose original indices are ``members[ptr[g]:ptr[g + 1]]`` (ascending); ``taken[g]`` copies of
    group g are already in the knapsack (fixed there before the DP). Without bundling every group is one item and
    every size is 1. Copies are handed out first-index first, whichever stage took them."""

    group: np.ndarray
    size: np.ndarray
    ptr: np.ndarray
    members: np.ndarray
    taken: np.ndarray

    @staticmethod
    def single(items: np.ndarray) -> Groups:
        m = items.size
        ones = np.ones(m, dtype=np.int64)
        return Groups(np.arange(m, dtype=np.int64), ones, np.arange(m + 1), items, np.zeros(m, dtype=np.int64))

    def take(self, keep: np.ndarray) -> Groups:
        """The groups of a subset of DP items (positions ``keep``), in that order."""
        return replace(self, group=self.group[keep], size=self.size[keep])

    def fix(self, positions: np.ndarray) -> Groups:
        """These groups with the DP items at ``positions`` put in the knapsack (they stay listed; drop them with
        :meth:`take`)."""
        return replace(self, taken=self.taken + self._counts(positions))

    def _counts(self, positions: np.ndarray) -> np.ndarray:
        counts = np.bincount(self.group[positions], weights=self.size[positions], minlength=self.ptr.size - 1)
        return counts.astype(np.int64)

    def originals(self, chosen: np.ndarray) -> np.ndarray:
        """Original indices of the copies taken before the DP and of the chosen DP items (ascending)."""
        counts = self.taken + self._counts(np.asarray(chosen, dtype=np.int64))
        g = np.flatnonzero(counts)
        starts = np.repeat(self.ptr[g], counts[g])
        offsets = np.arange(starts.size) - np.repeat(np.cumsum(counts[g]) - counts[g], counts[g])
        return np.sort(self.members[starts + offsets])


@dataclass(frozen=True)
class Reduced:
    """What is left for the DP after the reductions.

    Attributes:
        weights: DP item weights in DP units (divided by ``gcd``), int64 (m,).
        values: DP item values, int64 or float64 (m,), all > 0.
        capacity: the capacity in DP units.
        free: original indices of the zero-weight items, always taken (ascending).
        groups: DP items -> original indices (see :class:`Groups`).
        gcd: the divisor applied to weights and capacity.
        dtype: the DP dtype (exact for whole-number values).
        integral: whole-number values.
        bounds: bounds of the DP part (None when nothing is left or for a whole profile).
        applied: names of the reductions that changed something, for ``stats``.
        fixed: items fixed by variable fixing, {"in": k1, "out": k0} (original items).
        offset: value of the forced items (exact int, or float).
        narrow: a dense plan may run in reduced values (:mod:`knapsack_gpu.reduced`): whole-number values, no dtype
            the caller asked for, not a whole profile.
    """

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    free: np.ndarray
    groups: Groups
    gcd: int
    dtype: torch.dtype
    integral: bool
    bounds: Bounds | None = None
    applied: tuple[str, ...] = ()
    fixed: dict = field(default_factory=lambda: {"in": 0, "out": 0})
    offset: int | float = 0
    narrow: bool = False

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])

    def dp_values(self) -> np.ndarray:
        """Values in the DP dtype."""
        from .dtypes import numpy_dtype

        return self.values.astype(numpy_dtype(self.dtype))

    def selection(self, chosen: np.ndarray | list[int]) -> np.ndarray:
        """Original indices (ascending) of the free items, the copies taken before the DP, and the chosen DP
        items."""
        return np.union1d(self.free, self.groups.originals(np.asarray(chosen, dtype=np.int64))).astype(np.int64)

    @property
    def forced(self) -> np.ndarray:
        """Original indices taken without any DP (free items, take-all, variable fixing)."""
        return self.selection([])


# Bundling pays when it removes at least this share of the items.
BUNDLE_MIN_GAIN = 0.1


def _bundle(w: np.ndarray, v: np.ndarray, items: np.ndarray, capacity: int) -> tuple | None:
    """Binary bundles of identical items (sizes 1, 2, 4, ..., then the remainder: every count stays reachable, and
    bundles heavier than the capacity are dropped, which keeps every feasible count), or None when too few items
    repeat to pay, or a bundle's value could pass int64."""
    key = np.stack([w, v.view(np.int64) if v.dtype.kind == "f" else v], axis=1)
    _, first, inverse, counts = np.unique(key, axis=0, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    bits = np.floor(np.log2(counts + 1)).astype(np.int64)  # 2**bits - 1 <= count < 2**(bits + 1) - 1
    rest = counts - (2**bits - 1)
    if bits.sum() + np.count_nonzero(rest) > (1 - BUNDLE_MIN_GAIN) * w.size:
        return None
    base_w, base_v = w[first], v[first]
    if v.dtype.kind != "f" and int(base_v.max()) * int(counts.max()) >= 2**63:
        return None
    group = np.repeat(np.arange(counts.size), bits)
    size = 2 ** (np.arange(group.size) - np.repeat(np.cumsum(bits) - bits, bits))
    has_rest = np.flatnonzero(rest)
    group = np.concatenate([group, has_rest])
    size = np.concatenate([size, rest[has_rest]]).astype(np.int64)
    keep = np.flatnonzero(size <= capacity // base_w[group])  # size * w <= capacity, without forming the product
    group, size = group[keep], size[keep]
    members = items[np.argsort(inverse, kind="stable")]  # each group's original indices, ascending
    ptr = np.concatenate([[0], np.cumsum(counts)])
    taken = np.zeros(counts.size, dtype=np.int64)
    return base_w[group] * size, base_v[group] * size, Groups(group, size, ptr, members, taken)


def _fix(b: Bounds) -> tuple[np.ndarray, np.ndarray]:
    """Dembo-Hammer: (positions fixed in, positions fixed out). An item whose opposite choice bounds every solution
    below L is fixed to its LP side: d_i > 0 (more efficient than the break item) in, d_i < 0 out."""
    d = b.reduced
    if b.integral:
        # flipping i gives at most floor((num - |d_i|) / den) < L  <=>  |d_i| > num - L * den
        limit = b.lp_num - b.lower * b.lp_den
        if d.dtype == object or not -(2**62) < limit < 2**62:
            strong = np.array([abs(x) > limit for x in d.tolist()], dtype=bool)
        else:
            strong = np.abs(d) > limit
    else:
        strong = b.flip_bound() < b.lower
    return np.flatnonzero(strong & (d > 0)), np.flatnonzero(strong & (d < 0))


def reduce(
    inst: Instance,
    requested: torch.dtype | None = None,
    *,
    whole_profile: bool = False,
    canonical: bool = False,
    fixing: bool = True,
    incumbent: tuple | None = None,
) -> Reduced:
    """Apply the exact reductions.

    Args:
        inst: a validated instance.
        requested: the caller's dtype, or None to choose an exact one.
        whole_profile: keep every capacity meaningful (for :func:`knapsack_gpu.profile`): only the zero-value,
            heavy, zero-weight and gcd reductions.
        canonical: keep dp_knapsack's selection: no bundling (it would pick other copies of identical items).
        fixing: compute bounds and fix variables (off: the DP sees every item, for tests and comparisons).
        incumbent: ``(value, original indices or None)``: a selection found before (the states engine's), worth
            ``value`` over the items a DP needs (zero-weight items aside); when it beats the greedy one it is the lower
            bound that fixes items and prunes cells. Its indices may be unknown (None): then the bounds cannot close
            the instance and a dense plan finds the optimum.

    Returns:
        A :class:`Reduced` problem; ``n == 0`` means the answer is ``forced``.

    Raises:
        ValueError: from :func:`choose_dtype` (the optimum may pass int64).
    """
    w, v, cap = inst.weights, inst.values, inst.capacity
    given, incumbent = incumbent, None
    applied: list[str] = []
    positive = v > 0
    fitting = w <= cap
    free = positive & (w == 0)
    for name, hit in (("zero-value", not positive.all()), ("heavy", not fitting.all()), ("zero-weight", free.any())):
        if hit:
            applied.append(name)
    forced = np.flatnonzero(free)  # the zero-weight items; the rest of what is taken lives in groups.taken
    items = np.flatnonzero(positive & fitting & (w > 0))
    wk, vk, groups = w[items], v[items], Groups.single(items)
    fixed = {"in": 0, "out": 0}
    # incumbent: (value of the DP part, original indices of the whole selection, or None where only the value is known)

    def take_all():
        nonlocal wk, vk, groups
        groups = groups.fix(np.arange(wk.size)).take(np.arange(0))
        wk, vk = wk[:0], vk[:0]

    if not whole_profile:
        if wk.size and exact_sum(wk) <= cap:
            applied.append("take-all")
            take_all()
        bundled = None if canonical or not wk.size else _bundle(wk, vk, items, cap)
        if bundled is not None:
            wk, vk, groups = bundled
            applied.append("bundles")
            if exact_sum(wk) <= cap:  # the bundles that fit (heavier ones were dropped) fit together
                take_all()
        if fixing and wk.size:
            b = bounds_mod.compute(wk, vk, cap, inst.integral)
            if given is not None and given[0] > b.lower:
                b = b.with_lower(given[0], None, given[1])
                applied.append("states")
                incumbent = (b.lower, given[1])
            else:
                incumbent = (b.lower, np.union1d(forced, groups.originals(b.lower_items)))
            fin, fout = _fix(b)
            if fin.size or fout.size:
                applied.append("fixing")
                fixed = {"in": int(groups.size[fin].sum()), "out": int(groups.size[fout].sum())}
                groups = groups.fix(fin)
                cap -= exact_sum(wk[fin])
                incumbent = (incumbent[0] - exact_sum(vk[fin]), incumbent[1])
                rest = np.setdiff1d(np.arange(wk.size), np.concatenate([fin, fout]))
                rest = rest[wk[rest] <= cap]  # heavier than what fixing left: never taken
                wk, vk, groups = wk[rest], vk[rest], groups.take(rest)
                if exact_sum(wk) <= cap:
                    take_all()

    g = math.gcd(*wk.tolist()) if wk.size else 1
    if g > 1:
        applied.append("gcd")
        wk = wk // g
        cap //= g

    b = None
    if not whole_profile and fixing and wk.size:
        b = bounds_mod.compute(wk, vk, cap, inst.integral)
        if incumbent is not None and incumbent[0] > b.lower:
            b = b.with_lower(incumbent[0], None, incumbent[1])
        else:
            b = b.with_lower(b.lower, b.lower_items, np.union1d(forced, groups.originals(b.lower_items)))
    offset = exact_sum(v[np.union1d(forced, groups.originals(np.arange(0)))])
    if not inst.integral:
        bound = None
        top = offset + (b.upper if b is not None else float(np.sum(vk)))
        if not math.isfinite(top):
            raise ValueError(
                "values: the optimum may exceed the largest float64 (about 1.8e308); scale the values down"
            )
    else:
        bound = b.upper if b is not None else bounds_mod.upper_bound(wk, vk, cap)
        # A profile adds the forced items to every cell, and an integer dtype the caller asked for must hold the
        # whole optimum; the default only needs the DP's part (the total is summed in Python integers).
        if whole_profile or requested is not None:
            bound += offset
    dtype = choose_dtype(inst.integral, bound, requested)
    return Reduced(
        weights=wk.astype(np.int64),
        values=vk,
        capacity=cap,
        free=forced.astype(np.int64),
        groups=groups,
        gcd=g,
        dtype=dtype,
        integral=inst.integral,
        bounds=b,
        applied=tuple(applied),
        fixed=fixed,
        offset=offset,
        narrow=inst.integral and requested is None and not whole_profile,
    )

"""The sparse states path: a Pareto list of (weight, value) states, no dense row at all.

After items 0..j (in efficiency order) the list holds the undominated reachable states: sorted by weight, strictly
increasing in value. One item is a handful of vector ops on the list:
- the shifted copy (W + w, V + v) of the states that can still take the item;
- a merge by weight (one search for the shifted states' places; at equal weights the state without the item first);
- dominance: a state survives only if its value beats every lighter state's (a running max);
- fathoming: a state survives only if its value plus the LP bound of the items after j at its remaining capacity can
  still reach the threshold (the lower bound, raised to the best state found so far).
Every state on a path to an optimal selection survives both tests, so the best final state is optimal.

Recovery: each surviving state stores one int32/int64 code per item, 2 * (its index in the previous list) + (took the
item), so the backtrack is one indexed read per item. Capacity never appears as a size: weights up to 2**62 work,
and the memory is the number of states, counted against ``memory_limit``.

The ops run as torch on CUDA and as numpy on the CPU (the same algorithm through :class:`_Ops`): on these long
arrays numpy's searches and index selections cost a third of torch's on one CPU thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .arith import exact_sum
from .bounds import FLOAT_SLACK
from .memory import Meter, format_bytes
from .problem import MAX_EXACT_FLOAT_INT


class StatesOverflow(Exception):
    """The states list outgrew its memory or work budget; the planner falls back to a dense plan."""

    def __init__(self, message: str, states: int, needed_bytes: int):
        super().__init__(message)
        self.states = states
        self.needed_bytes = needed_bytes


@dataclass
class StatesStats:
    peak_states: int = 0
    state_updates: int = 0


# Bytes per state at the peak of one item: the list (W int64, V <= 8 bytes), its shifted copy, the merged list with
# its codes, the positions and masks; counted from the ops below, rounded up.
WORKING_BYTES_PER_STATE = 96


class _Ops:
    """The few array operations the states list needs, on numpy arrays (CPU) or torch tensors (any device)."""

    def __init__(self, device: torch.device, use_torch: bool):
        self.device, self.torch = device, use_torch

    def asarray(self, a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device) if self.torch else a

    def zeros(self, n: int, dtype: np.dtype):
        return torch.zeros(n, dtype=_TORCH[np.dtype(dtype)], device=self.device) if self.torch else np.zeros(n, dtype)

    def empty(self, n: int, dtype: np.dtype):
        return torch.empty(n, dtype=_TORCH[np.dtype(dtype)], device=self.device) if self.torch else np.empty(n, dtype)

    def arange(self, n: int, dtype: np.dtype):
        return (
            torch.arange(n, dtype=_TORCH[np.dtype(dtype)], device=self.device)
            if self.torch
            else np.arange(n, dtype=dtype)
        )

    def searchsorted(self, a, v, right: bool):
        if self.torch:
            return torch.searchsorted(a, v, right=right)
        return np.searchsorted(a, v, side="right" if right else "left")

    def count_le(self, a, x: int) -> int:
        """How many entries of the sorted ``a`` are <= x."""
        if self.torch:
            return int(torch.searchsorted(a, torch.tensor([x], device=self.device), right=True).item())
        return int(np.searchsorted(a, x, side="right"))

    def nonzero(self, mask):
        return torch.nonzero(mask).squeeze(1) if self.torch else np.flatnonzero(mask)

    def cummax(self, x):
        return torch.cummax(x, 0).values if self.torch else np.maximum.accumulate(x)

    def to_float(self, x):
        return x.to(torch.float64) if self.torch else x.astype(np.float64)

    def nbytes(self, x) -> int:
        return x.numel() * x.element_size() if self.torch else x.nbytes

    def item(self, x, i: int):
        return x[i].item()


_TORCH = {
    np.dtype(np.int64): torch.int64,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.bool_): torch.bool,
}


def _suffix_bound(ops: _Ops, weights: np.ndarray, values: np.ndarray):
    """LP bound of items j.. at capacity r, vectorised over r: float64 prefix sums."""
    PW = ops.asarray(np.concatenate([[0.0], np.cumsum(weights.astype(np.float64))]))
    PV = ops.asarray(np.concatenate([[0.0], np.cumsum(values.astype(np.float64))]))
    dens = ops.asarray(np.append(values / weights.astype(np.float64), 0.0))
    m = weights.size

    def bound(j: int, room):
        x = PW[j] + ops.to_float(room)
        k = ops.searchsorted(PW, x, right=True) - 1
        k = k.clamp(j, m) if ops.torch else np.clip(k, j, m)
        lp = PV[k] - PV[j] + (x - PW[k]) * dens[k]
        return lp * (1 + FLOAT_SLACK) + 1.0  # float64 rounding: only ever too high

    return bound


def solve_states(
    weights: np.ndarray,
    values: np.ndarray,
    capacity: int,
    threshold: float,
    *,
    device: torch.device,
    meter: Meter,
    max_updates: int | None = None,
    stats: StatesStats | None = None,
    use_torch: bool | None = None,
) -> tuple[list[int], int | float]:
    """Solve exactly with a states list.

    Args:
        weights: int64 (m,), the items in efficiency order (any order is exact; this one fathoms best).
        values: (m,) int64 (exact: the caller checked the optimum fits) or float64.
        capacity: the capacity (any size below 2**62).
        threshold: a value some selection reaches (the lower bound): states that cannot reach it are dropped.
        device: where the list lives.
        meter: working-memory accounting; the list and the codes must fit its limit.
        max_updates: give up (StatesOverflow) after this many state updates (the planner's work budget).
        stats: filled with the peak list size and the updates done.
        use_torch: torch ops even on the CPU (default: numpy there, torch elsewhere).

    Returns:
        (ascending positions chosen, their total value as the DP computed it).

    Raises:
        StatesOverflow: the list would outgrow the memory limit or the work budget.
    """
    stats = stats if stats is not None else StatesStats()
    ops = _Ops(device, device.type != "cpu" if use_torch is None else use_torch)
    m = weights.size
    vdtype = values.dtype
    bound = _suffix_bound(ops, weights, values)
    W, V = ops.zeros(1, np.int64), ops.zeros(1, vdtype)
    codes: list = []
    code_bytes = 0
    best = float(threshold)
    # The fathoming test adds in float64: exact for whole numbers below 2**53, beyond that (or for float values) it
    # needs a margin relative to the values' size, or rounding drops the very state that reaches the threshold.
    inexact = vdtype.kind == "f" or max(abs(best), exact_sum(values)) >= MAX_EXACT_FLOAT_INT
    slack = FLOAT_SLACK * max(1.0, abs(best)) if inexact else 0.0
    w_list, v_list = weights.tolist(), values.tolist()
    for j in range(m):
        w, v = w_list[j], v_list[j]
        n = W.shape[0]
        k = ops.count_le(W, capacity - w)
        total = n + k
        needed = code_bytes + WORKING_BYTES_PER_STATE * total
        if needed > meter.limit - meter.current:
            raise StatesOverflow(
                f"the states list needs {needed} bytes ({format_bytes(needed)}) at item {j} of {m} "
                f"({total} states), over what memory_limit leaves ({format_bytes(meter.limit - meter.current)})",
                total,
                needed,
            )
        meter.note_peak(needed)
        if max_updates is not None and stats.state_updates + total > max_updates:
            raise StatesOverflow(f"the states list passed its work budget of {max_updates} updates", total, needed)
        stats.state_updates += total
        W2, V2 = W[:k] + w, V[:k] + v
        # Merge: a shifted state goes after the states no heavier than it (one search); the others fill the rest.
        pos_b = ops.arange(k, np.int64) + ops.searchsorted(W, W2, right=True)
        shifted = ops.zeros(total, np.bool_)
        shifted[pos_b] = True
        pos_a = ops.nonzero(~shifted)
        code_dtype = np.int32 if 2 * n < 2**31 else np.int64
        mW, mV, mC = ops.empty(total, np.int64), ops.empty(total, vdtype), ops.empty(total, code_dtype)
        mW[pos_a], mW[pos_b] = W, W2
        mV[pos_a], mV[pos_b] = V, V2
        mC[pos_a] = 2 * ops.arange(n, code_dtype)
        mC[pos_b] = 2 * ops.arange(k, code_dtype) + 1
        # Dominance: beat every lighter state; of two states with one weight (without, then with the item) keep
        # only the better one.
        keep = ops.zeros(total, np.bool_)
        keep[0] = True
        keep[1:] = mV[1:] > ops.cummax(mV)[:-1]
        if total > 1:
            keep[:-1] &= ~((mW[:-1] == mW[1:]) & (mV[1:] > mV[:-1]))
        idx = ops.nonzero(keep)
        # Fathoming, on the undominated states only: their value plus the LP bound of the items after j must
        # reach the best known value.
        reach = ops.to_float(mV[idx]) + bound(j + 1, capacity - mW[idx]) >= best - slack
        idx = idx[reach]
        W, V, code = mW[idx], mV[idx], mC[idx]
        codes.append(code)
        code_bytes += ops.nbytes(code)
        if W.shape[0] == 0:  # the threshold is reachable, so some state always survives
            raise RuntimeError(f"internal error: the states list lost every state at item {j} of {m}")
        stats.peak_states = max(stats.peak_states, int(W.shape[0]))
        best = max(best, float(ops.item(V, -1)))
    meter.note_peak(code_bytes)
    idx = int(W.shape[0]) - 1
    value = ops.item(V, idx)
    chosen = []
    for j in range(m - 1, -1, -1):
        c = int(codes[j][idx])
        if c & 1:
            chosen.append(j)
        idx = c >> 1
    chosen.reverse()
    return chosen, value

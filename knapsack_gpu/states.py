"""The sparse states path: a Pareto list of (weight, value) states, no dense row at all.

After items 0..j (in efficiency order) the list holds the undominated reachable states: sorted by weight, strictly
increasing in value. One item is a handful of torch ops on the list's device:
- the shifted copy (W + w, V + v) of the states that can still take the item;
- a merge by weight (searchsorted positions; at equal weights the state without the item first);
- dominance: a state survives only if its value beats every lighter state's (a running max);
- fathoming: a state survives only if its value plus the LP bound of the items after j at its remaining capacity
  can still reach the threshold (the lower bound, raised to the best state found so far).
Every state on a path to an optimal selection survives both tests, so the best final state is optimal.

Recovery: each surviving state stores one int32/int64 code per item, 2 * (its index in the previous list) + (took the
item), so the backtrack is one indexed read per item. Capacity never appears as a size: weights up to 2**62 work,
and the memory is the number of states, counted against ``memory_limit``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .bounds import FLOAT_SLACK
from .memory import Meter, format_bytes


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
# its codes and masks, and the sort positions; measured on the ops below, rounded up.
WORKING_BYTES_PER_STATE = 96


def _suffix_bound(weights: np.ndarray, values: np.ndarray, device: torch.device):
    """LP bound of items j.. at capacity r, vectorised over r: float64 prefix sums on the device."""
    w = torch.from_numpy(weights.astype(np.float64)).to(device)
    v = torch.from_numpy(values.astype(np.float64)).to(device)
    zero = torch.zeros(1, dtype=torch.float64, device=device)
    PW, PV = torch.cat([zero, torch.cumsum(w, 0)]), torch.cat([zero, torch.cumsum(v, 0)])
    dens = torch.cat([v / w, zero])
    m = weights.size

    def bound(j: int, room: torch.Tensor) -> torch.Tensor:
        if j >= m:
            return torch.zeros_like(room, dtype=torch.float64)
        x = PW[j] + room.to(torch.float64)
        k = torch.clamp(torch.searchsorted(PW, x, right=True) - 1, min=j, max=m)
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
    dtype: torch.dtype,
    meter: Meter,
    max_updates: int | None = None,
    stats: StatesStats | None = None,
) -> tuple[list[int], int | float]:
    """Solve exactly with a states list.

    Args:
        weights: int64 (m,), the items in efficiency order (any order is exact; this one fathoms best).
        values: (m,) int64 or float64.
        capacity: the capacity (any size below 2**62).
        threshold: a value some selection reaches (the lower bound): states that cannot reach it are dropped.
        device: where the list lives.
        dtype: int64 for whole-number values (exact), float64 otherwise.
        meter: working-memory accounting; the list and the codes must fit its limit.
        max_updates: give up (StatesOverflow) after this many state updates (the planner's work budget).
        stats: filled with the peak list size and the updates done.

    Returns:
        (ascending positions chosen, their total value as the DP computed it).

    Raises:
        StatesOverflow: the list would outgrow the memory limit or the work budget.
    """
    stats = stats if stats is not None else StatesStats()
    m = weights.size
    bound = _suffix_bound(weights, values, device)
    W = torch.zeros(1, dtype=torch.int64, device=device)
    V = torch.zeros(1, dtype=dtype, device=device)
    codes: list[torch.Tensor] = []
    code_bytes = 0
    best = float(threshold)
    slack = FLOAT_SLACK * max(1.0, abs(best)) if dtype.is_floating_point else 0.0
    w_list, v_list = weights.tolist(), values.tolist()
    for j in range(m):
        w, v = w_list[j], v_list[j]
        n = W.shape[0]
        k = int(torch.searchsorted(W, torch.tensor([capacity - w], device=device), right=True).item())
        W2, V2 = W[:k] + w, V[:k] + v
        pos_a = torch.arange(n, device=device) + torch.searchsorted(W2, W, right=False)
        pos_b = torch.arange(k, device=device) + torch.searchsorted(W, W2, right=True)
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
        mW = torch.empty(total, dtype=torch.int64, device=device)
        mV = torch.empty(total, dtype=dtype, device=device)
        code_dtype = torch.int32 if 2 * n < 2**31 else torch.int64
        mC = torch.empty(total, dtype=code_dtype, device=device)
        mW[pos_a], mW[pos_b] = W, W2
        mV[pos_a], mV[pos_b] = V, V2
        mC[pos_a] = 2 * torch.arange(n, dtype=code_dtype, device=device)
        mC[pos_b] = 2 * torch.arange(k, dtype=code_dtype, device=device) + 1
        # Dominance: beat every lighter state; of two states with one weight (without, then with the item) keep
        # only the better one.
        prev = torch.cummax(mV, 0).values
        keep = torch.ones(total, dtype=torch.bool, device=device)
        keep[1:] = mV[1:] > prev[:-1]
        if total > 1:
            keep[:-1] &= ~((mW[:-1] == mW[1:]) & (mV[1:] > mV[:-1]))
        # Fathoming: the state plus the LP bound of the items after j must reach the best known value.
        keep &= mV.to(torch.float64) + bound(j + 1, capacity - mW) >= best - slack
        W, V = mW[keep], mV[keep]
        code = mC[keep]
        codes.append(code)
        code_bytes += code.numel() * code.element_size()
        stats.peak_states = max(stats.peak_states, int(W.shape[0]))
        top = V[-1].item()
        best = max(best, float(top))
    meter.note_peak(code_bytes)
    idx = int(W.shape[0]) - 1
    value = V[idx].item()
    chosen = []
    for j in range(m - 1, -1, -1):
        c = int(codes[j][idx].item())
        if c & 1:
            chosen.append(j)
        idx = c >> 1
    chosen.reverse()
    return chosen, value

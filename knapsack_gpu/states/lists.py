"""The state list's operations, vectorised: numpy on the host (the python binding: the reference the compiled
loops are tested against, the fallback without numba, and the exact path for sums past int64) and torch on a CUDA
device (the device binding, for lists long enough to pay a launch per operation).

They have the compiled ops' contract (:mod:`.kernels`: ``merge_c``, ``prune_c``, ``room_for_c``, ``state_at_c``)
on a list ``L = (W, P, V)`` of exactly ``IR[SIZE]`` states, and return the same states in the same order.
"""

from __future__ import annotations

import numpy as np

from .. import lazy
from . import exact
from .kernels.registers import INTEGRAL, LIST_BYTES, MEM_BYTES, SIZE, Z1, C

# Bytes a candidate state costs at the peak of a vectorised merge: the merged weights, values and bits and their
# order (32), the sorted copies, running maximum and mask (25), and the kept list (24), with room to spare.
BYTES_PER_CANDIDATE = 96
# torch's CPU cummax runs 0.7 ns an int64 against numpy's accumulate at 2.5 (one EPYC thread, 4e5 entries): long
# arrays borrow it without a copy where the process has imported torch already (importing it costs 1-2 s); short
# ones stay with numpy (torch's call costs ~5 us).
CUMMAX_TORCH = 4096


def _cummax(a: np.ndarray) -> np.ndarray:
    if a.size > CUMMAX_TORCH and a.dtype != object and lazy.loaded():
        import torch

        return torch.cummax(torch.from_numpy(a), 0).values.numpy()
    return np.maximum.accumulate(a)


def scalar(x):
    """A Python number from a numpy or torch scalar (Python integers pass through)."""
    return x.item() if hasattr(x, "item") else x


def merge_np(L, IR, pu, wu, sign, bit):
    s = IR[SIZE]
    W, P, V = L[0][:s], L[1][:s], L[2][:s]
    # the step's sign is an np.int64: a Python-integer shift past int64 (a bundle's) would be cast to it and overflow
    sg = int(sign)
    dw, dp = sg * int(wu), sg * scalar(pu)
    NW = np.concatenate([W, W + dw])
    NP = np.concatenate([P, P + dp])
    NV = np.concatenate([V & ~bit, V | bit])
    # two sorted runs: numpy's stable argsort (timsort on int64) merges them in linear time, unshifted first on ties
    o = np.argsort(NW, kind="stable")
    mW, mP = NW[o], NP[o]
    keep = np.empty(mW.size, dtype=bool)
    keep[0] = True
    np.greater(mP[1:], _cummax(mP)[:-1], out=keep[1:])
    idx = np.flatnonzero(keep)
    wk = mW[idx]
    last = np.empty(idx.size, dtype=bool)
    last[-1] = True
    np.not_equal(wk[1:], wk[:-1], out=last[:-1])  # of equal weights, the last (most valuable) survives
    idx = idx[last]
    W2 = mW[idx]
    return (W2, mP[idx], NV[o[idx]]), int(idx.size), int(np.searchsorted(W2, IR[C], side="right"))


def fathom_np(P, W, z1, c, pt, wt, integral):
    """Mask of (P - z1) wt + (c - W) pt >= 0, exact for whole numbers (int64 or Python integers)."""
    if not integral:
        return (P - z1) + (c - W) * (pt / wt) >= 0
    if P.dtype == object:
        return (P - z1) * wt + (c - W) * pt >= 0
    return exact.lin_ge0(P - np.int64(z1), int(wt), np.int64(c) - W, int(pt))


def prune_np(L, IR, VR, k, feasible, t, s, UP, UW):
    W, P, V = L
    keep = np.zeros(k, dtype=bool)
    z1, c, integral = scalar(VR[Z1]), int(IR[C]), IR[INTEGRAL] == 1
    for lo, hi, u in ((0, feasible, t), (feasible, k, s)):
        if u >= 0 and hi > lo:
            keep[lo:hi] = fathom_np(P[lo:hi], W[lo:hi], z1, c, scalar(UP[u]), int(UW[u]), integral)
    idx = np.flatnonzero(keep)
    return (W[idx], P[idx], V[idx]), int(idx.size)


def room_for_np(L, IR, m) -> bool:
    need = m * BYTES_PER_CANDIDATE
    if need > IR[MEM_BYTES]:
        return False
    IR[LIST_BYTES] = max(IR[LIST_BYTES], need)  # the peak the engine reports
    return True


def state_at_np(L, IR, j):
    return scalar(L[1][j]), int(L[0][j]), int(L[2][j])


# --- torch on a CUDA device ------------------------------------------------------------------------------------------


def merge_torch(L, IR, pu, wu, sign, bit):
    import torch

    W, P, V = L
    dw, dp = sign * int(wu), sign * scalar(pu)
    NW = torch.cat([W, W + dw])
    NP = torch.cat([P, P + dp])
    NV = torch.cat([V & ~int(bit), V | int(bit)])
    o = torch.argsort(NW, stable=True)  # a radix sort on CUDA
    mW, mP = NW[o], NP[o]
    keep = torch.empty(mW.shape[0], dtype=torch.bool, device=W.device)
    keep[0] = True
    torch.gt(mP[1:], torch.cummax(mP, 0).values[:-1], out=keep[1:])
    idx = torch.nonzero(keep).squeeze(1)
    wk = mW[idx]
    last = torch.ones(idx.shape[0], dtype=torch.bool, device=W.device)
    last[:-1] = wk[1:] != wk[:-1]
    idx = idx[last]
    W2 = mW[idx]
    c = torch.tensor([int(IR[C])], dtype=W2.dtype, device=W2.device)
    return (W2, mP[idx], NV[o[idx]]), int(idx.shape[0]), int(torch.searchsorted(W2, c, right=True).item())


def prune_torch(L, IR, VR, k, feasible, t, s, UP, UW):
    import torch

    W, P, V = L
    keep = torch.zeros(k, dtype=torch.bool, device=W.device)
    z1, c, integral = scalar(VR[Z1]), int(IR[C]), IR[INTEGRAL] == 1
    for lo, hi, u in ((0, feasible, t), (feasible, k, s)):
        if u < 0 or hi <= lo:
            continue
        pt, wt = scalar(UP[u]), int(UW[u])
        Pp, Wp = P[lo:hi], W[lo:hi]
        if not integral:
            keep[lo:hi] = (Pp - z1) + (c - Wp) * (pt / wt) >= 0
            continue
        # P and W increase along the list: the extremes bound the products
        amax = max(abs(int(Pp[0]) - z1), abs(int(Pp[-1]) - z1))
        bmax = max(abs(c - int(Wp[0])), abs(c - int(Wp[-1])))
        if amax * wt < exact.SAFE_PRODUCT and bmax * pt < exact.SAFE_PRODUCT:
            keep[lo:hi] = (Pp - z1) * wt + (c - Wp) * pt >= 0
        else:  # rare: exact on the host
            mask = exact.lin_ge0(Pp.cpu().numpy() - np.int64(z1), wt, np.int64(c) - Wp.cpu().numpy(), pt)
            keep[lo:hi] = torch.from_numpy(mask).to(W.device)
    idx = torch.nonzero(keep).squeeze(1)
    return (W[idx], P[idx], V[idx]), int(idx.shape[0])


def state_at_torch(L, IR, j):
    return L[1][j].item(), int(L[0][j].item()), int(L[2][j].item())

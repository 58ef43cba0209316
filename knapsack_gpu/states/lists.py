"""The few array operations the state list needs, on numpy arrays (the CPU) or torch tensors (any device).

On one CPU thread numpy's searches and gathers on these arrays cost a third of torch's and a tenth of its per-call
overhead, so the CPU runs numpy; CUDA runs torch once the list is long enough to pay for a launch per op. Object
arrays (Python integers, for instances whose sums pass int64) run on numpy.
"""

from __future__ import annotations

import numpy as np
import torch

CUMMAX_TORCH = 4096
_TORCH = {np.dtype(np.int64): torch.int64, np.dtype(np.float64): torch.float64, np.dtype(np.bool_): torch.bool}


class NumpyOps:
    torch = False
    min_states = 0  # the list size from which these ops are used

    def __init__(self, device: torch.device | None = None):
        self.device = torch.device("cpu")

    def put(self, a: np.ndarray):
        return a

    def host(self, a) -> np.ndarray:
        return a

    def cummax(self, a):
        # torch's CPU cummax runs 0.7 ns an int64 against numpy's accumulate at 2.5 (measured on one EPYC thread at
        # 4e5 entries), so long arrays borrow it without a copy; short ones stay with numpy (torch's call costs ~5 us)
        if a.size > CUMMAX_TORCH and a.dtype != object:
            return torch.cummax(torch.from_numpy(a), 0).values.numpy()
        return np.maximum.accumulate(a)

    def greater(self, a, b, out) -> None:
        np.greater(a, b, out=out)

    def nonzero(self, mask):
        return np.flatnonzero(mask)

    def take(self, a, idx):
        """a[idx] for an index array: np.take is a third faster than fancy indexing (and boolean masks are ten
        times slower than either: compress with nonzero first)."""
        return np.take(a, idx)

    def argsort(self, a):
        return np.argsort(a, kind="stable")

    def bools(self, n: int):
        return np.empty(n, dtype=bool)

    def index_le(self, a, x) -> int:
        """How many entries of the sorted ``a`` are <= x."""
        return int(np.searchsorted(a, x, side="right"))

    def argmax(self, a) -> int:
        return int(np.argmax(a))

    def outer_add(self, a, b):
        """(b[:, None] + a[None, :]).ravel(): b's shifts of the whole list a, one run per shift."""
        return (b[:, None] + a[None, :]).ravel()

    def outer_or(self, a, b):
        return (b[:, None] | a[None, :]).ravel()


class TorchOps(NumpyOps):
    """torch ops on ``device``, for lists of ``min_states`` states or more (shorter ones run numpy on the host)."""

    torch = True

    def __init__(self, device: torch.device, min_states: int = 0):
        self.device = device
        self.min_states = min_states

    def put(self, a: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def host(self, a) -> np.ndarray:
        return a.cpu().numpy()

    def cummax(self, a):
        return torch.cummax(a, 0).values

    def greater(self, a, b, out) -> None:
        torch.gt(a, b, out=out)

    def nonzero(self, mask):
        return torch.nonzero(mask).squeeze(1)

    def take(self, a, idx):
        return a[idx]

    def argsort(self, a):
        return torch.argsort(a, stable=True)

    def bools(self, n: int):
        return torch.empty(n, dtype=torch.bool, device=self.device)

    def index_le(self, a, x) -> int:
        return int(torch.searchsorted(a, torch.tensor([x], dtype=a.dtype, device=self.device), right=True).item())

    def argmax(self, a) -> int:
        return int(torch.argmax(a).item())

    def outer_add(self, a, b):
        return (b[:, None] + a[None, :]).reshape(-1)

    def outer_or(self, a, b):
        return (b[:, None] | a[None, :]).reshape(-1)

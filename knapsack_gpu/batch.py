"""Many instances in one call: :func:`solve_batch`.

The batch (rows of weights and values, a capacity each) is checked and made whole once
(:mod:`knapsack_gpu.batch_input`), then solved where it runs best:

- on the CPU, every row in compiled code (:func:`knapsack_gpu.states.kernels.batch.first_runs`: the states engine's
  first run, the search a single solve starts with), ``threads`` cores taking blocks of rows; a row that the first
  run does not close within its budget goes through the whole planner (:func:`knapsack_gpu.solve`), one by one, so
  every row gets its proven optimum;
- on CUDA, where the capacities are moderate (:func:`knapsack_gpu.dense.batch.fits`), one dense DP over a
  (B, C + 1) profile, one launch per item for the whole batch (:mod:`knapsack_gpu.dense.batch`);
- under an initialised torch.distributed group (world size > 1), each rank solves every world-th row and every rank
  gets every answer (:mod:`knapsack_gpu.distributed.batch`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from . import batch_input, numba_jit
from .batch_input import Batch

# State updates a row's compiled first run may take before the whole planner takes the row over: a POMO-style row
# (n = 100, uniform floats) takes ~200, kplib's uncorrelated n = 1,000 a few thousand; rows that need combo's extras
# (a list past ~1,000 states) leave the first run before it, whatever this says.
ROW_UPDATES = 200_000
# Rows a worker thread takes at a time: blocks small enough that a hard row does not leave the others idle, large
# enough that a block costs one call (a few microseconds) among hundreds of rows.
BLOCK_ROWS = 256
# Bytes a row's list may take in its first run where no memory_limit is given: ROW_UPDATES bound it to ~100,000
# states (two updates a state), under 5 MB; past this a row goes to the planner, which plans its own memory.
ROW_BYTES = 64 << 20
STRATEGIES = (None, "auto", "dense", "states")


class BatchSolution(NamedTuple):
    """The optima of a batch, as tensors on the input's device (numpy arrays where no input was a tensor).

    Attributes:
        value: (*,) each row's optimum: int64 for whole-number values, float64 for float values (exact: the sum of
            the chosen values, which a float's power-of-two scale keeps exact).
        selected: (*, n) bool: the chosen items of each row (False on a row's padding).
        weight: (*,) their total weight (<= the row's capacity): int64 for whole-number weights, float64 for float
            weights (summed exactly at the row's scale, then rounded once).
        stats: how it was solved: ``rows``, ``items`` (n), ``engines`` (rows answered by each: "compiled" the
            compiled first runs, "planner" the whole planner one by one, "dense" the batched dense DP),
            ``strategies`` (the planner's strategies, counted), ``device``, ``threads``, ``binding``,
            ``weight_exponent`` and ``value_exponent`` (the least and the most power of two a row was scaled by, as
            (min, max)), ``seconds`` and, of them, ``planner_seconds``; under torch.distributed, ``ranks`` (the
            counts are every rank's); on a dense batch ``dense_backend`` and ``launches``.
    """

    value: object
    selected: object
    weight: object
    stats: dict


def solve_batch(
    weights,
    values,
    capacity,
    *,
    device="auto",
    threads: int | None = None,
    memory_limit: int | None = None,
    backend: str = "auto",
    strategy: str | None = None,
) -> BatchSolution:
    """Solve many 0/1 knapsacks exactly in one call.

    Args:
        weights: (*, n) numbers >= 0 (a torch tensor, a numpy array, or a list of rows), or (n,): one weight vector
            shared by every row of ``values`` (predict-then-optimise). Whole numbers below 2**62, or floats of any
            dtype, solved exactly at each row's power of two (:mod:`knapsack_gpu.dyadic`). Rows of different
            lengths (a list of rows) are padded with items of weight 0 and value 0, which are never chosen.
        values: (*, n) finite numbers >= 0 (whole numbers below 2**63, or floats).
        capacity: a number >= 0 for every row, or one per row, shape (*,).
        device: "auto" (CUDA where available), "cpu", "cuda", "cuda:N" or a torch.device: where the batch is solved
            (the answers go back to the input's device).
        threads: CPU threads that take rows (None: the cores this process may use, or torch's intra-op threads
            where torch is in use).
        memory_limit: working memory a row may take on the CPU (a dense batch on CUDA: the whole batch), in bytes
            or as a size ("2GB", "512MiB"); None: a safe share of what is free.
        backend: the dense batch's pass on CUDA: "auto", "torch" or "triton".
        strategy: None or "auto": the dense batch on CUDA where the capacities are moderate
            (:func:`knapsack_gpu.dense.batch.rows_for`), the compiled first runs on the CPU for the rest; "dense"
            forces the dense batch for every row it can take, on ``device`` (the CPU too: torch ops, or Triton's
            interpreter), "states" the CPU path.

    Returns:
        A :class:`BatchSolution` (value, selected, weight, stats).

    Raises:
        TypeError, ValueError: bad input, naming the row and index (``weights[3, 17] = nan``); float weights whose
            exact scale passes 2**62; a row whose optimum may pass int64.
    """
    t0 = time.perf_counter()
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r}; choose one of {', '.join(map(repr, STRATEGIES))}")
    batch = batch_input.read(weights, values, capacity)
    threads = _threads(threads)
    from .sizes import byte_count

    memory_limit = byte_count(memory_limit, "memory_limit")
    stats = {
        "rows": batch.rows,
        "items": batch.n,
        "engines": {"compiled": 0, "planner": 0, "dense": 0},
        "strategies": {},
        "device": "cpu",
        "threads": threads,
        "binding": None,
        "weight_exponent": batch.exponent_range("weights"),
        "value_exponent": batch.exponent_range("values"),
        "seconds": 0.0,
        "planner_seconds": 0.0,
    }
    out = _Answers(batch)
    strategy = strategy or "auto"
    if _shared():
        from .distributed import batch as shared

        def mine(rows: np.ndarray) -> None:
            _solve_rows(batch, out, stats, device, threads, memory_limit, backend, strategy, rows)

        shared.solve_shared(batch, out, stats, mine)
    else:
        _solve_rows(batch, out, stats, device, threads, memory_limit, backend, strategy)
    stats["seconds"] = time.perf_counter() - t0
    return out.result(stats)


def _shared() -> bool:
    """Whether this process is a rank of an initialised process group (never imports torch)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return False
    from .distributed import batch as shared

    return shared.active()


def _threads(threads: object) -> int:
    if threads is None:
        import sys

        torch = sys.modules.get("torch")
        if torch is not None:
            return max(1, torch.get_num_threads())
        from .jit import cores

        return cores()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be a positive integer or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads = {threads}: it must be at least 1")
    return int(threads)


class _Answers:
    """Each row's answer as whole numbers at its scale: the optimum, the selection's weight, its items, and
    which rows have one."""

    def __init__(self, batch: Batch):
        B, n = batch.rows, batch.n
        self.batch = batch
        self.value = np.zeros(B, dtype=np.int64)
        self.float_value = np.zeros(B, dtype=np.float64)  # rows solved in float values
        self.weight = np.zeros(B, dtype=np.int64)
        self.chosen = np.zeros((B, n), dtype=np.bool_)
        self.went = np.zeros(B, dtype=np.int64)

    def result(self, stats: dict) -> BatchSolution:
        return BatchSolution(*self.batch.answer(self.value, self.float_value, self.weight, self.chosen), stats)


def _solve_rows(batch: Batch, out: _Answers, stats: dict, device, threads: int, memory_limit, backend: str,
                strategy: str, rows: np.ndarray | None = None) -> None:  # fmt: skip
    """Rows ``rows`` of the batch (None: all) into ``out``: the dense batch on CUDA where it fits (or where
    ``strategy`` is "dense"), else the compiled first runs on the CPU and the planner for the rest."""
    todo = np.arange(batch.rows) if rows is None else rows
    dense = strategy == "dense"
    if device != "cpu" or dense:
        from .backends import resolve_device  # (imports torch: only where the device is not the CPU)

        dev = resolve_device(device)
        dense = dense or (strategy == "auto" and dev.type == "cuda")
    if dense and todo.size:
        from .dense import batch as dense_batch

        done = dense_batch.solve(batch, out, todo, dev, memory_limit, backend, stats)
        todo = todo[~done]
    if todo.size:
        _cpu_rows(batch, out, todo, threads, memory_limit, stats)


def _cpu_rows(batch: Batch, out: _Answers, todo: np.ndarray, threads: int, memory_limit, stats: dict) -> None:
    """The compiled first runs over rows ``todo`` (whole-number values), ``threads`` threads taking blocks of rows;
    then the planner over every row they leave (and the rows of float values)."""
    whole = todo[batch.whole[todo]] if todo.size else todo
    if whole.size and batch.n and numba_jit.enabled():
        stats["binding"] = "compiled"
        _compiled(batch, out, whole, threads, memory_limit)
        closed = out.went[whole] == 2
        stats["engines"]["compiled"] += int(closed.sum())
    left = todo[out.went[todo] != 2]
    if left.size:
        t = time.perf_counter()
        _planner(batch, out, left, memory_limit, stats)
        stats["planner_seconds"] += time.perf_counter() - t


def _compiled(batch: Batch, out: _Answers, rows: np.ndarray, threads: int, memory_limit) -> None:
    from .states import common, extras, modes, offsets
    from .states.engine import START_STATES

    B = modes.compiled()
    room = ROW_BYTES if memory_limit is None else int(memory_limit)
    sizes = extras.first_sizes(True)
    contiguous = rows.size == batch.rows  # every row: the batch's own arrays, no gather
    P = batch.P if contiguous else np.ascontiguousarray(batch.P[rows])
    W = batch.W if contiguous else np.ascontiguousarray(batch.W[rows])
    C = batch.C if contiguous else batch.C[rows]
    value = out.value if contiguous else np.zeros(rows.size, dtype=np.int64)
    weight = out.weight if contiguous else np.zeros(rows.size, dtype=np.int64)
    chosen = out.chosen if contiguous else np.zeros((rows.size, batch.n), dtype=np.bool_)
    went = out.went if contiguous else np.zeros(rows.size, dtype=np.int64)
    args = (True, offsets.COUNTING, common.WINDOW, ROW_UPDATES, room, sizes, START_STATES, value, weight, chosen, went)

    def block(lo: int) -> None:
        B.first_runs(P, W, C, lo, min(lo + BLOCK_ROWS, rows.size), *args)

    starts = range(0, rows.size, BLOCK_ROWS)
    if threads == 1 or rows.size <= BLOCK_ROWS:
        for lo in starts:
            block(lo)
    else:
        with ThreadPoolExecutor(min(threads, len(starts))) as pool:  # (the kernels release the GIL: nogil)
            list(pool.map(block, starts))
    numba_jit.mark_ready("i")
    if not contiguous:
        out.value[rows], out.weight[rows], out.chosen[rows], out.went[rows] = value, weight, chosen, went


def _planner(batch: Batch, out: _Answers, rows: np.ndarray, memory_limit, stats: dict) -> None:
    """The whole planner (:func:`knapsack_gpu.solve`), row by row, on each row's whole-number instance."""
    from .solver import solve

    counts = stats["strategies"]
    for b in rows.tolist():
        sol = solve(batch.W[b], batch.values_of(b), int(batch.C[b]), device="cpu", memory_limit=memory_limit)
        if batch.whole[b]:
            out.value[b] = sol.value
        else:
            out.float_value[b] = sol.value
        out.weight[b] = sol.weight
        out.chosen[b, sol.indices] = True
        out.went[b] = 2
        strategy = sol.stats["strategy"]
        counts[strategy] = counts.get(strategy, 0) + 1
    stats["engines"]["planner"] += rows.size

"""The three bindings of :mod:`.kernels`: one search, three ways to run its list operations.

A binding is the kernels' functions bound to one set of list operations and exact-arithmetic helpers:

- ``compiled``: every kernel compiled by numba (:mod:`knapsack_gpu.jit`), the list ops as its scalar loops;
- ``python``: the kernels interpreted, the list ops in numpy (:mod:`.lists`), exact in Python integers where sums
  pass int64: the reference and the fallback;
- ``device``: interpreted, the list ops in torch on a CUDA device.

The kernels call the list ops by name; each binding gives the names its own functions (a copy of each kernel with
its own globals), so the loop, the sides and the bounds exist once.
"""

from __future__ import annotations

import types
from functools import cache

from .. import jit
from . import exact, kernels, lists, offsets

# The names the kernels call that each binding supplies.

COMPILED_OPS = {
    "merge": "merge_c",
    "prune": "prune_c",
    "merge_prune": "merge_prune_c",
    "FUSED": True,
    "room_for": "room_for_c",
    "state_at": "state_at_c",
    "lin_sat": "lin_sat_c",
    "lin_ge0": "lin_ge0_c",
    "ratio_cmp": "ratio_cmp_c",
    "order_ties": "order_ties_c",
    "break_order": "break_order_c",
    "lp_at": "lp_at_c",
    "muldiv": "muldiv_c",
    "setup": "setup_c",
    "refill": "refill_c",
    "items": "items_c",
    "combine": "combine_c",
    "counted": "counted_c",
    "count_within": "count_within_c",
}
PYTHON_OPS = {
    "merge": lists.merge_np,
    "prune": lists.prune_np,
    "room_for": lists.room_for_np,
    "state_at": lists.state_at_np,
    "lin_sat": exact.lin_sat,
    "lin_ge0": exact.lin_ge0_py,
    "ratio_cmp": exact.ratio_cmp,
    "order_ties": exact.order_ties_k,
    "break_order": exact.break_order,
    "lp_at": exact.lp_at_np,
    "muldiv": exact.muldiv,
    "setup": exact.setup_np,
    "refill": "refill_np",
    "items": exact.items_np,
    "combine": exact.combine_np,
    "counted": offsets.counted_np,
    "count_within": exact.count_within_np,
    "borrowed": exact.same,
}
DEVICE_OPS = {
    **PYTHON_OPS,
    "merge": lists.merge_torch,
    "prune": lists.prune_torch,
    "room_for": lists.room_for_np,
    "state_at": lists.state_at_torch,
}


def _kernel_functions() -> dict[str, types.FunctionType]:
    return {
        name: f
        for name, f in vars(kernels).items()
        if isinstance(f, types.FunctionType) and f.__module__ == kernels.__name__ and f is not kernels._unbound
    }


class Binding:
    """The kernels bound to one set of list ops: ``binding.run``, ``binding.break_order``, ... ."""

    def __init__(self, name: str, functions: dict):
        self.name = name
        self.__dict__.update(functions)

    @property
    def compiled(self) -> bool:
        return self.name == "compiled"


def _bind(name: str, ops: dict, wrap=None) -> Binding:
    ns = dict(vars(kernels))
    out = {}
    for fname, f in _kernel_functions().items():
        g = types.FunctionType(f.__code__, ns, fname, f.__defaults__, f.__closure__)
        g.__qualname__, g.__module__, g.__doc__ = f.__qualname__, f.__module__, f.__doc__
        out[fname] = wrap(g, fname in kernels.INLINE) if wrap is not None else g
    ns.update(out)
    for op, impl in ops.items():  # a function's name, a function or a constant (FUSED)
        ns[op] = out[impl] if isinstance(impl, str) else impl
        out[op] = ns[op]
    return Binding(name, out)


@cache
def python() -> Binding:
    return _bind("python", PYTHON_OPS)


@cache
def device() -> Binding:
    return _bind("device", DEVICE_OPS)


def host(binding: str | None, p, calls: tuple[str, ...] = jit.SEARCH) -> Binding:
    """The binding a search over values ``p`` runs in: "python" or "compiled" where asked for; "ready": the
    compiled one where this process has loaded it already, else the python one (and the compiled one starts loading
    in the background); None: the compiled one, except where the disk cache lacks the entry points the search calls
    first (``calls``, see :func:`knapsack_gpu.jit.cached`) and this process's interpreted stand-in has work left
    (:func:`knapsack_gpu.jit.trial_left`): then the python one, which the search leaves for the compiled one if it
    runs past that work. Object arrays (Python integers) and machines without numba run the python binding."""
    if binding == "compiled" and p.dtype != object:  # a caller's choice already (a sub-search, the engine)
        return compiled()
    if binding == "python" or p.dtype == object or not jit.enabled():
        return python()
    kind = p.dtype.kind
    if binding == "ready" and not jit.ready(kind):
        jit.warm_in_background()
        return python()
    if binding is None and not jit.ready(kind) and not jit.cached(kind, calls) and jit.trial_left() > 0:
        return python()
    return compiled()


def _tiny(kind: str):
    """A tiny instance whose search runs every part of the engine: values of numpy kind ``kind``, weights."""
    import numpy as np

    p = np.array([7, 5, 4, 3, 3, 3, 3, 2, 9, 8], dtype=np.int64 if kind == "i" else np.float64)
    w = np.array([5, 4, 3, 2, 2, 2, 2, 2, 7, 6], dtype=np.int64)
    return p, w


def warm_step(name: str, kind: str) -> None:
    """One job of :data:`knapsack_gpu.jit.JOBS`: compile (or load) entry point ``name`` of the compiled binding
    for values of numpy kind ``kind`` ("i", "f"), and the small ones beside it, on a tiny instance."""
    import numpy as np

    from . import Search, mitm

    B = compiled()
    p, w = _tiny(kind)
    if name == "start":
        Search(p, w, 12, binding="compiled")  # start (items, setup, init_state), arm, refresh
    elif name == "run":
        Search(p, w, 12, binding="compiled").run(None)  # run (and everything it calls), open_items
    elif name == "first_run":
        at = (1000, 256, 4)  # (the extras' sizes: any will do)
        B.first_run(p, w, 12, kind == "i", True, 64, 10**6, 10**9, at, 256, 0, 3, p[0], p[0])  # (any n)
    elif name == "meet":
        eng = Search(p, w, 12, binding="compiled").engine
        eng.run(0)
        mitm.solve(eng)  # meet (half_states, combine)
    elif name == "meet_instance":
        Search(p, w, 12, binding="compiled", meet=True)
    elif name == "pair_c":
        eng = Search(p, w, 12, binding="compiled").engine
        eng.run(0)
        B.gcd_and_sum(w, *eng.open_items())
        W, P, _ = eng.host_lists()
        B.pair_c(W, P, *eng.arrays[:16])
        a = eng.arrays
        B.decode(P[0], int(W[0]), 0, 0, a[0], a[1], a[16], a[17], a[6], a[7], a[9], a[10], a[11], eng.left_items, eng.n)
        B.break_order(p / w, p, w, 12, kind == "i")
    elif name == "count_within_c":  # (whole numbers whatever the values)
        B.counted(12, w[:3], w[3:], 1, -2)
        B.count_within(w, 12)
    elif name == "surrogate_bisect":  # (float64 whatever the values)
        pf = p.astype(np.float64)
        B.surrogate_bisect(pf, w.astype(np.float64), 12.0, -7, 7, 2, 1e18)
    elif name == "surrogate_case":
        B.surrogate_case(p, w, 12, np.arange(8), np.array([8, 9]), 1, 3, 30, 20)
    elif name == "selection_sums":
        B.selection_sums(w, p, np.array([0, 2], dtype=np.int64))
        B.items_valid(w, p)
    elif name == "float_items_valid":
        B.float_items_valid(w, p.astype(np.float64))
    else:
        raise ValueError(f"no warm-up step {name!r}")


@cache
def compiled() -> Binding:
    """The compiled binding (imports numba; each kernel compiles on its first call, or loads from the disk cache)."""
    from . import borrow  # (imports numba)

    return _bind("compiled", {**COMPILED_OPS, "borrowed": borrow.borrowed}, jit.compile_function)

"""The three bindings of the kernels (:mod:`.kernels`): one search, three ways to run its list operations.

A binding is the kernels' functions bound to one set of list operations and exact-arithmetic helpers:

- ``compiled``: every kernel compiled by numba (:mod:`knapsack_gpu.numba_jit`), the list ops as its scalar loops;
- ``python``: the kernels interpreted, the list ops in numpy (:mod:`.lists`), exact in Python integers where sums
  pass int64: the reference and the fallback;
- ``device``: interpreted, the list ops in torch on a CUDA device.

The kernels call the list ops by name; each binding gives the names its own functions (a copy of each kernel with
its own globals: one namespace for the functions of every module of :mod:`.kernels`), so the loop, the sides and
the bounds exist once.
"""

from __future__ import annotations

import sys
import types
from functools import cache, partial

from .. import numba_jit
from . import exact, kernels, lists, offsets
from .kernels import registers

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
    """Every function the modules of :mod:`.kernels` define (not those they import from each other)."""
    return {
        name: f
        for m in kernels.MODULES
        for name, f in vars(m).items()
        if isinstance(f, types.FunctionType) and f.__module__ == m.__name__ and f is not registers._unbound
    }


def _namespace() -> dict:
    """The kernels' module namespaces as one: what each binding's copies of them see as their globals."""
    ns = {}
    for m in kernels.MODULES:
        ns.update(vars(m))
    return ns


class Binding:
    """The kernels bound to one set of list ops: ``binding.run``, ``binding.break_order``, ... ."""

    def __init__(self, name: str, functions: dict):
        self.name = name
        self.__dict__.update(functions)

    @property
    def compiled(self) -> bool:
        return self.name == "compiled"


def _bind(name: str, ops: dict, wrap=None) -> Binding:
    ns = _namespace()
    out = {}
    for fname, f in _kernel_functions().items():
        g = types.FunctionType(f.__code__, ns, fname, f.__defaults__, f.__closure__)
        g.__qualname__, g.__module__, g.__doc__ = f.__qualname__, f.__module__, f.__doc__
        out[fname] = wrap(g, fname in registers.INLINE) if wrap is not None else g
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


def host(binding: str | None, p, calls: tuple[str, ...] = numba_jit.SEARCH) -> Binding:
    """The binding a search over values ``p`` runs in: "python" or "compiled" where asked for; "ready": the
    compiled one where this process has loaded it already, else the python one (and the caller, :class:`.Search`,
    starts loading the compiled one in the background); None: the compiled one, except where the disk cache lacks
    the entry points the search calls first (``calls``, see :func:`cached`) and this process's interpreted stand-in
    has work left (:func:`knapsack_gpu.numba_jit.trial_left`), or where it holds them but this process has not
    imported numba and the first :data:`~knapsack_gpu.numba_jit.LOAD_UPDATES` of that work are left: then the python
    one, which the search leaves for the compiled one if it runs past that work. Object arrays (Python integers)
    and machines without numba run the python binding."""
    if binding == "compiled" and p.dtype != object:  # a caller's choice already (a sub-search, the engine)
        return compiled()
    if binding == "python" or p.dtype == object or not numba_jit.enabled():
        return python()
    kind = p.dtype.kind
    if binding == "ready" and not numba_jit.ready(kind):  # (the caller starts loading the compiled ones)
        return python()
    if binding is None and not numba_jit.ready(kind):
        if not cached(kind, calls):
            if numba_jit.trial_left() > 0 or numba_jit.compiling_elsewhere(kind):
                return python()  # (past the trial while a compile runs elsewhere: on interpreted until it ends)
        elif "numba" not in sys.modules and numba_jit.trial_left(cached=True) > 0:
            return python()  # (loading numba and the kernels costs more than a short search interpreted)
    return compiled()


def cached(kind: str, names: tuple[str, ...] = numba_jit.SEARCH) -> bool:
    """Whether numba's disk cache holds the compiled binding's entry points ``names`` for values of numpy kind
    ``kind`` (:func:`knapsack_gpu.numba_jit.cached`, read without importing numba)."""
    return numba_jit.cached(kind, names, _python_function, kernels.SOURCES)


def _python_function(name: str):
    return _kernel_functions()[name]


@cache
def compiled() -> Binding:
    """The compiled binding (imports numba; each kernel compiles on its first call, or loads from the disk cache)."""
    from . import borrow  # (imports numba)

    wrap = partial(numba_jit.compile_function, sources=kernels.SOURCES)  # (an edited module: every kernel is stale)
    return _bind("compiled", {**COMPILED_OPS, "borrowed": borrow.borrowed}, wrap)

"""Borrowed arrays for the compiled binding: the same array without its reference count.

numba counts references to an array atomically each time a compiled function binds it (an argument, a helper's
parameter, a new name): inside the search loop, where every helper is inlined into one large function, the pruning
pass leaves most of those counts in place, about a hundred atomic operations a step (a fifth of a small solve's time,
measured with benchmarks/perf_profile.py). An array whose owner outlives the loop needs none of them:
:func:`borrowed` returns a view of it with no meminfo, whose counts are null checks. Imported by the compiled
binding only (it needs numba); the interpreted bindings use the array itself (:func:`same`).
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def borrowed(typingctx, arr):
    """``arr`` without its reference count: valid only while its owner holds it, and never to be returned."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        out = context.make_array(arr)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, field, getattr(src, field))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return arr(arr), codegen

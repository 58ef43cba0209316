"""The incumbent's items, from the decision bits its state carries (combo's ``definesolution``).

A state's bits say which of the last 64 core items it flipped. Start from the break solution, apply those flips and
any flips recorded outside the core; what is left of the state's (value, weight) beyond the break solution is then
owed to core items that entered earlier. If anything is left, solve exactly the knapsack over those earlier items
whose optimum must be that value at that weight (the search found no better solution, so it is exactly that), with
the value as its upper bound so it stops as soon as it gets there.
"""

from __future__ import annotations

import numpy as np

from .common import unit_items
from .exact import exact_total
from .kernels.instance import told


def selection(eng, inc) -> np.ndarray | None:
    """Ascending indices (into the engine's items) of ``inc``, or None when only its value is known."""
    if inc.selection is not None:
        x = np.zeros(eng.n, dtype=np.bool_)
        x[inc.selection] = True
        return _flipped(eng, x, inc.extra)
    if inc.state is None:
        return None
    P, W, V, E = inc.state
    a = eng.arrays  # IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d, EU, ES
    x, dp, dw = eng.B.decode(
        P, W, V, E, a[0], a[1], a[16], a[17], a[6], a[7], a[9], a[10], a[11], eng.left_items, eng.n
    )
    dp, dw = eng.num(dp), int(dw)
    start = max(0, E - eng.window)
    if not told(dp, dw, eng.integral, eng.z1, eng.z):
        entries = eng.entries()
        older = np.asarray([u for u, _ in entries[:start]], dtype=np.int64)
        signs = np.asarray([s for _, s in entries[:start]])
        op, ow, _ = eng.unit_arrays(older)
        target = dp + exact_total(op[signs < 0])
        room = dw + exact_total(ow[signs < 0])
        eng.stats.resolves += 1
        lower = target - 1 if eng.integral else target - 2 * (eng.z1 - eng.z)
        value, sub = eng.solve(  # (the package's search, passed in: it imports this module)
            op,
            ow,
            room,
            lower=lower,
            upper=target,
            device=eng.device,
            device_states=eng.device_states,
            binding=eng.host_binding,
            meter=eng.meter,
            relax=eng.relax,
            stats=eng.stats,
            progress=eng.progress,
            depth=eng.depth + 1,
        )
        if sub is None or (eng.integral and value != target):
            raise RuntimeError(
                f"internal error: the core items before the last {eng.window} should reach {target} at weight {room}, "
                f"got {value}"
            )
        for u in older.tolist():
            x[unit_items(a, eng.n, u)] = False
        for u in older[sub].tolist():
            x[unit_items(a, eng.n, u)] = True
    return _flipped(eng, x, inc.extra)


def _flipped(eng, x: np.ndarray, extra: tuple) -> np.ndarray:
    """The ascending items of mask ``x`` once the flips ``extra`` ((unit, sign), ...) are applied."""
    a, n = eng.arrays, eng.n  # (read once: a selection walks thousands of units)
    for u, sign in extra:
        x[unit_items(a, n, u)] = sign > 0
    return x.nonzero()[0]  # (x is 1-D: flatnonzero's ravel is not needed)


def selection_or_none(eng, inc) -> np.ndarray | None:
    """:func:`selection` where it is cheap: the items an explicit incumbent or the bits alone give, else None."""
    if inc.selection is not None or inc.state is None:
        return selection(eng, inc)
    if inc.state[3] <= eng.window:
        return selection(eng, inc)
    return None

"""The incumbent's items, from the decision bits its state carries (combo's ``definesolution``).

A state's bits say which of the last 64 core items it flipped. Start from the break solution, apply those flips and
any flips recorded outside the core; what is left of the state's (value, weight) beyond the break solution is then
owed to core items that entered earlier. If anything is left, solve exactly the knapsack over those earlier items
whose optimum must be that value at that weight (the search found no better solution, so it is exactly that), with
the value as its upper bound so it stops as soon as it gets there.
"""

from __future__ import annotations

import numpy as np

from . import engine
from .sides import exact_total


def selection(eng, inc) -> np.ndarray | None:
    """Ascending indices (into the engine's items) of ``inc``, or None when only its value is known."""
    if inc.selection is not None:
        return np.sort(np.asarray(inc.selection, dtype=np.int64))  # distinct items by construction
    if inc.state is None:
        return None
    from . import solve_items

    P, W, V, E = inc.state
    units = eng.units
    x = np.zeros(eng.n, dtype=bool)
    x[eng.brk.left] = True
    dp, dw = P - eng.brk.psum, W - eng.brk.wsum
    window = engine.WINDOW
    start = max(0, E - window)
    for e in range(start, E):
        if (V >> (e % window)) & 1:
            u, sign = eng.entries[e]
            x[units.items(u)] = sign > 0
            pu, wu = units.pw(u)
            dp -= sign * pu
            dw -= sign * wu
    settled = dw == 0 and (dp == 0 if eng.integral else abs(dp) <= eng.z1 - eng.z)
    if not settled:
        older = np.asarray([u for u, _ in eng.entries[:start]], dtype=np.int64)
        signs = np.asarray([s for _, s in eng.entries[:start]])
        op, ow, _ = units.arrays(older)
        target = dp + exact_total(op[signs < 0])
        room = dw + exact_total(ow[signs < 0])
        eng.stats.resolves += 1
        lower = target - 1 if eng.integral else target - 2 * (eng.z1 - eng.z)
        value, sub = solve_items(
            op,
            ow,
            room,
            lower=lower,
            upper=target,
            ops=eng.ops,
            meter=eng.meter,
            relax=eng.relax,
            stats=eng.stats,
            progress=eng.progress,
            depth=eng.depth + 1,
        )
        if sub is None or (eng.integral and value != target):
            raise RuntimeError(
                f"internal error: the core items before the last {window} should reach {target} at weight {room}, "
                f"got {value}"
            )
        for u in older.tolist():
            x[units.items(u)] = False
        for u in older[sub].tolist():
            x[units.items(u)] = True
    for u, sign in inc.extra:
        x[units.items(u)] = sign > 0
    return np.flatnonzero(x)


def selection_or_none(eng, inc) -> np.ndarray | None:
    """:func:`selection` where it is cheap: the items an explicit incumbent or the bits alone give, else None."""
    if inc.selection is not None or inc.state is None:
        return selection(eng, inc)
    if inc.state[3] <= engine.WINDOW:
        return selection(eng, inc)
    return None

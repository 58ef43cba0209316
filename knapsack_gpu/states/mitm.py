"""Meet in the middle (Horowitz and Sahni, 1974) for searches with few open items: where weights are huge and
every efficiency nearly equal (a subset sum of a few dozen items near 2**50), bounds fix nothing and the states list
grows to every distinct subset sum, 2**n of them; two lists of 2**(n/2) do the same work.

The items the engine has not fixed (Dembo-Hammer at its incumbent: every better solution keeps the fixed ones at
their side) split into two halves; each half's undominated subset sums are built by the engine's own merge
(:func:`.kernels.half_states`), and one pass pairs every state of one half with the best partner of the other
(:func:`.kernels.combine_c`). O(2**(n/2)) time and memory (Schroeppel and Shamir's O(2**(n/4)) memory is not
implemented: where the two lists do not fit the memory limit, the engine goes on).
"""

from __future__ import annotations

import numpy as np

from . import kernels as K

# The most open items a meet in the middle takes: two lists of 2**23 states (~1.6 GB at its peak).
MAX_ITEMS = 46
# Bytes a state costs at the peak of building a half's list: two rows of buffers, grown by doubling.
BYTES_PER_STATE = 4 * K.BYTES_PER_CANDIDATE
# The engine hands over once it has done this many state updates per state of a half list (the meet in the middle
# costs about five: two merges a state while each half is built, and the pass that pairs them).
SWITCH_UPDATES = 5
# A search looks at its open items once it has done this many updates (~1 ms compiled): nearly every search has ended
# by then, and below it a meet in the middle would save at most that much.
LOOK_UPDATES = 200_000


def half_size(m: int) -> int:
    """States of the larger half list of m items, at most (before dominance and the capacity thin them)."""
    return 1 << ((m + 1) // 2)


def fits(eng, m: int) -> bool:
    """Whether a meet in the middle over m open items fits the engine's item limit and memory."""
    if m > MAX_ITEMS:
        return False
    need = 2 * half_size(m) * BYTES_PER_STATE
    meter = eng.meter
    return meter is None or need <= meter.limit - meter.current


def solve(eng):
    """The best solution better than the engine's incumbent, over its open items, or None where the incumbent is
    optimal: (value, the engine's item indices). The engine's own binding runs the halves (compiled, or numpy for
    Python integers); its list is released first."""
    eng.release()
    items, fixed_in = eng.open_items()
    p, w, B = eng.p, eng.w, eng.B
    base_p = sum(p[fixed_in].tolist()) if fixed_in.size else 0
    cap = eng.c - (sum(w[fixed_in].tolist()) if fixed_in.size else 0)
    if cap < 0:
        return None
    # halves of (nearly) equal total weight sort out fewest states: alternate the items by weight
    items = items[np.argsort(w[items], kind="stable")]
    halves = (items[0::2], items[1::2])
    lists = []
    for half in halves:
        IR = np.zeros(K.N_IR, dtype=eng.IR.dtype)
        IR[K.C], IR[K.SIZE], IR[K.MEM_BYTES] = cap, 1, K.LIM
        L = eng._single(0, 0, IR)
        L = B.half_states(L, IR, half, p, w)
        s = int(IR[K.SIZE])
        lists.append((L[0][:s], L[1][:s], L[2][:s]))
        eng.stats.state_updates += int(IR[K.UPDATES])
        if eng.meter is not None:
            eng.meter.note_peak(int(IR[K.LIST_BYTES]))
    (WA, PA, VA), (WB, PB, VB) = lists
    value, a, b = B.combine(WA, PA, WB, PB, cap)
    if a < 0 or base_p + value <= eng.z:
        return None
    chosen = [fixed_in]
    for half, V in ((halves[0], int(VA[a])), (halves[1], int(VB[b]))):
        bits = np.array([(V >> t) & 1 for t in range(half.size)], dtype=bool)
        chosen.append(half[bits])
    return base_p + eng.num(value), np.sort(np.concatenate(chosen))

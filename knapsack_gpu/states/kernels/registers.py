"""What the kernels share: the events :func:`.search.run` returns, the register slots of ``IR``, ``VR`` and
``SR``, the tuned constants, and the placeholders of the names each binding supplies (:mod:`..modes`)."""

from __future__ import annotations

import numpy as np

# --- what run() returns ----------------------------------------------------------------------------------------------
DONE = 0  # no state left, both sides exhausted, or z met the upper bound: z is optimal
BUDGET = 1  # the next step would pass IR[BUDGET] state updates
EXTRAS = 2  # the list passed IR[EVENT_SIZE] states: the engine fires combo's extras
DEVICE = 3  # the list reached IR[DEVICE_SIZE] states: the engine moves it to the device
MEMORY = 4  # the next step does not fit IR[MEM_BYTES]
PROGRESS = 5  # IR[UPDATES] reached IR[PROGRESS_AT]

# --- IR: int64 registers ---------------------------------------------------------------------------------------------
C = 0  # capacity
SIZE = 1  # states in the list
ENTRIES = 2  # units that entered the core
TURN_LEFT = 3  # 1: the left side is next
EXHAUSTED = 4  # 4 + side: 1 when that side has nothing left
UPDATES = 6  # candidate states built so far (two per state and unit)
BUDGET_AT = 7  # stop before UPDATES passes this (-1: no budget)
EVENT_SIZE = 8  # return EXTRAS once the list holds more states than this
DEVICE_SIZE = 9  # return DEVICE once the list holds this many states (-1: never)
MEM_BYTES = 10  # bytes the list may use
WINDOW = 11  # decision bits a state keeps (the last WINDOW core entries)
INC_NEW = 12  # 1 once run() improved z from a state (read and cleared by the engine)
INC_W = 13  # that state's weight, bits and entries
INC_V = 14
INC_E = 15
PEAK = 16  # the most states the list held
NITEMS = 17  # n: units below n are items, bundles from n on
NUNITS = 18  # units made so far
NMEMBERS = 19  # MEMBERS used by bundles
STARTED = 20  # 1 once the break item has entered
PROGRESS_AT = 21  # return PROGRESS once UPDATES reaches this
BRK = 22  # the break item
WB = 23  # its weight
WSUM = 24  # the break solution's weight
INTEGRAL = 25  # 1: whole-number values (exact), 0: float values
LIST_BYTES = 26  # the most bytes the list's arrays held (the compiled binding's buffers, the numpy temporaries)
D_FITS = 27  # 1: the reduced costs (and k-fold bundles of them) fit int64, compared with the clamped gap
INC_PAIR = 28  # 1 + the unit the pairing flipped on top of the incumbent's state (0: none), and the flip's sign
INC_PAIR_SIGN = 29
NEXT_PAIRING = 30  # the list size past which the pairing fires next (where a first run fired it; 0: it did not)
N_IR = 31

# --- VR: registers in the values' dtype ----------------------------------------------------------------------------
Z = 0  # the incumbent's value
Z1 = 1  # what a state must reach to count: z + 1 (whole numbers) or z plus a relative margin (floats)
GAP = 2  # the Dembo-Hammer gap at z (clamped to +-LIM for whole numbers)
UB = 3  # an upper bound on the optimum: the search stops when z meets it
PB = 4  # the break item's value
PSUM = 5  # the break solution's value
INC_P = 6  # the state run() improved z from: its value
N_VR = 7

# --- SR: each side's counters (row 0 left, row 1 right) --------------------------------------------------------------
LEFT = 0
RIGHT = 1
PLEN = 0  # unsorted items left in POOL[side]
BLEN = 1  # units in the sorted chunk BUF[side]
BPOS = 2  # the next unit of the chunk
CHUNK = 3  # items the next chunk takes (grows fourfold)
FIXED = 4  # items the Dembo-Hammer test fixed on this side
N_SR = 5

FIRST_CHUNK = 32  # the first chunk a side sorts; later ones grow fourfold
BUNDLE_RUN = 4  # identical items enter as bundles from runs of this many
LIM = 2**62  # |products| below this add up without wrapping int64; gaps are clamped to it
EXACT_DOUBLE = 2**53  # whole numbers below this are exact doubles
FLOAT_TOL = 1e-12  # float values: a state must beat z by this relative margin, against rounding in its sums
SORT_SMALL = 16  # the break item's quickselect sorts what is left below this many items
# The break item's band guess: SAMPLE keys, SPREAD sample ranks on either side of the estimated break (~6% of the
# items); instances below 4 * SAMPLE items take the quickselect.
SAMPLE = 256
SPREAD = 8
BYTES_PER_CANDIDATE = 24  # weight, value and bits of one state in a list buffer (compiled binding)
TOP_BIT = np.int64(-(2**63))  # bit 63 of an int64
U32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)


def _unbound(*args):
    raise RuntimeError("the kernels run through a binding: see knapsack_gpu.states.modes")


# What each binding supplies (:mod:`.modes`): the list ops, the exact-arithmetic helpers, the break item, the setup
# and the sides' refill. Here they are placeholders.
merge = prune = merge_prune = room_for = state_at = _unbound
lin_sat = lin_ge0 = ratio_cmp = muldiv = order_ties = break_order = setup = refill = items = combine = _unbound
lp_at = counted = _unbound
# The search's own arrays inside run() (the compiled binding's views without reference counts: .borrow)
borrowed = _unbound
# Whether the binding's merge_prune runs a step's merge and fathoming as one pass (the compiled binding's scalar loop;
# the vectorised bindings run them apart, the reference the fused pass is tested against).
FUSED = False

# Compiled inline into their callers (numba IR inlining): a call costs an atomic reference count per array argument
# each way, and so does binding them to an inlined callee's arguments; the step runs inside run() with helpers that
# take few arrays (see run). Small helpers are inlined by LLVM anyway; the rest stay calls (compile time).
INLINE = frozenset(
    {"_admit", "_pop", "state_at_c", "room_for_c", "_comes_first", "_first", "_bit"}
    | {"merge_c", "prune_c", "_keep_part", "merge_prune_c", "_fusable", "_candidate", "_put", "_runs"}
)

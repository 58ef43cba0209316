"""The expanding core: a states DP grown outward from the break item (Pisinger's minknap, 1997; combo, by Martello,
Pisinger and Toth, 1999).

States are (value, weight) sums of modifications of the break solution, sorted by weight with strictly increasing
value. The core starts at the break item b and grows alternately: the next unit right of it may be added (the list
merges with its copy shifted by +p, +w), the next unit left of it removed (shifted by -p, -w). After each step
dominance drops every state a lighter one beats, every feasible state raises the incumbent z, and the weak per-state
bound fathoms (exact integer cross products); a unit is tested against the break item's slope (Dembo-Hammer) before
it enters, and fixed when flipping it cannot beat z. The search ends when no state is left, when both sides are
exhausted, or when z meets the upper bound.

:mod:`.kernels` holds that search, written once and run in a binding (:mod:`.modes`: compiled, python or device);
this class sets it up, keeps its state, and between the kernels' events decides what the kernels do not: when combo's
extras fire (:mod:`.extras`, :mod:`.relax`), when the list moves to the device, when the memory or the work budget
ends the search. Each state carries the decisions of the last WINDOW core entries as bits; :mod:`.recover` rebuilds
the selection from them.
"""

from __future__ import annotations

import numpy as np

from .. import numba_jit
from ..sizes import format_bytes
from . import common, exact, extras, modes, offsets
from .common import BIG, Incumbent, StatesOverflow, StatesStats
from .exact import exact_total
from .kernels import registers as K
from .kernels.instance import state_views
from .kernels.merge import first_rows
from .kernels.search import lagrangian_float

# Progress is reported (and the kernels return to Python) every this many state updates: ~10-50 ms of list work.
PROGRESS_UPDATES = 1 << 23
# The compiled binding's list rows start with room for this many states (12 KiB), where the memory limit allows.
START_STATES = 256


class Engine:
    """One expanding-core search over items with 0 < w <= c, values > 0 and total weight > c.

    Args:
        p, w, c: values (int64 or float64), weights (int64), capacity.
        lower: only solutions worth more count (a value reached elsewhere, items unknown to this search).
        upper: a known upper bound: the search stops when z meets it.
        device: a torch CUDA device to move the list to once it holds ``device_states`` states (None: host only).
        meter: working-memory accounting; relax: may use the surrogate relaxation (off inside a surrogate's own
            solve); stats: shared with the sub-searches; depth: nesting level; progress: a
            :class:`knapsack_gpu.progress.Reporter` told the candidate states as they are built.
        binding: "compiled", "python", "ready" or None (see :func:`.modes.host`).
        big: whether a value or weight total reaches 2**62 (Python integers: the python binding); None: summed here.
        total: the exact sum of ``p`` where the caller has it (None: summed here when an extra first needs it).
        doubles: whether every value and weight is below 2**53 (then p / w is a correctly rounded key); None: looked
            up here.
        started: (keys, the set-up's tuple, the initial state's allocations (:func:`.kernels.init_state`) or None,
            the counting bound of :mod:`.offsets` or None) where :func:`.kernels.start` made them (None: made here).
        registers: (IR, VR, the list, the bounds :func:`.kernels.search.arm` reported, the event its run stopped at)
            where a first run (:func:`.kernels.search.first_run`) left them, its state in ``started``: the search goes
            on from there (the extras first, where the run stopped for them).
        solve: the package's search to the end (:func:`knapsack_gpu.states.solve_items`), which the sub-searches
            run (a surrogate's solve, a recovery of a selection): passed in, since the package imports this module.
    """

    def __init__(
        self,
        p,
        w,
        c,
        *,
        lower=None,
        upper=None,
        device=None,
        device_states: int = 0,
        meter=None,
        relax=True,
        stats=None,
        depth=0,
        progress=None,
        binding: str | None = None,
        big: bool | None = None,
        total: int | float | None = None,
        doubles: bool | None = None,
        started: tuple | None = None,
        registers: tuple | None = None,
        solve=None,
    ):
        self.integral = p.dtype.kind != "f"
        if big is None:
            big = exact_total(p) >= BIG or exact_total(w) >= BIG
        self.big = big and self.integral  # float values: states' weights stay below c + max(w) < 2**63
        if self.big:
            p, w = p.astype(object), w.astype(object)
        self.p, self.w, self.n = p, w, int(p.size)
        self._total = total
        self.num = int if self.integral else float
        self.device, self.device_states = device, device_states
        self.meter, self.progress = meter, progress
        self.relax = relax and self.integral
        self.stats = stats if stats is not None else StatesStats()
        self.depth = depth
        self.solve = solve
        self.fired: set[str] = set()  # extras that changed something
        self.fired_once: set[str] = set()  # extras tried
        self.next_pairing = common.PAIRING_STATES
        self.least_other = extras.least_other(self.fired_once, self.relax, self.big)  # (extras.next_size)
        self.budget: int | None = None  # state updates this run may reach (sub-searches get what is left)
        self._reported = 0  # state updates and core entries already added to stats
        self._core_reported = 0
        self._extras_due = False  # a first run stopped for the extras: the next run fires them first

        B = modes.host(None if binding is None else binding, p)  # object arrays (big): the python binding
        c = int(c)
        if started is None:
            self.keys = exact.keys(p, w, doubles)
            setup = B.setup(self.keys, p, w, c, self.integral)
            two = setup[7] and offsets.COUNTING and not self.big
            started = (self.keys, setup, None, offsets.offset_bound(p, w, c, B.counted) if two else None)
        self.keys, setup, state, counted = started
        order, j, self.wsum, VS, self.d, fits, g, _, fit = setup
        self.d_fits = bool(fits) or not B.compiled  # the python binding's reduced costs are exact Python integers
        self.B = B
        self.host_binding = B.name  # what sub-searches (a surrogate's solve, a recovery) run in
        self.stats.binding = B.name
        b = int(order[j])
        self.left_items, self.right_items = order[:j], order[j + 1 :]
        self.psum, self.pb, self.wb = self.num(VS[0]), self.num(p[b]), int(w[b])
        self.wsum = int(self.wsum)
        # the python binding keeps its scalars in Python integers: gaps and bounds exact however large
        self.vdtype = np.dtype(object) if self.integral and not B.compiled else p.dtype

        n = self.n
        # The first incumbent: the break solution and the most valuable item after it that still fits.
        # (The item is a flip on top of the items: most searches beat this incumbent, and its array is never built.)
        z, flip = self.psum, ()
        if fit >= 0:
            z, flip = z + self.num(p[fit]), ((int(fit), 1),)
        self.inc = Incumbent(z, selection=self.left_items, extra=flip)
        if lower is not None and lower >= z:
            self.inc = Incumbent(lower)  # a value known to be reachable, items unknown: only better ones count
        if registers is None:
            # sums past int64 (the python binding's Python integers): the capacity may pass int64 too
            IR = np.zeros(K.N_IR, dtype=object if self.big else np.int64)
            VR = np.zeros(K.N_VR, dtype=self.vdtype)
            ub = self.num(VS[1]) if upper is None else min(self.num(VS[1]), upper)
            args = (c, b, self.wb, self.wsum, n, self.integral, common.WINDOW, self.d_fits, self.pb, self.psum, ub)
            fired = B.arm(IR, VR, *args, -1 if counted is None else counted, int(g), self.inc.value)
        else:
            IR, VR, L, fired, event = registers
            if IR[K.NEXT_PAIRING]:  # the first run fired the pairing
                self.next_pairing = int(IR[K.NEXT_PAIRING])
        self.IR, self.VR = IR, VR
        self.fired.update(name for bit, name in common.ARMED if fired & bit)

        if state is None:
            state = B.init_state(order, j, p, w, self.d)
        SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, EU, ES = state_views(*state, n)
        self.SR = SR
        self.arrays = (IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, self.keys, p, w, self.d, EU, ES)
        if registers is None:
            self.L = self._single(self.wsum, self.psum)
        else:  # what the first run did: the incumbent it found, its counts
            self.L = L
            self._sync()
            self._extras_due = event == K.EXTRAS  # (its other events the next run meets again, or passes)

    # --- the state the extras and the recovery read -------------------------------------------------------------

    @property
    def c(self) -> int:
        return int(self.IR[K.C])

    @property
    def z(self):
        return self.inc.value

    @property
    def total(self):
        """The exact sum of the values (every state is worth at most this)."""
        if self._total is None:
            self._total = exact_total(self.p)
        return self._total

    @property
    def z1(self):
        return self.num(self.VR[K.Z1])

    @property
    def gap(self):
        return self.num(self.VR[K.GAP])

    @property
    def ub(self):
        return self.num(self.VR[K.UB])

    @ub.setter
    def ub(self, value) -> None:
        self.VR[K.UB] = value

    @property
    def size(self) -> int:
        return int(self.IR[K.SIZE])

    @property
    def window(self) -> int:
        return int(self.IR[K.WINDOW])

    def entries(self) -> list[tuple[int, int]]:
        """The units that entered the core, in order, with their sign (+1 added, -1 removed)."""
        e = int(self.IR[K.ENTRIES])
        EU, ES = self.arrays[16], self.arrays[17]
        return list(zip(EU[:e].tolist(), ES[:e].tolist(), strict=True))

    def unit_pw(self, u: int):
        UP, UW = self.arrays[6], self.arrays[7]
        return self.num(UP[u]), int(UW[u])

    def unit_arrays(self, us: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, weights, reduced costs) of units ``us``."""
        UP, UW, UD = self.arrays[6], self.arrays[7], self.arrays[8]
        return UP[us], UW[us], UD[us]

    def bundled(self) -> int:
        """Items that are members of a bundle."""
        return int(self.IR[K.NMEMBERS])

    def remaining(self, side: int) -> np.ndarray:
        """Units of ``side`` not handed out yet that pass the fixing test at today's gap (the rest of the sorted
        chunk, then the unsorted pool)."""
        SR, POOL, BUF = self.SR, self.arrays[3], self.arrays[4]
        rest = np.concatenate([BUF[side, SR[side, K.BPOS] : SR[side, K.BLEN]], POOL[side, : SR[side, K.PLEN]]])
        return rest[self.admitted(side, rest)]

    def admitted(self, side: int, units: np.ndarray) -> np.ndarray:
        """Mask of the units of ``side`` that pass the Dembo-Hammer test at today's gap (see kernels._admit)."""
        right = side == K.RIGHT
        up, uw, ud = self.unit_arrays(units)
        if self.d_fits:
            return ud >= -self.gap if right else ud <= self.gap
        sg = 1 if right else -1
        a = up.astype(object) * sg + (int(self.VR[K.PSUM]) - int(self.z1))
        b = (self.c - self.wsum) - sg * uw.astype(object)
        return (a * self.wb + b * int(self.pb)) >= 0

    def open_items(self) -> tuple[np.ndarray, np.ndarray]:
        """(the items a better solution may flip, the items fixed into the knapsack) at today's gap: every solution
        better than z holds the others at their break-solution values."""
        left, right = self.left_items, self.right_items
        if self.d_fits and self.B.compiled:  # one pass (numpy's below takes seven)
            return self.B.open_items(self.d, left, self.IR[K.BRK], self.VR[K.GAP])
        if self.d_fits:  # every item's test at once, in index order (no gathers of unit arrays)
            inside = np.zeros(self.n, dtype=bool)
            inside[left] = True
            g = self.gap
            flips = np.where(inside, self.d <= g, self.d >= -g)
            flips[int(self.IR[K.BRK])] = True
            return np.flatnonzero(flips), np.flatnonzero(inside & ~flips)
        left_open = self.admitted(K.LEFT, left)
        items = np.concatenate([left[left_open], [int(self.IR[K.BRK])], right[self.admitted(K.RIGHT, right)]])
        return items.astype(np.int64), left[~left_open]

    def drop(self, side: int, items: np.ndarray) -> None:
        """Fix the plain items ``items`` (not handed out yet) at their side's value: they never enter the core."""
        if not items.size:
            return
        SR, POOL, BUF, BUFD = self.SR, self.arrays[3], self.arrays[4], self.arrays[5]
        pool = POOL[side, : SR[side, K.PLEN]]
        pool = pool[~np.isin(pool, items)]
        POOL[side, : pool.size] = pool
        SR[side, K.PLEN] = pool.size
        a, e = SR[side, K.BPOS], SR[side, K.BLEN]
        buf, bufd = BUF[side, a:e], BUFD[side, a:e]
        keep = ~np.isin(buf, items)
        buf, bufd = buf[keep].copy(), bufd[keep].copy()
        BUF[side, : buf.size], BUFD[side, : buf.size] = buf, bufd
        SR[side, K.BPOS], SR[side, K.BLEN] = 0, buf.size
        SR[side, K.FIXED] += int(items.size)

    def host_lists(self):
        """(W, P, V) of the list as numpy arrays (copies where the list is on the device)."""
        W, P, V = self.L[0], self.L[1], self.L[2]
        s = self.size
        if self.B.name == "device":
            return W.cpu().numpy(), P.cpu().numpy(), V.cpu().numpy()
        return W[:s], P[:s], V[:s]

    # --- bounds ---------------------------------------------------------------------------------------------------

    def _lagrangian(self, c: int):
        """The LP bound at the break item's slope for capacity c: valid for any c (a Lagrangian bound)."""
        if self.integral:
            return self.psum + ((c - self.wsum) * self.pb) // self.wb
        return lagrangian_float(self.IR, self.VR, c)

    def improve(self, inc: Incumbent) -> None:
        if inc.value > self.inc.value:
            self.inc = inc
            self.VR[K.Z] = inc.value
            self.B.refresh(self.IR, self.VR)

    def set_capacity(self, c: int) -> None:
        self.IR[K.C] = c
        self.VR[K.UB] = min(self.VR[K.UB], self._lagrangian(c))
        self.B.refresh(self.IR, self.VR)

    # --- the search -----------------------------------------------------------------------------------------------

    def run(self, budget: int | None = None) -> bool:
        """Search on; True when done (then the incumbent is optimal), False when the next step would take the
        state updates past ``budget`` (call again with a larger one to go on). Raises StatesOverflow when a step
        does not fit the memory limit."""
        self.budget = budget
        IR = self.IR
        IR[K.BUDGET_AT] = -1 if budget is None else budget
        if self._extras_due:
            self._extras_due = False
            extras.fire(self)
        while True:
            self._arm()
            event, self.L = self.B.run(self.L, *self.arrays)
            self._sync()
            if event == K.DONE:
                if self.B.compiled:
                    numba_jit.mark_ready(self.p.dtype.kind)
                return self._done()
            if event == K.BUDGET:
                return False
            if event == K.MEMORY:
                m = 2 * self.size
                room = int(IR[K.MEM_BYTES])
                need = m * (K.BYTES_PER_CANDIDATE * 2 if self.B.compiled else common.BYTES_PER_STATE)
                raise self._overflow(
                    f"the states list needs about {need} bytes ({format_bytes(need)}) for {m} candidate states "
                    f"after {int(IR[K.ENTRIES])} core items, over what memory_limit leaves ({format_bytes(room)})",
                    m,
                )
            if event == K.EXTRAS:
                extras.fire(self)
            elif event == K.DEVICE:
                self._rebind(modes.device())

    def _arm(self) -> None:
        """The registers that end the kernels' next run: the extras' next list size, memory, progress, device."""
        IR = self.IR
        IR[K.EVENT_SIZE] = extras.next_size(self)
        meter = self.meter
        IR[K.MEM_BYTES] = BIG if meter is None else max(0, meter.limit - meter.current)
        IR[K.PROGRESS_AT] = IR[K.UPDATES] + PROGRESS_UPDATES if self.progress is not None else BIG
        on_device = self.B.name == "device"
        # Python integers (sums past int64) stay in the python binding: torch has no such dtype
        movable = self.device is not None and not on_device and not self.big
        IR[K.DEVICE_SIZE] = self.device_states if movable else -1

    def _sync(self) -> None:
        """What the kernels changed that Python keeps: the incumbent, the counts, progress and memory."""
        ir = self.IR.tolist()  # Python integers: one conversion, not one per register read
        if ir[K.INC_NEW]:
            self.IR[K.INC_NEW] = 0
            P = self.num(self.VR[K.INC_P])
            u = ir[K.INC_PAIR] - 1  # a first run's pairing: a unit flipped on top of the state, worth z in all
            value, extra = (P, ()) if u < 0 else (self.num(self.VR[K.Z]), ((u, ir[K.INC_PAIR_SIGN]),))
            if value > self.inc.value or self.inc.state is None:
                self.inc = Incumbent(value, state=(P, ir[K.INC_W], ir[K.INC_V], ir[K.INC_E]), extra=extra)
        done = ir[K.UPDATES]
        self.stats.add_run(done - self._reported, ir[K.ENTRIES] - self._core_reported, ir[K.PEAK])
        self._core_reported = ir[K.ENTRIES]
        if self.progress is not None and done > self._reported:
            self.progress.add(done - self._reported)
        self._reported = done
        if self.meter is not None:
            self.meter.note_peak(ir[K.LIST_BYTES])

    def projected_updates(self) -> int:
        """The state updates the search would still do if the list kept its size: two candidates a state for every
        unit that can still enter the core at today's gap (the planner's guess whether the search will finish)."""
        if not self.size or self.z >= self.ub:
            return 0
        units = sum(int(self.remaining(side).size) for side in (K.LEFT, K.RIGHT))
        return 2 * self.size * units

    def _done(self) -> bool:
        if self.depth == 0:
            fixed_in, fixed_out = self.SR[:, K.FIXED].tolist()
            self.stats.add_fixing(fixed_in, fixed_out, self.bundled())
        self.SR[:, K.FIXED] = 0
        return True

    def _lists(self, W, P, V, IR=None):
        """The list in this binding's layout (compiled: two rows of buffers; otherwise the arrays themselves);
        ``IR``: the registers that count its bytes (the engine's own by default)."""
        if self.B.compiled:
            rows = self._rows(W.size, P.dtype, IR)
            for row, a in zip(rows, (W, P, V), strict=False):
                row[: a.size] = a
            return rows
        if self.B.name == "device":
            import torch

            return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(self.device) for a in (W, P, V))
        return (W, P, V)

    def _single(self, wsum, psum, IR=None):
        """The list of one state (weight wsum, value psum, no decision bits), as :meth:`_lists` lays it out (the
        compiled rows set in place: no arrays built to copy from)."""
        if self.B.compiled:
            rows = self._rows(1, self.p.dtype, IR)
            if rows[0].size:  # (none where the limit left no room: the search runs only if it ends at once)
                rows[0][0], rows[1][0], rows[2][0] = wsum, psum, 0
            return rows
        w, p = np.array([wsum], dtype=self.w.dtype), np.array([psum], dtype=self.p.dtype)
        return self._lists(w, p, np.zeros(1, np.int64), IR)

    def _rows(self, size: int, dtype, IR=None) -> tuple:
        """The compiled binding's six rows for ``size`` states of values ``dtype`` (W, P, V and their next copies):
        they grow (doubling where the memory limit allows) as the list does, and start as
        :func:`.kernels.first_rows` sizes them (none where the limit leaves no room for a list of one state)."""
        IR = self.IR if IR is None else IR
        room = BIG if self.meter is None else self.meter.limit - self.meter.current
        cap = first_rows(room, START_STATES)
        if size > 1:  # (a list moved here: its states are held whatever the room)
            cap = max(cap, 2 * size)
        if dtype == np.int64:  # whole-number values: the six rows are views of one allocation
            rows = tuple(np.empty((6, cap), dtype=np.int64))
        else:
            rows = tuple(np.empty(cap, dtype=t) for t in (np.int64, dtype, np.int64) * 2)
        IR[K.LIST_BYTES] = max(int(IR[K.LIST_BYTES]), 2 * cap * K.BYTES_PER_CANDIDATE)
        return rows

    def _rebind(self, binding) -> None:
        W, P, V = (np.array(a) for a in self.host_lists())
        self.B = binding
        self.stats.binding = binding.name
        if self.integral and not binding.compiled and self.VR.dtype != object:
            # interpreted kernels keep their scalars in Python integers (exact, unclamped gaps)
            self.VR = self.VR.astype(object)
            self.arrays = (self.IR, self.VR, *self.arrays[2:])
            binding.refresh(self.IR, self.VR)
        self.L = self._lists(W, P, V)

    def release(self) -> None:
        """Free the state list (the search cannot go on after this)."""
        W, P, V = self.host_lists()
        self.IR[K.SIZE] = 0
        self.L = self._lists(W[:0], P[:0], V[:0])

    def _overflow(self, message: str, m: int) -> StatesOverflow:
        from .recover import selection_or_none

        self._done()
        return StatesOverflow(message, m, m * common.BYTES_PER_STATE, self.z, selection_or_none(self, self.inc))

"""The states engine: an expanding core of items around the break item, vectorised over the list of states.

:class:`Search` runs the engine over one set of items under growing work budgets (the planner's handle) and
:func:`solve_items` runs it to the end. :mod:`.engine` holds the search between kernel runs, :mod:`.kernels` the
kernels themselves (a module per concern: the loop, the sides, merge and fathoming, bounds and relaxations, set-up
and decoding, the meet in the middle) and :mod:`.modes` their bindings, :mod:`.exact` the arithmetic that keeps it
exact, :mod:`.extras` and :mod:`.relax` what combo adds when the list grows, :mod:`.recover` the selection,
:mod:`.lists` the array ops (numpy on the CPU, torch on CUDA). :func:`warm` compiles the kernels ahead of use.
Nothing below imports this package: the sub-searches (a surrogate's solve, a recovery) get :func:`solve_items`
passed in (:class:`.engine.Engine`'s ``solve``).
"""

from __future__ import annotations

import threading

import numpy as np

from .. import devices, numba_jit
from . import common, exact, extras, mitm, modes, offsets
from .common import ARMED, BIG, BYTES_PER_STATE, StatesOverflow, StatesStats
from .engine import START_STATES, Engine
from .exact import exact_total
from .recover import selection, selection_or_none

__all__ = [
    "BYTES_PER_STATE",
    "Search",
    "StatesOverflow",
    "StatesStats",
    "placement",
    "solve_items",
]


# How many states a list holds before it moves to a CUDA device (None: it never does). With the compiled engine it
# stays on the host: on one H200 (benchmarks/gpu_check.py, 2026-12-04) torch list ops there took 6.7 s and 12.7 s on
# circle n = 10,000 (peaks of 8e4 and 9e5 states) where the compiled host engine took 0.48 s and 4.4 s; a launch per
# list op (~10 us) against one compiled pass. Without numba, from DEVICE_STATES: an estimate nothing has measured.
DEVICE_STATES_COMPILED: int | None = None
DEVICE_STATES = 65536


def placement(device, backend: str = "auto") -> tuple[object, int]:
    """(device, states): where the list moves, and from how many states. (None, 0): the list stays on the host (the
    CPU, and CUDA with the compiled engine); a CUDA device from DEVICE_STATES states without it; with backend
    "torch"/"triton" on the CPU, torch list ops on CPU tensors from the first step (what tests of the device binding
    run without a GPU)."""
    where = devices.kind(device)
    if where == "cpu":
        return (None, 0) if backend in ("auto", "numpy") else (device, 0)
    states = DEVICE_STATES_COMPILED if numba_jit.enabled() else DEVICE_STATES
    return (None, 0) if states is None else (device, states)


class Search:
    """The exact optimum of max p.x subject to w.x <= c, x in {0, 1}, searched in steps.

    Args:
        p: values (n,), int64 (exact) or float64; w: weights (n,), int64, >= 0 from every caller (items with
            w <= 0 and p > 0 are taken for free; a negative weight lends its room only to items of weight <= c,
            those heavier are dropped first); c: the capacity (Python int; below 0 nothing fits).
        lower: only solutions worth more than this count (a value some other selection reaches).
        upper: a known upper bound on the optimum: the search stops once it is reached.
        device, device_states, meter, relax, stats, depth, progress, binding: as for :class:`.engine.Engine`.
        first_run: a work budget (state updates) the caller's first :meth:`run` will have at least: the set-up
            and a first run within it happen here, in one compiled call (:func:`.kernels.first_run`: a small
            instance's solve, or a surrogate's, has no Python between its set-up and its answer), where the compiled
            binding runs the search and no device or progress takes part; a search that does not end there goes on
            from where it stopped. None: the set-up only.
        meet: a meet in the middle over every item takes the place of the search where it pays at once
            (:func:`.mitm.at_once`: few items, or efficiencies that (nearly) tie; the planner's choice); the
            search's own handover to one over its open items (:meth:`run`) happens either way.
    """

    def __init__(
        self,
        p: np.ndarray,
        w: np.ndarray,
        c: int,
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
        first_run: int | None = None,
        meet: bool = False,
    ):
        self.stats = stats if stats is not None else StatesStats()
        self.lower = lower
        # contiguous: a strided view (a column of a file's table) would compile the kernels once more for its layout
        # (np.ascontiguousarray makes a new view even of a contiguous array: ~0.7 us)
        if not (p.flags.c_contiguous and w.flags.c_contiguous):
            p, w = np.ascontiguousarray(p), np.ascontiguousarray(w)
        few = meet and p.shape[0] <= mitm.DIRECT_ITEMS and p.dtype.kind != "f"  # (see _meet)
        B = modes.host(binding, p, numba_jit.FEW if few else numba_jit.SEARCH)
        if binding == "ready" and not B.compiled and p.dtype != object and numba_jit.enabled():
            warm_in_background()  # (the compiled kernels load meanwhile: see modes.host)
        # Where the compiled kernels are not cached yet the interpreted ones stand in, within the work this process
        # gives them (numba_jit.trial_left); past it the search starts again compiled (see run).
        self._again = None
        if binding is None and not B.compiled and p.dtype != object and numba_jit.enabled():
            options = dict(lower=lower, upper=upper, device=device, device_states=device_states, meter=meter)
            options.update(relax=relax, depth=depth, progress=progress, first_run=first_run, meet=meet)
            self._again = (p, w, c, options, _copy_stats(self.stats))
            self._cached = modes.cached(p.dtype.kind, numba_jit.FEW if few else numba_jit.SEARCH)
            progress = None  # (the compiled search reports its own)
        if c < 0:  # nothing fits, not even a free item
            p, w = p[:0], w[:0]
        # weights are below 2**62: a larger capacity filters as 2**62 does (and fits the compiled int64)
        integral = p.dtype.kind != "f"
        self.proved: int | float | None = None  # the upper bound a search proved (None: no search ran)
        # (weight, value) of the selection where its first run summed them (whole numbers below 2**62), else None
        self.totals: tuple[int, int] | None = None
        pw, started = None, None  # the items' values and weights, and the engine's set-up, where start made them
        registers = None  # the registers and list a first run left, for the engine to go on from
        if meet and integral and p.shape[0] <= mitm.MAX_ITEMS and self._meet(B, p, w, c, meter):
            return
        if B.compiled:  # the set-up in one compiled call, where it applies (see kernels.start)
            c62 = int(c) if c < 2**62 else 2**62  # (min() costs ~0.2 us: this is every small solve's path)
            quick = first_run is not None and device is None and progress is None
            if quick and (lower is None or _int64(lower)) and (upper is None or _int64(upper)):
                first = self._first_run(B, p, w, c62, meter, first_run, relax, lower, upper, depth)
                if first is None:
                    return
                (its, go, (ps, ws, keys), su, state, bound), registers = first
            else:
                its, go, (ps, ws, keys), su, state, bound = B.start(p, w, c62, integral, offsets.COUNTING)
            if go:
                pw, started = (ps, ws), (keys, su, state, None if bound < 0 else int(bound))
        else:
            its = B.items(p, w, min(int(c), 2**62), integral)
        items, free, TS, TW, self.zero_value, self.heavy, big = its
        if big:  # a total reached 2**62: sum again in Python integers
            TS = [exact_total(p[items]), exact_total(p[free])]
            TW = [exact_total(w[items]), exact_total(w[free])]
        num = int if integral else float
        self.free, self.items = free, items
        self.pf = num(TS[1])
        self.total = num(TS[0])  # of the items' values: every state is worth at most this
        cap = c - int(TW[1])
        self.engine = None
        self.mitm_switch: int | None = None  # state updates at which a meet in the middle takes over
        self.mitm_look: int | None = None  # state updates at which the open items are counted again (see run)
        if int(TW[0]) <= cap or not items.size:  # everything fits, or no items (below 0 nothing does: none are)
            self.value = self.pf + num(TS[0])
            self.chosen = self._indices(None)
            return
        self.engine = Engine(
            *(pw or (p[self.items], w[self.items])),
            cap,
            lower=None if lower is None else lower - self.pf,
            upper=None if upper is None else upper - self.pf,
            device=device,
            device_states=device_states,
            meter=meter,
            relax=relax,
            stats=self.stats,
            depth=depth,
            progress=progress,
            binding=B.name,
            big=big,
            total=self.total,
            # every item is below its total: under 2**53 each is an exact double
            doubles=not integral or (not big and max(int(TS[0]), int(TW[0])) < exact.EXACT_DOUBLE),
            started=started,
            registers=registers,
            solve=solve_items,
        )

    def _meet(self, B, p, w, c: int, meter) -> bool:
        """A meet in the middle over every item before any search, where :func:`.mitm.at_once` says it pays
        (few items, or efficiencies that (nearly) tie) and fits: True where it solved the instance (over a few
        items, also where no search is needed: every item fits, or none is left)."""
        c = int(c)  # (a numpy integer too: at_once counts in Python integers)
        n = p.shape[0]
        met = True
        if mitm.over_every_item(n, c, meter, B.compiled):
            # few items: at once whatever they are, from the instance to its answer (and its totals) in one call
            got = mitm.whole(B, p, w, c, self.stats, meter)
            code, value, weight, chosen, items, free, pf, total, zero_value, heavy = got
            if code == 0:  # (sums past int64: the engine's exact fallback)
                return False
            met = code == 2
            self.totals = int(weight), int(pf) + int(value)
        else:
            items, free, TS, TW, zero_value, heavy, big = B.items(p, w, min(c, 2**62), True)
            cap = c - int(TW[1])
            if big or not items.size or int(TW[0]) <= cap:  # (sums past int64, or nothing to search: the usual path)
                return False
            if not mitm.over_open_items(p[items], w[items], cap, meter, B.compiled):
                return False
            value, chosen = mitm.best(B, p, w, items, cap, self.stats, meter)  # (instance indices, ascending)
            self.free, pf, total = free, TS[1], TS[0]
            chosen = self._with_free(chosen)
        self.free, self.items, self.zero_value, self.heavy = free, items, zero_value, heavy
        self.pf, self.total = int(pf), int(total)
        self.engine, self.mitm_switch = None, None
        self.value = self.pf + int(value)
        self.chosen = chosen
        if met:  # (else the stats stay as the usual path leaves them where every item fits: no binding, no bound)
            self.stats.binding = B.name
            # (not numba_jit.mark_ready: that tells callers who must not wait that the engine's own kernels are loaded)
            self.proved = int(value)
            if "meet-in-the-middle" not in self.stats.extras:  # (a caller's stats may have it)
                self.stats.extras.append("meet-in-the-middle")
        return True

    def _first_run(self, B, p, w, c: int, meter, budget: int, relax: bool, lower, upper, depth: int):
        """The set-up and first run in one compiled call (see ``first_run``): None where the search ended there,
        else (the set-up as :meth:`.kernels.start` returns it, (IR, VR, the list, which bounds fired, the event the
        run stopped at) where the run started, else None)."""
        integral = p.dtype.kind != "f"
        room = BIG if meter is None else meter.limit - meter.current
        room = room if room > 0 else 0
        # (run's first run over more than mitm.MAX_ITEMS items has a budget of mitm.LOOK_UPDATES at most; over
        # fewer, the meet in the middle is weighed first, and first_run does not start)
        budget = budget if budget < mitm.LOOK_UPDATES else mitm.LOOK_UPDATES
        at = extras.first_sizes(relax and integral)  # (the list sizes the extras fire at)
        # (lower and upper lie within the instance's totals, below 2**62: the compiled binding runs no larger ones)
        limits, lo, up, t = 0, 0, 0, int if integral else float  # (Python scalars: numba types them fastest)
        if lower is not None:
            limits, lo = 1, lower
        if upper is not None:
            limits, up = limits | 2, upper
        args = (offsets.COUNTING, common.WINDOW, budget, room, at, START_STATES, mitm.MAX_ITEMS, limits, t(lo), t(up))
        went, event, its, chosen, sums, z, ub, fired, counts, rest = B.first_run(p, w, c, integral, *args)
        if went < 2:
            set_up, IR, VR, L = rest
            return set_up, (IR, VR, L, int(fired), int(event)) if went else None
        numba_jit.mark_ready(p.dtype.kind)  # (as the engine's run does: this process has the compiled kernels)
        num = int if integral else float
        self.items, self.free, TS, _, self.zero_value, self.heavy, _ = its
        self.pf, self.total = num(TS[1]), num(TS[0])
        self.engine, self.mitm_switch = None, None
        ub, z = num(ub), num(z)
        self.value, self.chosen = self.pf + z, None if went == 3 else chosen
        if integral and sums[2]:
            self.totals = sums[0], sums[1]
        self.proved = ub if ub > z else z  # (not max(): ~0.2 us a call)
        updates, core, peak, fixed_in, fixed_out, bundled, list_bytes = counts  # (numba returns Python ints)
        self.stats.binding = B.name
        self.stats.add_run(updates, core, peak)
        if depth == 0:  # (as the engine's: a sub-search's fixing is not counted)
            self.stats.add_fixing(fixed_in, fixed_out, bundled)
        if fired:
            self._note_extras({name for bit, name in ARMED if fired & bit})
        if meter is not None:
            meter.note_peak(list_bytes)
        return None

    def run(self, budget: int | None = None) -> bool:
        """Search on; True when done, False when the next step would pass ``budget`` state updates. Where few
        items are open and the engine has done as much work as a meet in the middle over them would, that takes
        over (:mod:`.mitm`)."""
        if self._again is not None:
            return self._trial(budget)
        eng = self.engine
        if eng is None:
            return True
        while self.mitm_switch is None and eng.integral:
            # With few items a meet in the middle is weighed at once; with many, most searches end long before
            # one could pay (their open items are many), so only a search that reaches LOOK_UPDATES counts its open
            # items (an O(n) pass) and hands over once its list has cost what two half lists would. Where a meet
            # over them does not fit (too many open, or too little memory), it counts again each time its updates
            # double: z rises as the list grows, and the narrower gap fixes items (58 items, 44 of them tied: 50
            # open at 131,072 updates, 44 from 2e6 on, where a search looking once built lists of 1.6e8 states
            # for 12 s and more; the meet over the 44 takes ~0.3 s).
            look = self.mitm_look
            if look is None:
                look = 0 if eng.n <= mitm.MAX_ITEMS else mitm.LOOK_UPDATES
            if eng.stats.state_updates < look:
                if eng.run(look if budget is None else min(budget, look)):
                    return self._finish(None, None)
                if budget is not None and budget <= look:
                    return False
            done = eng.stats.state_updates
            m = int(eng.open_items()[0].size)
            if mitm.fits(eng.meter, m, mitm.host(eng).compiled):
                self.mitm_switch = done + int(mitm.SWITCH_SHARE * mitm.updates(m))
            else:
                self.mitm_look = max(2 * look, 2 * done, mitm.LOOK_UPDATES)  # (doubling: a step may pass a look)
        switch = self.mitm_switch
        if switch is not None and (budget is None or budget > switch):
            if eng.stats.state_updates >= switch or not eng.run(switch):
                return self._finish(mitm.solve(eng), "meet-in-the-middle")
            return self._finish(None, None)
        return eng.run(budget) and self._finish(None, None)

    def _trial(self, budget: int | None) -> bool:
        """:meth:`run` where the interpreted kernels stand in for compiled ones not cached yet: on within the work
        this process has left for them (or ``budget``, the nearer), charged as
        :data:`knapsack_gpu.numba_jit.CORE_UPDATES` per core entry and one per state update. Past it, while a compile
        runs in a process of its own (:func:`knapsack_gpu.numba_jit.compiling_elsewhere` starts one the first time),
        on interpreted a slice at a time; once that compile has ended (or where none can run), the search starts
        again with the compiled kernels (loaded from the disk cache; any it lacks compile here, and say so) and runs
        to ``budget``. Where the disk cache holds them (a process that has not loaded numba yet), the work left is the
        trial's first :data:`~knapsack_gpu.numba_jit.LOAD_UPDATES`, and past it the search loads them."""
        again, self._again = self._again, None
        st = self.stats
        kind, cached = again[0].dtype.kind, self._cached
        step = numba_jit.SLICE_UPDATES  # a slice's work; doubled while the next step is larger
        while True:
            updates, core = st.state_updates, st.core
            left = numba_jit.trial_left(cached)
            if left <= 0 and (cached or not numba_jit.compiling_elsewhere(kind)):
                break
            allowance = left if left > 0 else step
            limited = budget is not None and budget <= updates + allowance
            try:
                done = self.run(budget if limited else updates + allowance)
            except StatesOverflow:  # (numpy's temporaries take more room than the compiled buffers: those may fit)
                break
            finally:
                numba_jit.spend_trial(st.state_updates - updates + numba_jit.CORE_UPDATES * (st.core - core))
            if done:
                return True
            if limited:  # the caller's budget: its next call goes on (or starts again)
                self._again = again
                return False
            if (st.state_updates, st.core) == (updates, core):  # the next step is larger than what was allowed
                if left > 0 and cached:
                    break  # (the trial's rest: too little for it)
                if left > 0:
                    numba_jit.end_trial()  # (on in slices while a compile runs elsewhere, else compiled)
                else:
                    step = 2 * allowance
        if not cached:
            numba_jit.end_trial()
        p, w, c, options, stats = again
        self.stats.__dict__.update(vars(stats))  # (the trial's work is not the answer's)
        self.__dict__.update(vars(Search(p, w, c, stats=self.stats, binding="compiled", **options)))
        return self.run(budget)

    def _finish(self, found, how: str | None) -> bool:
        """The search has ended: its value and selection (``found``: a meet in the middle's better one)."""
        eng = self.engine
        self._note_extras(eng.fired | ({how} if how else set()))
        self.proved = max(eng.ub, eng.z)
        if found is not None:
            value, chosen = found
        else:
            value, chosen = eng.z, selection(eng, eng.inc)
        self.value = self.pf + value
        self.chosen = None if chosen is None else self._indices(chosen)
        return True

    def _note_extras(self, names: set[str]) -> None:
        for name in sorted(names):
            if name not in self.stats.extras:
                self.stats.extras.append(name)

    def _indices(self, chosen: np.ndarray | None) -> np.ndarray:
        """Ascending instance indices of the free items and of ``chosen`` (ascending indices into the items; None:
        all of them): both lists ascend already, so only free items call for a merge."""
        return self._with_free(self.items if chosen is None else self.items[chosen])

    def _with_free(self, picked: np.ndarray) -> np.ndarray:
        """Ascending instance indices of the free items and of ``picked`` (ascending instance indices): only free
        items call for a merge."""
        return np.sort(np.concatenate([self.free, picked])) if self.free.size else picked

    def projected_updates(self) -> int:
        """The state updates left if the list kept its size (see :meth:`.engine.Engine.projected_updates`)."""
        return 0 if self.engine is None else self.engine.projected_updates()

    def result(self):
        """(value, ascending indices) once :meth:`run` returned True; (lower, None) when nothing beats ``lower``."""
        if self.chosen is None or (self.lower is not None and not self.value > self.lower):
            return self.lower, None
        return self.value, self.chosen

    def incumbent(self):
        """(the best value so far, its indices where cheaply known, else None), or None before any."""
        if self.engine is None:
            return self.value, self.chosen
        eng = self.engine
        chosen = selection_or_none(eng, eng.inc)
        sel = None if chosen is None else self._indices(chosen)
        return self.pf + eng.z, sel


def _copy_stats(stats: StatesStats) -> StatesStats:
    return StatesStats(**{**vars(stats), "extras": list(stats.extras)})


def _int64(x) -> bool:
    """Whether a bound fits the compiled kernels' int64 (floats do)."""
    return isinstance(x, float) or -BIG < x < BIG


def solve_items(p: np.ndarray, w: np.ndarray, c: int, *, max_updates=None, **options):
    """:class:`Search` to the end (``options`` as for it), its set-up and first run in one compiled call where it
    applies: (value, ascending indices), or (lower, None) when nothing beats ``lower``.

    Raises:
        StatesOverflow: the list outgrew the memory limit or ``max_updates`` state updates.
    """
    s = Search(p, w, c, first_run=BIG if max_updates is None else max_updates, **options)
    if not s.run(max_updates):
        eng = s.engine
        raise eng._overflow(f"the states list passed its work budget of {max_updates} state updates", eng.size)
    return s.result()


# --- compiled ahead of use: every entry point on a tiny instance ----------------------------------------------------

_warming: threading.Thread | None = None


def warm(kinds: str = "if") -> None:
    """Compile (or load from the disk cache) the states engine's kernels for whole-number ("i") and float ("f")
    values, every entry point, by running each once on a tiny instance, in this process; blocks until done. One
    notice says so where the disk cache lacks them."""
    if not numba_jit.enabled():
        return
    kinds = "".join(k for k in kinds if not numba_jit.ready(k))
    cold = [k for k in kinds if not _warm_cached(k)]
    if cold and not numba_jit.is_quiet():
        what = " and ".join(numba_jit.DTYPES[k] for k in cold)
        numba_jit.notify(
            ("warm", tuple(cold)),
            f"compiling the states engine's kernels for {what} values (numba): about "
            f"{sum(numba_jit.WARM_SECONDS[k] for k in cold) * numba_jit.machine_factor():.0f} s on this machine, once "
            "per environment; `knapsack-gpu compile` does it in parallel worker processes",
        )
    for kind in kinds:
        with numba_jit.quiet():
            for name, k in _warm_jobs(kind):
                warm_step(name, k)
        numba_jit.mark_ready(kind)


def _warm_jobs(kind: str) -> tuple[tuple[str, str], ...]:
    """The states engine's compile jobs :func:`warm` runs for values of kind ``kind``: (job, the kind it runs with:
    "i" for a kind-free one). The grouped solver's job is its own."""
    return tuple((n, k or "i") for n, k, _ in numba_jit.JOBS if k in (kind, "") and n != "grouped")


def _warm_cached(kind: str) -> bool:
    """Whether the disk cache holds every kernel :func:`warm` would compile for values of kind ``kind``."""
    return modes.cached(kind, tuple(n for n, _ in _warm_jobs(kind)))


def warm_in_background() -> None:
    """Start :func:`warm` in a daemon thread, once per process (numba compiles under its own lock): what a search
    asking for the "ready" binding starts where this process has not loaded the compiled kernels yet."""
    global _warming
    if _warming is None and numba_jit.enabled():

        def quietly() -> None:
            import time

            # kernels not cached yet compile in a process of their own (numba holds this one's GIL while it
            # compiles); this thread waits for it, then loads them
            if not _warm_cached("i"):
                while numba_jit.compiling_elsewhere("i"):
                    time.sleep(0.5)
            with numba_jit.quiet():
                warm()

        _warming = threading.Thread(target=quietly, name="knapsack_gpu-jit-warm", daemon=True)
        _warming.start()


def _tiny(kind: str):
    """A tiny instance whose search runs every part of the engine: values of numpy kind ``kind``, weights."""
    p = np.array([7, 5, 4, 3, 3, 3, 3, 2, 9, 8], dtype=np.int64 if kind == "i" else np.float64)
    w = np.array([5, 4, 3, 2, 2, 2, 2, 2, 7, 6], dtype=np.int64)
    return p, w


def warm_step(name: str, kind: str) -> None:
    """One job of :data:`knapsack_gpu.numba_jit.JOBS`: compile (or load) entry point ``name`` of the compiled binding
    for values of numpy kind ``kind`` ("i", "f"), and the small ones beside it, on a tiny instance."""
    B = modes.compiled()
    p, w = _tiny(kind)
    if name == "start":
        Search(p, w, 12, binding="compiled")  # start (items, setup, init_state), arm, refresh
    elif name == "run":
        Search(p, w, 12, binding="compiled").run(None)  # run (and everything it calls), open_items
    elif name == "first_run":
        at = (1000, 256, 4)  # (the extras' sizes: any will do)
        B.first_run(p, w, 12, kind == "i", True, 64, 10**6, 10**9, at, 256, 0, 3, p[0], p[0])  # (any n)
    elif name == "first_runs":  # (whole numbers only: a batch's float values are scaled to them or go to the planner)
        P, W = p.reshape(1, -1).copy(), w.reshape(1, -1).copy()
        at = extras.first_sizes(True)
        out = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(W.shape, dtype=np.bool_)
        B.first_runs(P, W, np.array([12]), 0, 1, True, offsets.COUNTING, common.WINDOW, 10**6, 10**9, at, 256, *out,
                     np.zeros(1, dtype=np.int64))  # fmt: skip
        X, one = W.astype(np.float64) / 4, np.ones(1, dtype=np.int64)  # (and the batch's float rows made whole)
        B.scale_rows_c(X, np.array([3.0]), 0, 1, np.empty(W.shape, dtype=np.int64), one.copy(), one.copy(), one.copy())
        B.whole_values_c(X, 0, 1, 2.0**53, np.empty(W.shape, dtype=np.int64), one.copy(), np.ones(1, dtype=np.bool_))
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

"""Exact 0/1 knapsack for instances made of groups of near-identical heavy items plus light items.

Jooken, Leyman and De Causmaecker's class (EJOR 2022; :func:`knapsack_gpu.generate.jooken`) is the target: g - 1
groups whose items weigh and are worth about (1/2^j + eps) c plus noise in [1, s], and light items in [1, s]. At
c = 1e10 the states list of an expanding core (combo, ours) overflows on the g >= 10 ones, and a dense row is 1e10
cells; here they take seconds, because the work splits into a small search over how many items each group gives and
an exact DP over the noise, whose range is a few times 1e4.

The decomposition (exact for any split of the items, however poor; :func:`detect` finds one):
group j has a base beta_j <= its lightest weight and items i with weight beta_j + a_i (a_i >= 0) and value
beta_j + b_i (b_i any sign); the other items are light (w, p). For a count vector k (k_j items of group j):
K(k) = sum_j k_j beta_j, r = C - K(k), and

    Phi_k(r) = max sum b + sum p over exactly k_j items of each group and any light items, with sum a + sum w <= r,

so OPT = max over k with K(k) <= C of K(k) + Phi_k(r). Bounds, for every lam >= 0 (lam = t / D, all times D):

    Phi_k(r) <= lam r + sum_j T_j(lam, k_j) + sum_light max(0, p - lam w),                            (LB)

T_j(lam, k) the sum of the k largest b - lam a in group j. Proof: any feasible choice has sum b + sum p
= sum (b - lam a) + sum (p - lam w) + lam (sum a + sum w), each part at most the matching term. lam = 0 gives the
plain "best noise values" bound; the minimum over lam is the LP relaxation's value (the count constraints alone
describe an integral polytope), and on Jooken's instances it is within a few units of Phi.

The search (every step keeps the optimum):
1. Window. Any choice holds at most Nmax heavy items (the lightest ones' prefix that fits), so Phi_k <= phi0 =
   the Nmax largest positive b plus every positive light p; a vector with K < C - W is worth at most
   C - W - 1 + phi0. W starts at 2 phi0 and grows until the incumbent is >= C - W - 1 + phi0.
2. DP over groups (heaviest first) on the distinct partial sums K_p. Each K_p keeps, over the vectors reaching it,
   the best prefix score sum T_j(lam, k_j) for a few lam and the least noise N_p = sum_j (the k_j smallest a of
   group j). K_p goes when K_p + N_p > C (sums and noise only grow) or K_p + (the most the later groups can add)
   < C - W. Keeping only the best score and least noise per K_p is exact: what follows depends on K_p alone.
3. Every final K in the window has bound(K) = K + floor(min_lam (best score + lam r + light term) / D) >= K + Phi_k
   for every vector k reaching K. Ks are visited in decreasing bound; the search stops at the first bound <= the
   incumbent.
4. For a visited K, the vectors whose (LB) reaches the incumbent + 1 and whose least noise fits r are enumerated
   back through the DP's stages (a partial vector goes when its suffix score plus the best prefix score of what is
   left cannot reach it, or its noise plus the least prefix noise exceeds r), their LP bounds taken on a fine grid
   of lam, and those above the incumbent completed exactly in decreasing bound:
   - if the lam = 0 choice (each group's k_j largest b, every light item with p > 0) fits r, Phi_k is its value;
   - else by a DP over noise weight x = 0..r: the light items' profile, then each group with "exactly k_j items"
     (a (k_j + 1) x (r + 1) table per group). Then r < sum a + sum w of that choice, so the profile is short.
     Before it, the vector's (LB) at its best multiplier fixes every item whose flip would cost more than the bound's
     lead over the value sought (:func:`fix_core`: Dembo-Hammer on the completion), so the DP runs over a few items a
     group and the noise they leave (g = 14: 1e3-1e4 cells a completion instead of 1e8-1e9).
5. The best vector's choice is traced back (one decision bit a cell), checked (weight <= C, value as claimed), and
   returned as item indices.

Why it is fast on Jooken's class: with bases that halve exactly (beta_j = A 2^(G-j) + B, :func:`detect`'s fit),
K(k) = A M + B N depends only on M = sum k_j 2^(G-j) and N = sum k_j, so the DP's stages hold at most ~1e4 sums
(up to ~5e6 with each group's lightest weight as its base), and few sums lie near C (c = 1e10, g = 10, eps = 1e-4:
A = c / 512, B = 1e6, every K is a multiple of 31,250 and C - 62,500 is the highest in reach with N <= ~250 items).
A few hundred to a few thousand vectors pass the bounds, and at most a handful need the noise DP (g = 14: 2-4;
g = 10: none, the noise budget is slack). The lam bounds are exact rationals (integers times D), and every sum is
int64, checked below 2^62 up front.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

D = 64  # lam = t / D
# The DP's multipliers t (lam = t / D; 64 is lam = 1): near 1 where the noise budget binds loosely (Jooken: the LP's
# multiplier is 0.9-1.0), large where it is nearly exhausted (lam -> infinity tests the k_j lightest noises against r).
DP_LAMS = (0, 16, 32, 48, 56, 60, 64, 68, 72, 80, 96, 128, 256, 1024, 8192, 65536)
LP_LAMS = np.r_[np.arange(0, 4 * D + 1), D * 2 ** np.arange(3, 13)]  # per vector: [0, 4] by 1/64, then 8 .. 4096
T_MAX = int(max(max(DP_LAMS), LP_LAMS.max()))
# A completion's first noise DP fixes items for choices within this much of its LP bound (Jooken: the bound is within
# a few units of Phi_k, and the core it leaves is a few items a group); where Phi_k is further below, a second DP
# fixes for the value the first one found.
GUESS = 32
SAFE = 1 << 62


class GroupedGiveUp(RuntimeError):
    """The instance does not suit this solver within its limits (no group structure, too many sums or vectors, a
    noise DP too large, numbers too wide); the message says which. Nothing is wrong with the instance."""


@dataclass(frozen=True)
class Groups:
    """A split of the items: groups with a base each (<= the group's lightest weight) and light items.

    Attributes:
        bases: (G,) int64, one per group.
        members: G int64 arrays of item indices.
        light: int64 item indices solved by the light items' profile.
    Items in none of these are left out (detect leaves out only items heavier than the capacity).
    """

    bases: np.ndarray
    members: tuple
    light: np.ndarray


@dataclass
class GroupedStats:
    """What a solve did: the window width, the DP's stage sizes (distinct partial sums) and the most candidate sums
    a stage formed, the final sums in the window, vectors enumerated (and the steps their walks took) and completed
    (of which by the noise DP, over how many cells, with how many items fixed by reduced costs), and the seconds each
    phase took."""

    window: int = 0
    rounds: int = 0
    stage_sizes: list = field(default_factory=list)
    formed: int = 0
    final_sums: int = 0
    vectors: int = 0
    walk_steps: int = 0
    completions: int = 0
    noise_dps: int = 0
    noise_cells: int = 0
    fixed: int = 0
    seconds: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Limits:
    """Work the solver may do before it gives up (GroupedGiveUp): distinct sums one DP stage keeps and candidate sums
    it forms on the way (each held while the stage runs: :data:`BYTES_PER_FORMED`), vectors per final
    sum and in all, steps of the walks over the vectors (a few million a second), noise-DP cells (sum over
    completions of k_j * m_j * (r + 1)), seconds (checked between steps; the solver's planner sets none, so that
    the plan taken never depends on the machine's speed), and the bytes a noise DP's tables may take.
    ``noise_budget``, where set, is asked once, before the first noise DP, for a tighter noise-cell limit (the
    planner's: what the dense plan that would follow costs, known only after its reductions, which a solve that needs
    no noise DP never pays for); None from it leaves ``noise_cells``."""

    stage_sums: int = 200_000_000
    stage_formed: int = 2_000_000_000
    vectors: int = 1_000_000
    total_vectors: int = 20_000_000
    walk_steps: int = 50_000_000
    noise_cells: int = 20_000_000_000
    seconds: float | None = None
    memory: int | None = None  # bytes a noise DP's tables may take (None: unbounded)
    noise_budget: Callable[[], int | None] | None = None


def looks_grouped(weights, values, capacity) -> bool:
    """A cheap test (on a sample of 256 items) of whether :func:`detect` can find groups worth solving: the
    heavy items' weights fall into tight clusters (no sampled cluster spans more than twice the noise range, and the
    gaps between them are most of the heavy weights' range) of several items each (three sampled items a cluster on
    average: Jooken's groups hold 40-100 items), and the clusters are noisy (most span more than one weight:
    copies of a few items, as in the spanner classes, are the states engine's bundles' business). False rules out
    the grouped solver at once; True may still end in None or a give-up."""
    w = np.asarray(weights, dtype=np.int64)
    p = np.asarray(values, dtype=np.int64)
    if w.size < 4:
        return False
    # on a sample of 256 items: the noise range s as they show it, the heavy ones' weights, their clusters; where
    # that shows groups, again with s over every item (a sample can miss the widest noise)
    step = max(1, w.size // 256)
    ws, ps = w[::step], p[::step]
    fits = ws <= capacity
    s = int(np.abs(ps[fits] - ws[fits]).max(initial=0)) + 1
    if not _clusters(ws[fits], s, capacity):
        return False
    every = w <= capacity
    return _clusters(ws[fits], int(np.abs(p[every] - w[every]).max(initial=0)) + 1, capacity)


def _clusters(ws: np.ndarray, s: int, capacity: int) -> bool:
    """Whether the weights ``ws`` above 2 s fall into tight (span <= 2 s), noisy clusters of several each."""
    sample = np.sort(ws[ws > 2 * s])
    if sample.size < 2 or 4 * s > capacity:
        return False
    starts = np.r_[0, np.flatnonzero(np.diff(sample) > s) + 1, sample.size]
    spans = sample[starts[1:] - 1] - sample[starts[:-1]]
    several = 3 * (starts.size - 1) <= sample.size  # clusters of several items, not scattered ones
    noisy = 2 * int((spans > 0).sum()) >= starts.size - 1  # near-identical, not identical (spanner: copies)
    gappy = 4 * int(spans.sum()) <= int(sample[-1] - sample[0])  # narrow clusters far apart, not one spread band
    return bool((spans <= 2 * s).all()) and several and noisy and gappy


def detect(weights, values, capacity, *, span: int | None = None, halving: bool = True) -> Groups | None:
    """A split for :func:`solve`, or None when the items show no group structure.

    Items heavier than the capacity are left out. The noise range s is estimated as max |p - w| + 1 (Jooken: each
    item's profit and weight share their base, so |p - w| <= s - 1), unless `span` is given. Items of weight <= 2 s
    are light; the others, by weight descending, form groups split wherever two consecutive weights differ by more
    than s. Bases: each group's lightest weight, or, when `halving` and the group bases halve (Jooken's 1/2^j), the
    affine fit beta_j = A 2^(G-j) + B (A, B whole, beta_j <= the lightest weight), which makes many count vectors
    share a sum (K = A M + B N) and the DP far smaller, unless it would add more than 4 s + 1024 noise to some group.
    None when no group has two items, a group spans more than 2 s (weights spread evenly, not in clusters) or there
    are more than 64 groups. Any split is exact; this one is only fast.
    """
    w = np.asarray(weights, dtype=np.int64)
    p = np.asarray(values, dtype=np.int64)
    idx = np.flatnonzero(w <= capacity)
    if idx.size == 0:
        return None
    s = int(span) if span is not None else int(np.abs(p[idx] - w[idx]).max()) + 1
    light = idx[w[idx] <= 2 * s]
    heavy = idx[w[idx] > 2 * s]
    heavy = heavy[np.argsort(-w[heavy], kind="stable")]
    cuts = np.flatnonzero(w[heavy][:-1] - w[heavy][1:] > s) + 1  # a gap wider than the noise range: a new group
    members = np.split(heavy, cuts) if heavy.size else []
    if not members or max(len(m) for m in members) < 2 or len(members) > 64:
        return None
    if any(int(w[m[0]] - w[m[-1]]) > 2 * s for m in members):  # a chain of close weights, not a tight group
        return None
    lightest = np.array([int(w[m].min()) for m in members], dtype=np.int64)
    bases = lightest.copy()
    if halving and 3 <= len(members) <= 40:
        fit = _halving_fit(lightest)
        if fit is not None and int((lightest - fit).max()) <= 4 * s + 1024:
            bases = fit
    return Groups(bases=bases, members=tuple(members), light=light)


def _halving_fit(lightest: np.ndarray) -> np.ndarray | None:
    """beta_j = A 2^(G-1-j) + B <= lightest[j] (j = 0..G-1, heaviest first), A and B whole, A from a least-squares fit
    of the lightest weights, B the largest that keeps every beta_j <= lightest[j]; None if A < 1 (the caller rejects
    fits that leave much noise, i.e. groups that do not halve)."""
    G = lightest.size
    powers = np.array([1 << (G - 1 - j) for j in range(G)], dtype=np.int64)
    A = int(np.floor(np.linalg.lstsq(np.stack([powers, np.ones(G)], 1).astype(float), lightest.astype(float))[0][0]))
    if A < 1:
        return None
    B = int((lightest - A * powers).min())
    fit = A * powers + B
    return fit if (fit >= 0).all() else None


@dataclass
class Tables:
    """An instance split into groups, with what the bounds and completions read (:func:`prepare`): the groups by
    base descending (``betas``, ``members``, noise ``A`` = weight - base and ``B`` = value - base, ``kmaxs`` the most
    items of each that fit), the light items (``light``, weights ``wl``, values ``pl``), the cap ``phi0`` on any
    Phi_k, and for the DP's multipliers ``dp_t`` and the LP grid :data:`LP_LAMS` the k largest D b - t a of each group
    (``Ts``, ``full``) and the light items' positive D p - t w (``light_dp``, ``light_lp``); ``amins`` each group's k
    smallest a summed; ``cum_a``, ``cum_b`` the noise weight and value of each group's k largest b (the lam = 0
    choice) and ``light_pos_w``, ``light_pos_p`` of the light items worth anything."""

    C: int
    betas: np.ndarray
    members: list
    A: list
    B: list
    light: np.ndarray
    wl: np.ndarray
    pl: np.ndarray
    kmaxs: np.ndarray
    phi0: int
    dp_t: np.ndarray
    Ts: object  # numba typed List of (len(dp_t), kmax + 1) int64
    light_dp: np.ndarray
    full: list
    light_lp: np.ndarray
    amins: object  # numba typed List
    cum_a: list
    cum_b: list
    light_pos_w: int
    light_pos_p: int


def _topk(a, b, ts, kmax) -> np.ndarray:
    """T[l, k]: the k largest D b - t_l a, summed (k = 0..kmax)."""
    out = np.zeros((len(ts), kmax + 1), np.int64)
    for q, t in enumerate(ts):
        out[q, 1:] = np.cumsum(np.sort(D * b - int(t) * a)[::-1][:kmax])
    return out


def prepare(w: np.ndarray, p: np.ndarray, C: int, groups: Groups) -> Tables:
    """The tables of :class:`Tables` for a split; GroupedGiveUp where a bound could pass int64."""
    from numba.typed import List

    order = np.argsort(-np.asarray(groups.bases, dtype=np.int64), kind="stable")
    betas = np.asarray(groups.bases, dtype=np.int64)[order]
    members = [np.asarray(groups.members[j], dtype=np.int64) for j in order]
    light = np.asarray(groups.light, dtype=np.int64)
    A = [w[m] - beta for m, beta in zip(members, betas, strict=True)]
    B = [p[m] - beta for m, beta in zip(members, betas, strict=True)]
    if any((a < 0).any() for a in A) or (betas < 0).any():
        raise ValueError("a group's base exceeds one of its weights")
    wl, pl = w[light], p[light]
    kmaxs = np.array(
        [len(m) if beta == 0 else min(len(m), C // int(beta)) for m, beta in zip(members, betas, strict=True)]
    )
    width = (
        C + sum(int(np.abs(b).sum()) + int(a.sum()) for a, b in zip(A, B, strict=True)) + int(wl.sum()) + int(pl.sum())
    )
    if (T_MAX + D) * (width + 1) >= SAFE:
        raise GroupedGiveUp(f"numbers too wide for exact int64 bounds (capacity plus noise {width})")
    # phi0: at most Nmax heavy items fit, so Phi_k <= the Nmax largest positive b + every positive light p
    heavy_w = np.sort(np.concatenate([beta + a for a, beta in zip(A, betas, strict=True)] + [np.zeros(0, np.int64)]))
    nmax = int(np.searchsorted(np.cumsum(heavy_w), C, side="right"))
    all_b = np.sort(np.concatenate(B + [np.zeros(0, np.int64)]))[::-1]
    phi0 = int(np.maximum(all_b[:nmax], 0).sum()) + int(np.maximum(pl, 0).sum())
    dp_t = np.array(DP_LAMS, dtype=np.int64)
    greedy_a = [a[np.argsort(-b, kind="stable")] for a, b in zip(A, B, strict=True)]
    return Tables(
        C=C,
        betas=betas,
        members=members,
        A=A,
        B=B,
        light=light,
        wl=wl,
        pl=pl,
        kmaxs=kmaxs,
        phi0=phi0,
        dp_t=dp_t,
        Ts=List([_topk(a, b, dp_t, int(km)) for a, b, km in zip(A, B, kmaxs, strict=True)]),
        light_dp=np.array([int(np.maximum(D * pl - int(t) * wl, 0).sum()) for t in dp_t], dtype=np.int64),
        full=[_topk(a, b, LP_LAMS, int(km)) for a, b, km in zip(A, B, kmaxs, strict=True)],
        light_lp=np.array([int(np.maximum(D * pl - int(t) * wl, 0).sum()) for t in LP_LAMS], dtype=np.int64),
        amins=List([np.concatenate([[0], np.cumsum(np.sort(a)[: int(km)])]) for a, km in zip(A, kmaxs, strict=True)]),
        cum_a=[np.concatenate([[0], np.cumsum(x)]) for x in greedy_a],
        cum_b=[np.concatenate([[0], np.cumsum(np.sort(b)[::-1])]) for b in B],
        light_pos_w=int(wl[pl > 0].sum()),
        light_pos_p=int(pl[pl > 0].sum()),
    )


@dataclass
class Stages:
    """The DP over groups within a window (:func:`dp_over_groups`): after groups 0..j-1, the distinct base sums
    ``K[j]``, their best prefix scores ``pre[j]`` (one row per multiplier) and least prefix noise ``pmin[j]``
    (numba typed Lists, what :func:`.grouped_kernels.enumerate_vectors` walks); ``sizes`` their lengths."""

    K: object
    pre: object
    pmin: object
    sizes: list
    formed: int = 0  # the most candidate sums a stage formed


def dp_over_groups(tab: Tables, W: int, limits: Limits, check_time: Callable[[], None] = lambda: None) -> Stages:
    """Step 2: the distinct partial sums of the groups' bases that can still end in the window [C - W, C], each with
    its best prefix score per multiplier and least noise; GroupedGiveUp where a stage would form more than
    ``limits.stage_formed`` candidates or keep more than ``limits.stage_sums`` sums."""
    from numba.typed import List

    from . import grouped_kernels as kern

    C = tab.C
    maxrest = np.cumsum(np.r_[0, (tab.kmaxs * tab.betas)[::-1]])[::-1]
    K = np.zeros(1, np.int64)
    pre = np.zeros((len(tab.dp_t), 1), np.int64)
    pmin = np.zeros(1, np.int64)
    out = Stages(List([K]), List([pre]), List([pmin]), [1])
    for j in range(len(tab.members)):
        lo = C - W - int(maxrest[j + 1])  # a sum below this cannot reach the window with the groups after j
        beta, kmax = int(tab.betas[j]), int(tab.kmaxs[j])
        K, pre, pmin, formed, kept = kern.dp_stage(K, pre, pmin, beta, kmax, tab.Ts[j], tab.amins[j], C, lo,
                                                   limits.stage_formed, limits.stage_sums)  # fmt: skip
        if kept < 0:
            raise GroupedGiveUp(f"DP stage {j} would form {formed} candidate sums (limit {limits.stage_formed})")
        if kept > limits.stage_sums:
            raise GroupedGiveUp(f"DP stage {j} would keep {kept} sums (limit {limits.stage_sums})")
        out.formed = max(out.formed, formed)
        out.K.append(K)
        out.pre.append(pre)
        out.pmin.append(pmin)
        out.sizes.append(len(K))
        check_time()
    return out


def sum_bounds(tab: Tables, K: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """Step 3: for final sums K with best scores pre, K + floor(min over the DP's multipliers of (best score + lam r +
    light term) / D) >= K + Phi_k for every vector k reaching K."""
    r = tab.C - K
    return K + (pre + tab.dp_t[:, None] * r[None, :] + tab.light_dp[:, None]).min(axis=0) // D


def lp_bounds(tab: Tables, vecs: np.ndarray, Ki: int) -> tuple[np.ndarray, np.ndarray]:
    """Per count vector of final sum Ki: D times its (LB) at the best multiplier of the LP grid, and that multiplier
    times D."""
    ri = tab.C - Ki
    ubd = np.empty(len(vecs), np.int64)
    tl = np.empty(len(vecs), np.int64)
    for lo in range(0, len(vecs), 4096):  # a chunk at a time: (grid x chunk) int64
        part = vecs[lo : lo + 4096]
        acc = LP_LAMS[:, None] * ri + tab.light_lp[:, None]
        for j, t in enumerate(tab.full):
            acc = acc + t[:, part[:, j]]
        at = acc.argmin(axis=0)
        ubd[lo : lo + len(part)] = acc[at, np.arange(len(part))]
        tl[lo : lo + len(part)] = LP_LAMS[at]
    return ubd, tl


class _Search:
    """Steps 4 and 5: the count vectors of the visited sums, completed in decreasing LP bound, against the
    incumbent ``best`` (and the vector that reached it, ``found``: (K, vector, "slack" or "dp", multiplier, bound))."""

    def __init__(self, tab: Tables, limits: Limits, st: GroupedStats, best: int | None):
        self.tab, self.limits, self.st = tab, limits, st
        self.best, self.found = best, None
        self.cells = 0
        self.noise_limit = None  # limits.noise_cells, tightened by limits.noise_budget() before the first noise DP
        self.t_start = time.perf_counter()

    def check_time(self) -> None:
        if self.limits.seconds is not None and time.perf_counter() - self.t_start > self.limits.seconds:
            raise GroupedGiveUp(f"time limit {self.limits.seconds} s")

    def at_sum(self, stages: Stages, Ki: int, need_value: int, limit: int, some: bool = False) -> None:
        """Vectors of final sum Ki whose (LB) reaches need_value, completed in decreasing LP bound while that bound
        beats the incumbent; with `some`, only the first `limit` of them (a heuristic pass)."""
        from . import grouped_kernels as kern

        tab, st, limits = self.tab, self.st, self.limits
        ri = tab.C - Ki
        need = (need_value - Ki) * D
        steps_left = limits.walk_steps - st.walk_steps
        vecs, count, steps = kern.enumerate_vectors(stages.K, stages.pre, stages.pmin, tab.betas, tab.kmaxs, tab.Ts,
                                                    tab.amins, Ki, ri, tab.dp_t * ri, tab.light_dp, need, limit,
                                                    steps_left, some)  # fmt: skip
        st.walk_steps += steps
        if count < 0:
            raise GroupedGiveUp(f"the walks over count vectors passed {limits.walk_steps} steps")
        st.vectors += min(count, limit)
        if count > limit and not some:
            raise GroupedGiveUp(f"{count} count vectors at one sum (limit {limit})")
        if st.vectors > limits.total_vectors:
            raise GroupedGiveUp(f"over {limits.total_vectors} count vectors")
        self.check_time()
        if len(vecs) == 0:
            return
        ubd, tl = lp_bounds(tab, vecs, Ki)
        lp = Ki + ubd // D
        for o in np.argsort(-lp, kind="stable"):
            if self.best is not None and lp[o] <= self.best:
                break
            value, how = self.complete(Ki, vecs[o], int(tl[o]), int(ubd[o]))
            if value > kern.NEG // 2 and (self.best is None or Ki + value > self.best):
                self.best, self.found = Ki + value, (Ki, vecs[o].copy(), how, int(tl[o]), int(ubd[o]))
            if st.completions % 64 == 0:
                self.check_time()

    def complete(self, K: int, vec: np.ndarray, t: int, ubd: int) -> tuple[int, str]:
        """Phi_k(C - K) exactly where it beats the incumbent ('slack': the lam = 0 choice fits; 'dp': the noise DP
        over the core left by fixing at multiplier t / D, whose bound is ubd / D); NEG if nothing fits."""
        from . import grouped_kernels as kern

        tab = self.tab
        r = tab.C - K
        self.st.completions += 1
        sel_a = sum(int(ca[k]) for ca, k in zip(tab.cum_a, vec, strict=True))
        if sel_a + tab.light_pos_w <= r:
            return sum(int(cb[k]) for cb, k in zip(tab.cum_b, vec, strict=True)) + tab.light_pos_p, "slack"
        need = None if self.best is None else (self.best + 1 - K) * D
        if need is None or ubd - need > D * GUESS:
            # a guess first: within GUESS of the bound. Every choice worth that keeps the fixings, so a core
            # reaching it has Phi_k; one that does not still found a choice, and Phi_k is below the guess
            value = self.noise_dp(K, vec, t, ubd, ubd - D * GUESS)
            if value >= (ubd - D * GUESS + D - 1) // D:
                return value, "dp"
            if value > kern.NEG // 2:
                need = max(need if need is not None else value * D, value * D)
        return self.noise_dp(K, vec, t, ubd, need), "dp"

    def noise_dp(self, K: int, vec: np.ndarray, t: int, ubd: int, need: int | None) -> int:
        """The best choice of Phi_k(C - K) that keeps the fixings for need (:func:`fix_core`); NEG if none."""
        from . import grouped_kernels as kern

        tab, st, limits = self.tab, self.st, self.limits
        core = fix_core(tab.A, tab.B, tab.wl, tab.pl, vec, tab.C - K, t, ubd, need)
        if core is None:  # the bound at t cannot reach need, or the items fixed in overfill r
            return kern.NEG
        st.noise_dps += 1
        st.fixed += core.fixed
        self.cells += core.cells()
        st.noise_cells = self.cells
        if self.noise_limit is None:
            tighter = limits.noise_budget() if limits.noise_budget is not None else None
            self.noise_limit = limits.noise_cells if tighter is None else min(limits.noise_cells, tighter)
        if self.cells > self.noise_limit:
            raise GroupedGiveUp(f"noise DP over {self.noise_limit} cells")
        _room(limits, 8 * (core.r + 1) * (int(max(core.ks, default=0)) + 4), "a noise DP's tables")
        self.check_time()
        return core_value(core)


def trace(tab: Tables, best: int, found: tuple, limits: Limits) -> np.ndarray:
    """Step 5's last part: the items of the vector that reached ``best`` (ascending indices)."""
    Kb, vec, how, t, ubd = found
    if how == "slack":
        chosen = [m[np.argsort(-b, kind="stable")[: int(k)]] for m, b, k in zip(tab.members, tab.B, vec, strict=True)]
        chosen.append(tab.light[tab.pl > 0])
    else:  # the core again, fixed at the optimum itself (tighter than where it was found, before the incumbent)
        core = fix_core(tab.A, tab.B, tab.wl, tab.pl, vec, tab.C - Kb, t, ubd, (best - Kb) * D)
        chosen = _trace_core(core, tab.members, tab.light, limits)
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, np.int64)


def solve(
    weights,
    values,
    capacity: int,
    *,
    groups: Groups | None = None,
    lower: int | None = None,
    limits: Limits = Limits(),
    stats: GroupedStats | None = None,
) -> tuple[int, list[int]]:
    """The exact optimum and an optimal selection (ascending item indices): the steps of the module docstring.

    Args:
        weights, values: whole numbers >= 0 (n,).
        capacity: >= 0.
        groups: a split (:func:`detect`'s when None).
        lower: a value some selection is known to reach: the search looks only at vectors that can reach it (the
            window starts from it), and still returns its own selection worth at least that much.
        limits: when to give up.
        stats: filled with what the solve did.

    Raises:
        GroupedGiveUp: no structure, or a limit reached; the caller goes on with another method.
    """
    st = stats if stats is not None else GroupedStats()
    w = np.asarray(weights, dtype=np.int64)
    p = np.asarray(values)
    if p.dtype.kind == "f" and not np.array_equal(p, np.floor(p)):  # int64 would truncate: a wrong optimum
        raise ValueError("values: whole numbers (the grouped solver is exact on integers only)")
    p = p.astype(np.int64)
    C = int(capacity)
    if w.ndim != 1 or w.shape != p.shape or (w < 0).any() or (p < 0).any() or C < 0:
        raise ValueError("weights and values: equal-length 1-D whole numbers >= 0; capacity >= 0")
    if groups is None:
        groups = detect(w, p, C)
        if groups is None:
            raise GroupedGiveUp("no group structure: no two items share a weight band")
    search = _Search(None, limits, st, None if lower is None else int(lower) - 1)  # look for >= lower
    tab = search.tab = prepare(w, p, C, groups)
    W = 2 * tab.phi0 + 1 if lower is None else max(1, C - int(lower) + tab.phi0 + 1)  # step 1: the window
    while True:
        st.rounds += 1
        st.window = W
        t0 = time.perf_counter()
        stages = dp_over_groups(tab, W, limits, search.check_time)
        K = stages.K[-1]
        st.stage_sizes, st.final_sums = stages.sizes, len(K)
        st.formed = max(st.formed, stages.formed)
        st.seconds["dp"] = st.seconds.get("dp", 0.0) + time.perf_counter() - t0
        t0 = time.perf_counter()
        bound = sum_bounds(tab, K, stages.pre[-1])
        visit = np.argsort(-bound, kind="stable")
        if search.best is None:  # an incumbent first: the best-bounded vectors of the best-bounded sums
            for i in visit[:5]:
                if search.best is None or bound[i] > search.best:
                    search.at_sum(stages, int(K[i]), int(bound[i]) - 50, 4096, some=True)
        for i in visit:  # then every sum and every vector that can beat it
            if search.best is not None and bound[i] <= search.best:
                break
            need = search.best + 1 if search.best is not None else -SAFE // (4 * D)
            search.at_sum(stages, int(K[i]), need, limits.vectors)
            search.check_time()
        st.seconds["search"] = st.seconds.get("search", 0.0) + time.perf_counter() - t0
        best = search.best
        if best is not None and C - W - 1 + tab.phi0 <= best:  # nothing outside the window beats the incumbent
            if search.found is None:  # the incumbent is lower - 1: no selection reaches `lower`
                raise GroupedGiveUp(f"no selection reaches lower = {lower}: the optimum is below it")
            break
        if C - W < 0:  # unreachable: the window held every sum, K = 0 (no heavy item) among them
            raise AssertionError("grouped: no count vector in a window that holds them all")
        W = 2 * W if best is None else max(2 * W, C - best + tab.phi0 + 1)

    t0 = time.perf_counter()
    selected = trace(tab, best, search.found, limits)
    value, weight = int(p[selected].sum()), int(w[selected].sum())
    if weight > C or value != best or len(np.unique(selected)) != len(selected):
        raise AssertionError(f"grouped: traced selection weight {weight} value {value}, expected <= {C} and {best}")
    st.seconds["trace"] = time.perf_counter() - t0
    return best, selected.tolist()


@dataclass(frozen=True)
class Core:
    """What is left of Phi_k(r) once items are fixed by their reduced costs: per group (the solver's order) the
    positions fixed in and the free ones with their noise (a, b) and the count ks still to choose among them; the
    light items fixed in and the free ones; the noise weight r left for the free items and the value fixed in."""

    fixed_in: list
    free: list
    a: list
    b: list
    ks: list
    light_in: np.ndarray
    light_free: np.ndarray
    light_w: np.ndarray
    light_p: np.ndarray
    r: int
    value: int
    fixed: int  # items the reduced costs fixed (beyond what the vector decides)

    def cells(self) -> int:
        """The noise DP's cells: the light items' profile and each group's exactly-k table, over r + 1 weights."""
        return (self.r + 1) * (sum(int(k) * len(a) for a, k in zip(self.a, self.ks, strict=True)) + len(self.light_w))


def fix_core(A, B, wl, pl, vec, r: int, t: int, ubd: int, need: int | None) -> Core | None:
    """Fix the items of Phi_k(r) whose reduced cost at lam = t / D rules them in or out of any choice worth need / D.

    With d = D b - t a (D p - t w for light items), ubd = t r + sum_j (the k_j largest d of group j) + (the positive
    light d) is D times the Lagrangian bound (LB) at t. A choice that leaves out an item among its group's k_j largest
    d is bounded by ubd - (d - the (k_j + 1)-th largest), one that takes an item outside them by ubd - (the k_j-th
    largest - d); a light item costs |d| against its sign. An item whose flip costs more than ubd - need is fixed
    (need None: nothing is). Exact for any t: every choice worth need / D keeps every fixing. None where ubd < need
    (no choice reaches it) or the items fixed in overfill r.
    """
    gap = None if need is None else ubd - need
    if gap is not None and gap < 0:
        return None
    fixed_in, free, ks = [], [], []
    fixed = 0
    for a, b, k in zip(A, B, vec, strict=True):
        k, m = int(k), len(a)
        every = np.arange(m)
        if gap is None or k == 0 or k == m:  # nothing to fix, or the vector decides every item
            fixed_in.append(every if k == m else every[:0])
            free.append(every[:0])
            ks.append(0)
            continue
        d = D * b - t * a
        order = np.argsort(-d, kind="stable")
        top, rest = order[:k], order[k:]
        lock_in = top[d[top] - d[order[k]] > gap]
        lock_out = rest[d[order[k - 1]] - d[rest] > gap]
        keep = np.ones(m, bool)
        keep[lock_in] = keep[lock_out] = False
        fixed_in.append(np.sort(lock_in))
        free.append(every[keep])
        ks.append(k - len(lock_in))
        fixed += len(lock_in) + len(lock_out)
    dl = D * pl - t * wl
    every = np.arange(len(wl))
    light_in = every[dl > gap] if gap is not None else every[:0]
    light_free = every[np.abs(dl) <= gap] if gap is not None else every
    fixed += len(wl) - len(light_free)
    left = r - int(wl[light_in].sum()) - sum(int(a[i].sum()) for a, i in zip(A, fixed_in, strict=True))
    if left < 0:
        return None
    value = int(pl[light_in].sum()) + sum(int(b[i].sum()) for b, i in zip(B, fixed_in, strict=True))
    return Core(
        fixed_in=fixed_in,
        free=free,
        a=[a[f] for a, f in zip(A, free, strict=True)],
        b=[b[f] for b, f in zip(B, free, strict=True)],
        ks=ks,
        light_in=light_in,
        light_free=light_free,
        light_w=wl[light_free],
        light_p=pl[light_free],
        r=left,
        value=value,
        fixed=fixed,
    )


def core_value(core: Core) -> int:
    """The best choice of a core (:func:`fix_core`) by its noise DP: the free light items' profile, then each group's
    exactly-k table; NEG where none fits."""
    from . import grouped_kernels as kern

    prof = kern.small_profile(core.light_w, core.light_p, core.r)
    for a, b, k in zip(core.a, core.b, core.ks, strict=True):
        if k:
            prof = kern.add_group(prof, a, b, int(k))
    return core.value + int(prof[core.r]) if prof[core.r] > kern.NEG // 2 else kern.NEG


def _trace_core(core: Core, members: list, light: np.ndarray, limits: Limits) -> list:
    """The items of the best choice of a core (:func:`fix_core`): its noise DP again, one decision bit a cell, walked
    back from r; with the items fixed in."""
    from . import grouped_kernels as kern

    x = core.r
    bits = (x // 64 + 1) * 8 * (max((len(a) for a in core.a), default=0) + len(core.light_w))
    _room(limits, 8 * (x + 1) * (len(core.a) + 2 + int(max(core.ks, default=0))) + bits, "the trace of the noise DP")
    prof_in = [kern.small_profile(core.light_w, core.light_p, x)]
    for a, b, k in zip(core.a, core.b, core.ks, strict=True):
        prof_in.append(kern.add_group(prof_in[-1], a, b, int(k)) if k else prof_in[-1])
    chosen = [m[i] for m, i in zip(members, core.fixed_in, strict=True)] + [light[core.light_in]]
    for j in range(len(core.a) - 1, -1, -1):
        if core.ks[j]:
            pos, x = kern.group_trace(prof_in[j], core.a[j], core.b[j], int(core.ks[j]), x)
            chosen.append(members[j][core.free[j][pos]])
    chosen.append(light[core.light_free[kern.small_trace(core.light_w, core.light_p, core.r, x)]])
    return chosen


def _room(limits: Limits, nbytes: int, what: str) -> None:
    if limits.memory is not None and nbytes > limits.memory:
        raise GroupedGiveUp(f"{what} would take {nbytes} bytes, over the {limits.memory} allowed")


# The solver's planner hands the grouped solver at most these: a few seconds of work where the instance is Jooken's
# (the shipped c = 1e10 ones take 0.1-4 s), a quick give-up where it is not.
PLANNER_LIMITS = Limits(
    stage_sums=20_000_000,
    stage_formed=100_000_000,
    vectors=1_000_000,
    total_vectors=5_000_000,
    walk_steps=50_000_000,
    noise_cells=5_000_000_000,
)
# Bytes a distinct base sum holds in the DP's stages: its sum, the scores for the multipliers and the least noise.
BYTES_PER_SUM = 8 * (len(DP_LAMS) + 2)
# Bytes a candidate sum holds while its stage runs: its key, source and count, and the merge sort's order and buffer.
BYTES_PER_FORMED = 40


def peak_bytes(groups: Groups, st: GroupedStats) -> int:
    """The most bytes a solve's DP held: every stage's sums (kept for the walks) and one stage's candidates."""
    return BYTES_PER_SUM * (len(groups.members) + 1) * max(st.stage_sizes, default=0) + BYTES_PER_FORMED * st.formed


def planner_limits(room: int, groups: Groups, noise_budget: Callable[[], int | None] | None = None) -> Limits:
    """PLANNER_LIMITS within ``room`` bytes: half for the DP's stages (every group's sums are kept for the walks),
    half for one stage's candidates (:func:`peak_bytes`), and the noise DP's tables; ``noise_budget``: see
    :class:`Limits`. More room never lowers a limit: a solve that fits some room fits any larger one."""
    from dataclasses import replace

    per_sum = BYTES_PER_SUM * (len(groups.members) + 1)
    stage_sums = max(1, min(PLANNER_LIMITS.stage_sums, room // (2 * per_sum)))
    formed = max(1, min(PLANNER_LIMITS.stage_formed, room // (2 * BYTES_PER_FORMED)))
    return replace(PLANNER_LIMITS, stage_sums=stage_sums, stage_formed=formed, memory=room, noise_budget=noise_budget)


def warm() -> None:
    """Compile (or load from numba's disk cache) every kernel of the grouped solver, on a small instance of
    Jooken's class whose noise DP and traces all run (``knapsack-gpu compile``)."""
    from .generate import jooken

    w, v, c = jooken(np.random.default_rng(0), 200, 10**6, 6, 0.1, 0.001)
    solve(w, v, c)

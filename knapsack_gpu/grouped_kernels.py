"""The compiled loops of :mod:`knapsack_gpu.grouped` (numba; imported only when that solver runs).

Every array is int64 and every sum stays below 2**62: :func:`knapsack_gpu.grouped.solve` checks the magnitudes before
it calls in (numba wraps on overflow, silently).
"""

from __future__ import annotations

import numpy as np

from .numba_jit import compile_function as _compiled

NEG = -(1 << 61)  # "unreachable" in profiles; every reachable value is above NEG // 2


@_compiled
def dp_stage(K, pre, pmin, beta, kmax, T, amin, hi, lo, max_formed, max_sums):
    """One group of the count-vector DP.

    K: sorted distinct base sums after the previous groups; pre[q, i]: the best prefix score (for multiplier q) of a
    count vector reaching K[i]; pmin[i]: the least noise weight such a vector must add (the sum over its groups of
    the k_j smallest a). The new sums K[i] + k * beta, k = 0..kmax, kept when lo <= sum and sum + noise <= hi (more
    items only add weight), sorted and made distinct; each keeps the best pre[q, i] + T[q, k] (per q) and the least
    pmin[i] + amin[k] of its predecessors. Returns (K', pre', pmin', formed, kept): the candidate sums formed and
    the distinct ones kept. Where more than max_formed would be formed (each costs its key, source and count while
    the stage runs) or more than max_sums kept, nothing more is built and the inputs come back (kept -1 where it
    stopped at the first).
    """
    n = K.shape[0]
    nl = pre.shape[0]
    cnt = 0
    for k in range(kmax + 1):
        s = k * beta
        for i in range(n):
            x = K[i] + s
            if lo <= x and x + pmin[i] + amin[k] <= hi:
                cnt += 1
    if cnt > max_formed:
        return K, pre, pmin, cnt, -1
    keys = np.empty(cnt, np.int64)
    src = np.empty(cnt, np.int64)
    ks = np.empty(cnt, np.int64)
    c = 0
    for k in range(kmax + 1):
        s = k * beta
        for i in range(n):
            x = K[i] + s
            if lo <= x and x + pmin[i] + amin[k] <= hi:
                keys[c] = x
                src[c] = i
                ks[c] = k
                c += 1
    order = np.argsort(keys, kind="mergesort")
    m = 0
    for q in range(cnt):
        if q == 0 or keys[order[q]] != keys[order[q - 1]]:
            m += 1
    if m > max_sums:
        return K, pre, pmin, cnt, m
    K2 = np.empty(m, np.int64)
    pre2 = np.full((nl, m), NEG, np.int64)
    pmin2 = np.empty(m, np.int64)
    u = -1
    for q in range(cnt):
        e = order[q]
        v = pmin[src[e]] + amin[ks[e]]
        if q == 0 or keys[e] != keys[order[q - 1]]:
            u += 1
            K2[u] = keys[e]
            pmin2[u] = v
        elif v < pmin2[u]:
            pmin2[u] = v
        for q in range(nl):
            v = pre[q, src[e]] + T[q, ks[e]]
            if v > pre2[q, u]:
                pre2[q, u] = v
    return K2, pre2, pmin2, cnt, m


@_compiled
def enumerate_vectors(stages_K, stages_pre, stages_min, betas, kmaxs, Ts, amins, final_K, r, r_term, small_term,
                      need, limit, max_steps, stop):  # fmt: skip
    """Every count vector k with sum_j k_j beta_j == final_K whose bound min_q (sum_j Ts[j][q, k_j] + r_term[q] +
    small_term[q]) is >= need and whose least noise sum_j amins[j][k_j] is <= r, depth first from the last group back.

    stages_K[j] / stages_pre[j] / stages_min[j]: the DP's sums, best prefix scores and least prefix noise after groups
    0..j-1. A partial vector (k_j..k_G) is dropped when, for some q, its suffix score plus the best prefix score of the
    sum left is below need, or its noise plus the least prefix noise exceeds r: every completion of it fails too.
    Returns (vectors (min(count, limit), G), count, steps); count = -1 when the walk passed max_steps steps. With
    ``stop`` the walk ends at the limit's vector (count = limit: a heuristic pass needs some vectors, not all).
    """
    G = betas.shape[0]
    nl = r_term.shape[0]
    out = np.zeros((limit, G), np.int64)
    nout = 0
    vec = np.zeros(G, np.int64)
    suf = np.zeros((G + 1, nl), np.int64)
    sufmin = np.zeros(G + 1, np.int64)
    kcur = np.full(G, -1, np.int64)
    at = np.zeros(G + 1, np.int64)
    at[G] = final_K
    j = G - 1
    steps = 0
    while j < G:
        steps += 1
        if steps > max_steps:
            return out[: min(nout, limit)], -1, steps
        kcur[j] += 1
        k = kcur[j]
        if k > kmaxs[j]:
            kcur[j] = -1
            j += 1
            continue
        left = at[j + 1] - k * betas[j]
        if left < 0:
            kcur[j] = -1
            j += 1
            continue
        SK = stages_K[j]
        pos = np.searchsorted(SK, left)
        if pos >= SK.shape[0] or SK[pos] != left:
            continue
        if stages_min[j][pos] + sufmin[j + 1] + amins[j][k] > r:
            continue
        pre = stages_pre[j]
        ok = True
        for q in range(nl):
            if pre[q, pos] + suf[j + 1, q] + Ts[j][q, k] + r_term[q] + small_term[q] < need:
                ok = False
                break
        if not ok:
            continue
        for q in range(nl):
            suf[j, q] = suf[j + 1, q] + Ts[j][q, k]
        sufmin[j] = sufmin[j + 1] + amins[j][k]
        vec[j] = k
        at[j] = left
        if j == 0:
            if nout < limit:
                out[nout] = vec
            nout += 1
            if stop and nout == limit:
                break
            continue
        j -= 1
    return out[: min(nout, limit)], nout, steps


@_compiled
def _small_table(w, p, X, dec):
    """S[x] = the best total p of a subset of the items with total w <= x, x = 0..X (w >= 0). Where dec has rows,
    item i's improvements of x are set as bits dec[i, x >> 6]."""
    record = dec.shape[0] > 0
    S = np.zeros(X + 1, np.int64)
    for i in range(w.shape[0]):
        wi, pi = w[i], p[i]
        if pi <= 0:
            continue
        for x in range(X, wi - 1, -1):
            v = S[x - wi] + pi
            if v > S[x]:
                S[x] = v
                if record:
                    dec[i, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    return S


@_compiled
def small_profile(w, p, X):
    """S[x] = the best total p of a subset of the items with total w <= x, x = 0..X (w >= 0)."""
    return _small_table(w, p, X, np.zeros((0, 1), np.uint64))


@_compiled
def small_trace(w, p, X, x):
    """The items of a subset reaching small_profile(w, p, X)[x] (ascending positions)."""
    m = w.shape[0]
    dec = np.zeros((m, (X >> 6) + 1), np.uint64)
    _small_table(w, p, X, dec)
    chosen = np.zeros(m, np.bool_)
    for i in range(m - 1, -1, -1):
        if (dec[i, x >> 6] >> np.uint64(x & 63)) & np.uint64(1):
            chosen[i] = True
            x -= w[i]
    return np.flatnonzero(chosen)


@_compiled
def _group_table(prof, a, b, k, dec):
    """T[c][x]: the best value with noise weight <= x after choosing c of a group's items (item i adds noise weight
    a[i] >= 0 and value b[i]), from T[0] = prof: T[c][x] = max(T[c][x], T[c-1][x - a[i]] + b[i]), counts c only
    where c items can still grow into k with the items left. Where dec has rows, item i's improvements of (c, x) are
    set as bits dec[i, c, x >> 6]."""
    X = prof.shape[0] - 1
    m = a.shape[0]
    record = dec.shape[0] > 0
    T = np.full((k + 1, X + 1), NEG, np.int64)
    T[0, :] = prof
    for i in range(m):
        ai, bi = a[i], b[i]
        top = min(k, i + 1)
        lo = max(1, k - (m - i - 1))
        for c in range(top, lo - 1, -1):
            prev = T[c - 1]
            cur = T[c]
            for x in range(X, ai - 1, -1):
                v = prev[x - ai]
                if v > NEG:
                    v += bi
                    if v > cur[x]:
                        cur[x] = v
                        if record:
                            dec[i, c, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    return T


@_compiled
def add_group(prof, a, b, k):
    """prof[x]: the best value with noise weight <= x (NEG: none). Returns the same after choosing exactly k items of
    the group (:func:`_group_table`)."""
    return _group_table(prof, a, b, k, np.zeros((0, 0, 0), np.uint64))[k].copy()


@_compiled
def group_trace(prof, a, b, k, x):
    """add_group with its decisions kept (one bit a cell), walked back from (k, x): the k chosen positions and the
    noise weight left for the groups before."""
    m = a.shape[0]
    dec = np.zeros((m, k + 1, ((prof.shape[0] - 1) >> 6) + 1), np.uint64)
    _group_table(prof, a, b, k, dec)
    chosen = np.empty(k, np.int64)
    c = k
    for i in range(m - 1, -1, -1):
        if c > 0 and (dec[i, c, x >> 6] >> np.uint64(x & 63)) & np.uint64(1):
            c -= 1
            chosen[c] = i
            x -= a[i]
    return chosen, x

"""The two sides of the core: units (items, and bundles of identical ones) sorted chunk by chunk nearest the break
first, filtered by the Dembo-Hammer test; :func:`refill_np` (vectorised) and :func:`refill_c` (in place) are twins."""

from __future__ import annotations

import numpy as np

from .order import NEAR_LEFT, NEAR_RIGHT, _one_ratio, _select, _sorted
from .registers import (
    BLEN,
    BPOS,
    BUNDLE_RUN,
    CHUNK,
    D_FITS,
    FIXED,
    GAP,
    INTEGRAL,
    LIM,
    NMEMBERS,
    NUNITS,
    PB,
    PLEN,
    PSUM,
    RIGHT,
    WB,
    WSUM,
    Z1,
    C,
    lin_ge0,
    order_ties,
)

# --- units ----------------------------------------------------------------------------------------------------------


def _new_bundle(order, pos, k, IR, UP, UW, UD, UMS, UML, MEMBERS, p, w, d):
    u = IR[NUNITS]
    IR[NUNITS] = u + 1
    i = order[pos]
    UP[u] = k * p[i]
    UW[u] = k * w[i]
    UD[u] = k * d[i] if IR[D_FITS] == 1 else d[i]  # unused where they do not fit (see _admit)
    m = IR[NMEMBERS]
    MEMBERS[m : m + k] = order[pos : pos + k]
    UMS[u] = m
    UML[u] = k
    IR[NMEMBERS] = m + k
    return u


def bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d) -> int:
    """The sorted chunk ``order`` as units in BUF[s]: runs of BUNDLE_RUN or more identical adjacent items become
    binary bundles of 1, 2, 4, ... copies and the remainder (every count stays reachable, log2(k) units enter the core
    instead of k; a run of 2 or 3 would give as many units for the work). Returns the number of units."""
    n = order.shape[0]
    out = 0
    i = 0
    while i < n:
        j = i + 1
        while j < n and p[order[j]] == p[order[i]] and w[order[j]] == w[order[i]]:
            j += 1
        if j - i < BUNDLE_RUN:
            for t in range(i, j):
                BUF[s, out] = order[t]
                BUFD[s, out] = d[order[t]]
                out += 1
        else:
            size, pos = 1, i
            while pos < j:
                k = min(size, j - pos)
                if k == 1:
                    BUF[s, out] = order[pos]
                    BUFD[s, out] = d[order[pos]]
                else:
                    u = _new_bundle(order, pos, k, IR, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)
                    BUF[s, out] = u
                    BUFD[s, out] = UD[u]
                out += 1
                pos += k
                size *= 2
        i = j
    return out


# --- the sides ------------------------------------------------------------------------------------------------------


def _admit(right, du, u, IR, VR, UP, UW) -> bool:
    """The Dembo-Hammer test: flipping unit u (reduced cost du) can still beat z: the LP bound at the break item's
    slope with u added (right) or removed (left) reaches z1. Where the reduced costs fit int64 that is du >= -gap
    (right) or du <= gap (left); elsewhere the bound itself, (psum - z1 +- p_u) wb + (c - wsum -+ w_u) pb >= 0, in
    exact 128-bit products."""
    if IR[D_FITS] == 1:
        return du >= -VR[GAP] if right else du <= VR[GAP]
    sg = 1 if right else -1
    return lin_ge0(VR[PSUM] - VR[Z1] + sg * UP[u], IR[WB], IR[C] - IR[WSUM] - sg * UW[u], VR[PB])


def _chunk_size(s, SR, plen, m):
    """After the filter kept m of side s's plen pooled items: the fixed ones counted, and the size of the chunk to
    sort now (0: the side is empty), each chunk 4 times the last."""
    SR[s, FIXED] += plen - m
    if m == 0:
        SR[s, PLEN] = 0
        return 0
    k = SR[s, CHUNK]
    SR[s, CHUNK] = 4 * k
    return k


def refill_np(s, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> None:
    """The next chunk of side s, nearest the break first: the pool is filtered by the Dembo-Hammer test at today's
    gap, then the CHUNK items nearest the break (ties of key included, or of (key, weight) where a key's ties would
    more than double the chunk: see :func:`_tie_cut`; no item left outside can be nearer) are sorted
    by key, weight and exact ratio, and bundled. Vectorised (the python binding; :func:`refill_c` is the compiled
    binding's, in place)."""
    right = s == RIGHT
    gap = VR[GAP]
    plen = SR[s, PLEN]
    SR[s, BPOS] = 0
    SR[s, BLEN] = 0
    if plen == 0:
        return
    pool = POOL[s, :plen]
    if IR[D_FITS] == 1:
        dd = d[pool]
        kept = pool[(dd >= -gap) if right else (dd <= gap)]
    else:
        admitted = np.empty(plen, dtype=np.bool_)
        for t in range(plen):
            admitted[t] = _admit(right, d[pool[t]], pool[t], IR, VR, UP, UW)
        kept = pool[admitted]
    m = kept.shape[0]
    k = _chunk_size(s, SR, plen, m)
    if k == 0:
        return
    kk = keys[kept]
    if k < m:
        thr = np.partition(kk, m - k)[m - k] if right else np.partition(kk, k - 1)[k - 1]
        sel = (kk >= thr) if right else (kk <= thr)
        chunk = kept[sel]
        rest = kept[~sel]
        if chunk.size > 2 * k:  # as refill_c with _tie_cut: the heavier ties go back, after the rest
            tie = keys[chunk] == thr
            nn, nt = int(chunk.size - tie.sum()), int(tie.sum())
            if _one_ratio(chunk[tie], 0, nt, p, w, IR[INTEGRAL] == 1):
                wc = w[chunk]
                back = tie & (wc > np.partition(wc[tie], k - nn - 1)[k - nn - 1])
                rest = np.concatenate([rest, chunk[back]])
                chunk = chunk[~back]
    else:
        chunk = kept
        rest = kept[:0]
    POOL[s, : rest.shape[0]] = rest
    SR[s, PLEN] = rest.shape[0]
    # by key (nearest the break first), then by weight so that identical items sit together, exact ties after
    o = np.argsort(w[chunk], kind="mergesort")
    chunk = chunk[o]
    ck = keys[chunk]
    o = np.argsort(-ck if right else ck, kind="mergesort")
    order = order_ties(chunk[o], ck[o], p, w, right, IR[INTEGRAL] == 1)
    SR[s, BLEN] = bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)


def _comes_first(a, b, keys, w, right) -> bool:
    """Whether item a sorts before item b in a chunk: key nearest the break first, then lighter first."""
    if keys[a] != keys[b]:
        return keys[a] > keys[b] if right else keys[a] < keys[b]
    return w[a] < w[b]


def _tie_cut(chunk, nc, keys, thr, k, p, w, integral):
    """Where the items whose key ties a chunk's threshold ``thr`` more than doubled it (the caller checks): the
    heaviest weight it keeps of them, so that it holds the k nearest in (key, weight) order; LIM (all of them) where
    they differ in exact ratio. A subset sum's single key would otherwise have a side sorted and bundled whole at
    once. (:func:`refill_np` does the same in numpy.)"""
    tied = 0
    for t in range(nc):
        tied += keys[chunk[t]] == thr
    ti = np.empty(tied, dtype=np.int64)
    tw = np.empty(tied, dtype=np.int64)
    u = 0
    for t in range(nc):
        if keys[chunk[t]] == thr:
            ti[u] = chunk[t]
            tw[u] = w[chunk[t]]
            u += 1
    if not _one_ratio(ti, 0, tied, p, w, integral):
        return LIM
    return _select(tw, k - (nc - tied) - 1)


def refill_c(s, IR, VR, SR, POOL, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, keys, p, w, d) -> None:
    """:func:`refill_np` in place, with the same chunk in the same order: the filter compacts the pool, the rest of
    the pool stays in its order, a short chunk is insertion-sorted (stable, as the two stable argsorts are)."""
    right = s == RIGHT
    plen = SR[s, PLEN]
    SR[s, BPOS] = 0
    SR[s, BLEN] = 0
    if plen == 0:
        return
    pool = POOL[s]
    m = 0
    if IR[D_FITS] == 1:  # _admit's test inline and branch-free (a call binds four arrays: atomic counts per item)
        gap = VR[GAP]
        for t in range(plen):
            x = pool[t]
            pool[m] = x
            m += (d[x] >= -gap) if right else (d[x] <= gap)
    else:
        for t in range(plen):
            x = pool[t]
            if _admit(right, d[x], x, IR, VR, UP, UW):
                pool[m] = x
                m += 1
    k = _chunk_size(s, SR, plen, m)
    if k == 0:
        return
    chunk = np.empty(m, dtype=np.int64)  # ties of key may take more than k
    nc = 0
    if k < m:
        kk = np.empty(m, dtype=np.float64)
        for t in range(m):
            kk[t] = keys[pool[t]]
        thr = _select(kk, m - k) if right else _select(kk, k - 1)
        r = 0
        for t in range(m):
            x = pool[t]
            if (keys[x] >= thr) if right else (keys[x] <= thr):
                chunk[nc] = x
                nc += 1
            else:
                pool[r] = x
                r += 1
        if nc > 2 * k:  # ties of the threshold's key more than doubled the chunk: the heavier ones go back
            wcut = _tie_cut(chunk, nc, keys, thr, k, p, w, IR[INTEGRAL] == 1)
            u = 0
            for t in range(nc):
                x = chunk[t]
                if keys[x] == thr and w[x] > wcut:
                    pool[r] = x
                    r += 1
                else:
                    chunk[u] = x
                    u += 1
            nc = u
        SR[s, PLEN] = r
    else:
        chunk[:m] = pool[:m]
        nc = m
        SR[s, PLEN] = 0
    chunk = chunk[:nc]
    if nc <= 64:
        for t in range(1, nc):
            x = chunk[t]
            u = t - 1
            while u >= 0 and _comes_first(x, chunk[u], keys, w, right):
                chunk[u + 1] = chunk[u]
                u -= 1
            chunk[u + 1] = x
    else:
        chunk = _sorted(chunk, keys, w, NEAR_RIGHT if right else NEAR_LEFT)
    order = order_ties(chunk, keys[chunk], p, w, right, IR[INTEGRAL] == 1)
    SR[s, BLEN] = bundle(s, order, IR, BUF, BUFD, UP, UW, UD, UMS, UML, MEMBERS, p, w, d)


def _pop(s, IR, VR, SR, BUF, BUFD, UP, UW, UML) -> int:
    """Pop units of side s's sorted chunk until one passes the Dembo-Hammer test at today's gap (returned) or the
    chunk is used up (-1: the caller refills it); the ones that fail are fixed (left in the break solution, or out
    of it)."""
    right = s == RIGHT
    while SR[s, BPOS] < SR[s, BLEN]:
        pos = SR[s, BPOS]
        u = BUF[s, pos]
        SR[s, BPOS] = pos + 1
        if _admit(right, BUFD[s, pos], u, IR, VR, UP, UW):
            return u
        SR[s, FIXED] += UML[u]
    return -1

"""The break item, and the items on either side of it handed to the core nearest the break first.

- :func:`find_break`: weighted selection on the efficiency keys in expected O(n): a sample guesses a narrow band of
  keys around the break, one pass splits the items into above / band / below, and only the band is looked at again.
  Only the last few hundred items are ever sorted.
- :class:`Side`: the items left of the break (in the break solution, efficiency >= the break item's) or right of it.
  They are sorted lazily, in chunks that grow fourfold, nearest the break first (combo's partitioned intervals): a
  chunk is the items whose keys are at least (right) or at most (left) a partition threshold, ties included, so no
  item outside it can be nearer the break, and each chunk is first filtered by the Dembo-Hammer test at the
  incumbent of the moment. Items far from the break are usually fixed before they are ever sorted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import exact

SMALL = 2048  # below this many candidates, sort them (a 1,000-key argsort costs ~10 us, a band round ~30)
SAMPLE = 512  # keys sampled to guess the band around the break
SPREAD = 12  # sample ranks on each side of the guess that the band spans (about 5% of the items)
FIRST_CHUNK = 32  # the first chunk a side sorts; later ones grow fourfold
BUNDLE_RUN = 4  # identical items enter as bundles from runs of this many


@dataclass
class Break:
    """The break item b and the break solution (every item before b in efficiency order).

    left: the items of the break solution, unsorted; right: the items after b, unsorted (both None when only the
    sums were asked for); wsum, psum: the break solution's weight and value (Python numbers); count: its items."""

    b: int
    left: np.ndarray | None
    right: np.ndarray | None
    wsum: int
    psum: int | float
    count: int


def _sorted(idx: np.ndarray, keys: np.ndarray, p: np.ndarray, w: np.ndarray, descending: bool) -> np.ndarray:
    k = keys[idx]
    o = np.argsort(-k if descending else k, kind="stable")
    return exact.order_ties(idx[o], k[o], p, w, descending)


def find_break(keys: np.ndarray, p: np.ndarray, w: np.ndarray, capacity: int, sets: bool = True) -> Break:
    """The break item of items with 0 < w <= capacity and total weight > capacity (weights summing below 2**62, or
    an object array). ``sets=False``: only the sums (what an LP bound needs), without the index arrays."""
    idx = None  # None: every item (saves the gathers of the first round)
    above: list[np.ndarray] = []
    below: list[np.ndarray] = []
    acc, pacc, count = 0, 0, 0  # weight, value and number of the items known to be above the break
    size = keys.size

    def take_above(mask):
        nonlocal pacc, count
        if sets:
            above.append(_pick(idx, mask))
        else:
            pacc += _dot(mask, p if idx is None else p[idx])
            count += int(np.count_nonzero(mask))

    while size > SMALL:
        kk, ww = (keys, w) if idx is None else (np.take(keys, idx), np.take(w, idx))
        step = max(1, size // SAMPLE)
        s, sw = kk[::step], ww[::step]
        o = np.argsort(-s, kind="stable")
        est = np.cumsum(sw[o].astype(np.float64)) * (size / s.size)  # weight above each sampled key, roughly
        r = int(np.searchsorted(est, capacity - acc))
        hi, lo = s[o[max(r - SPREAD, 0)]], s[o[min(r + SPREAD, s.size - 1)]]
        up, dn = kk > hi, kk < lo
        wu = _dot(up, ww)
        if acc + wu > capacity:  # the break is above the band
            if sets:
                below.append(_pick(idx, ~up))
            idx = _pick(idx, up)
        else:
            mid = ~(up | dn)
            wm = _dot(mid, ww)
            if acc + wu + wm > capacity:  # in the band, as hoped
                if not (up.any() or dn.any()):
                    break  # one key throughout (e.g. subset sum): sort what is left
                take_above(up)
                if sets:
                    below.append(_pick(idx, dn))
                acc += wu
                idx = _pick(idx, mid)
            else:  # below the band
                take_above(~dn)
                acc += wu + wm
                idx = _pick(idx, dn)
        size = idx.size
    if idx is None:
        idx = np.arange(keys.size)
    order = _sorted(idx, keys, p, w, descending=True)
    cw = np.cumsum(w[order])
    j = int(np.searchsorted(cw, capacity - acc, side="right"))  # order[:j] fit, order[j] is the break item
    if j >= order.size:
        raise ValueError("find_break needs total weight > capacity")
    wsum = acc + (int(cw[j - 1]) if j else 0)
    if not sets:
        psum = pacc + exact_total(p[order[:j]])
        return Break(int(order[j]), None, None, wsum, psum, count + j)
    left = np.concatenate(above + [order[:j]]) if above or j else order[:0]
    right = np.concatenate(below + [order[j + 1 :]])
    return Break(int(order[j]), left, right, wsum, exact_total(p[left]), int(left.size))


def _dot(mask: np.ndarray, w: np.ndarray) -> int:
    """Total weight under a mask (int64 weights below 2**62 in all; Python ints for an object array)."""
    return int(w[mask].sum()) if w.dtype == object else int(np.dot(mask, w))


def _pick(idx: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
    """idx[mask] (np.arange where idx is None); through nonzero and take, ten times a boolean index's speed."""
    return np.flatnonzero(mask) if idx is None else np.take(idx, np.flatnonzero(mask))


def exact_total(a: np.ndarray) -> int | float:
    """The exact sum (a Python int; a float for float arrays) of any values, negative ones included."""
    if a.dtype.kind == "f":
        return float(a.sum())
    if a.dtype == object:
        return int(sum(a.tolist()))
    if a.size and (int(a.max()) >= 2**62 // a.size or int(a.min()) <= -(2**62) // a.size):
        return int(sum(a.tolist()))
    return int(a.sum())


class Units:
    """What enters the core: single items (ids 0..n-1) and bundles of identical items (ids n, n + 1, ...).

    Identical items (same weight and value) are adjacent once a chunk is sorted by key and weight. A run of k of
    them becomes binary bundles of 1, 2, 4, ... copies and the remainder (RECORD's aggregation, as the dense plan's
    bundles do): every count 0..k stays reachable, and log2(k) units enter the core instead of k. Flipping more
    copies of one item only lowers the Dembo-Hammer bound, so when a bundle is fixed, the smaller bundles before it
    still reach every count that could beat z."""

    def __init__(self, p: np.ndarray, w: np.ndarray, d: np.ndarray, num):
        self.n = int(p.size)
        self.p, self.w, self.d, self.num = p, w, d, num
        self.bp: list = []
        self.bw: list[int] = []
        self.bd: list = []
        self.members: list[np.ndarray] = []

    def add(self, members: np.ndarray) -> int:
        i, k = int(members[0]), int(members.size)
        self.bp.append(k * self.num(self.p[i]))
        self.bw.append(k * int(self.w[i]))
        self.bd.append(k * self.d[i])
        self.members.append(members)
        return self.n + len(self.bp) - 1

    def pw(self, u: int):
        if u < self.n:
            return self.num(self.p[u]), int(self.w[u])
        return self.bp[u - self.n], self.bw[u - self.n]

    def items(self, u: int) -> np.ndarray:
        return np.array([u]) if u < self.n else self.members[u - self.n]

    def arrays(self, us: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, weights, reduced costs) of units ``us``."""
        single = us < self.n
        if single.all():
            return self.p[us], self.w[us], self.d[us]
        p, w, d = self.p[np.where(single, us, 0)], self.w[np.where(single, us, 0)], self.d[np.where(single, us, 0)]
        p, w, d = p.copy(), w.copy(), d.copy()
        for j in np.flatnonzero(~single).tolist():
            b = int(us[j]) - self.n
            p[j], w[j], d[j] = self.bp[b], self.bw[b], self.bd[b]
        return p, w, d

    def bundle(self, order: np.ndarray) -> list[int]:
        """Units for a sorted chunk: runs of BUNDLE_RUN or more identical adjacent items become bundles, smallest
        first (a run of 2 or 3 would give as many units, or one fewer, for the Python it costs)."""
        if order.size < BUNDLE_RUN:
            return order.tolist()
        p, w = self.p[order], self.w[order]
        same = (p[1:] == p[:-1]) & (w[1:] == w[:-1])
        if not same.any():
            return order.tolist()
        starts = np.flatnonzero(np.r_[True, ~same])
        ends = np.r_[starts[1:], order.size]
        long = np.flatnonzero(ends - starts >= BUNDLE_RUN)
        if not long.size:
            return order.tolist()
        out: list[int] = []
        done = 0
        for a, e in zip(starts[long].tolist(), ends[long].tolist(), strict=True):
            out += order[done:a].tolist()
            size, pos = 1, a
            while pos < e:
                k = min(size, e - pos)
                out.append(int(order[pos]) if k == 1 else self.add(order[pos : pos + k]))
                pos, size = pos + k, size * 2
            done = e
        return out + order[done:].tolist()


class Side:
    """One side of the break, handed out nearest the break first in exact efficiency order.

    Args:
        items: the side's items (indices), any order.
        keys: every item's efficiency key.
        units: the items' values, weights and reduced costs (p_i w_b - w_i p_b, or p_i - e_b w_i for float
            values), and the bundles of identical items made so far.
        right: True for the items after the break (decreasing efficiency), False for the break solution's.
    """

    def __init__(self, items: np.ndarray, keys, units: Units, right: bool):
        self.pool = items
        self.keys, self.units, self.right = keys, units, right
        self.d = units.d
        self.buf: list[int] = []  # the sorted chunk being handed out (units)
        self.bufd: list = []  # their reduced costs, as Python numbers (the per-item test runs in Python)
        self.pos = 0
        self.chunk = FIRST_CHUNK
        self.fixed = 0  # items dropped by the Dembo-Hammer test

    def peek(self, gap) -> int | None:
        """The next unit nearest the break (None when nothing unfixed is left); refills at ``gap``."""
        if self.pos == len(self.buf):
            self._refill(gap)
        return self.buf[self.pos] if self.pos < len(self.buf) else None

    def take(self, gap) -> int | None:
        """Pop units until one can still be flipped in a solution better than the incumbent (Dembo-Hammer at
        ``gap``, see :meth:`Engine._refresh`: reduced cost >= -gap on the right, <= gap on the left); None when the
        side is exhausted."""
        low = -gap
        while True:
            if self.pos == len(self.buf):
                self._refill(gap)
                if not self.buf:
                    return None
            u, d = self.buf[self.pos], self.bufd[self.pos]
            self.pos += 1
            if (d >= low) if self.right else (d <= gap):
                return u
            self.fixed += 1 if u < self.units.n else int(self.units.members[u - self.units.n].size)

    def remaining(self, gap) -> np.ndarray:
        """Units not handed out yet that pass the fixing test at ``gap`` (the rest of the sorted chunk, then the
        unsorted pool)."""
        rest = np.asarray(self.buf[self.pos :], dtype=np.int64)
        if self.pool.size:
            rest = np.concatenate([rest, self.pool])
        dd = self.units.arrays(rest)[2]
        return rest[dd >= -gap if self.right else dd <= gap]

    def drop(self, items: np.ndarray) -> None:
        """Fix the plain items ``items`` (units below ``units.n``, not handed out yet) at their side's value: they
        never enter the core."""
        if not items.size:
            return
        self.pool = self.pool[~np.isin(self.pool, items)]
        gone = set(items.tolist())
        rest = [(u, d) for u, d in zip(self.buf[self.pos :], self.bufd[self.pos :], strict=True) if u not in gone]
        self.buf, self.bufd, self.pos = [u for u, _ in rest], [d for _, d in rest], 0
        self.fixed += int(items.size)

    def _refill(self, gap) -> None:
        pool = self.pool
        if pool.size:
            dd = self.d[pool]
            keep = np.flatnonzero(dd >= -gap if self.right else dd <= gap)
            self.fixed += int(pool.size - keep.size)
            pool = np.take(pool, keep)
        self.buf, self.bufd, self.pos = [], [], 0
        if not pool.size:
            self.pool = pool
            return
        k, self.chunk = self.chunk, self.chunk * 4
        kk = self.keys[pool]
        if k < pool.size:
            if self.right:
                sel = kk >= np.partition(kk, pool.size - k)[pool.size - k]
            else:
                sel = kk <= np.partition(kk, k - 1)[k - 1]
            chunk, self.pool = pool[sel], pool[~sel]
        else:
            chunk, self.pool = pool, pool[:0]
        # by key, then by weight so that identical items sit together (exact ties settled after)
        ck = self.keys[chunk]
        by = -ck if self.right else ck
        o = np.argsort(by, kind="stable") if self.units.w.dtype == object else np.lexsort((self.units.w[chunk], by))
        order = exact.order_ties(chunk[o], ck[o], self.units.p, self.units.w, self.right)
        self.buf = self.units.bundle(order)
        self.bufd = self.units.arrays(np.asarray(self.buf, dtype=np.int64))[2].tolist()

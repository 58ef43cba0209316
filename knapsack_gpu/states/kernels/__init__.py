"""The expanding core's search, written once: the loop, the break item, the two sides and the list step.

These modules are plain Python in the subset numba compiles (arrays, scalars, tuples; no Python objects). They run
in one of three bindings (:mod:`..modes`), which differ only in what the few list operations (``merge``, ``prune``,
``room_for``, ``state_at``) and the exact-arithmetic helpers (``lin_sat``, ``ratio_cmp``, ``break_order``) are:

- compiled: every function here compiled by numba, the list ops as the scalar loops of :mod:`.merge` (one linear
  merge, one fathoming pass: a few ns a state);
- python: the same functions interpreted, the list ops vectorised in numpy (:mod:`..lists`), exact for Python
  integers too (instances whose sums pass int64), and the reference the compiled ops are tested against;
- device: interpreted, the list ops in torch on a CUDA device (lists of millions of states).

A binding binds the functions of every module below into one namespace: a kernel calls another by its name,
whichever module holds it, and its module's own imports only name where that is (and serve calls from Python,
unbound). By concern:

- :mod:`.registers`: the events, the register slots, the tuned constants, the names each binding supplies;
- :mod:`.arith`: exact arithmetic (128-bit products, gcds);
- :mod:`.order`: the break item and the orders of items (merge, quick and radix sorts);
- :mod:`.bounds`: bounds and relaxations (cardinality, surrogate, counting bound, open items);
- :mod:`.instance`: set-up and decoding (the items a search takes, its state, the items a state holds);
- :mod:`.sides`: the two sides' sorted chunks of units;
- :mod:`.search`: the loop, its registers and incumbent, a first run;
- :mod:`.merge`: merge and fathoming (the compiled binding's list);
- :mod:`.meet`: meet in the middle;
- :mod:`.batch`: many instances' first runs in one call (:func:`knapsack_gpu.solve_batch`).

The search state lives in arrays so that every binding reads and writes the same state and a search can move from
one binding to another between two calls of :func:`.search.run` (the engine does when numba has loaded, or when the
list is long enough for the device):

- ``IR`` (int64) and ``VR`` (the values' dtype) hold the scalars, at the slots :mod:`.registers` names;
- ``SR`` (2 x ...) each side's counters; ``POOL``, ``BUF``, ``BUFD`` (2 x ...) each side's unsorted items, its
  sorted chunk of units and their reduced costs;
- units (``UP``, ``UW``, ``UD``, ``UMS``, ``UML``, ``MEMBERS``): the n items, then bundles of identical items;
- ``EU``, ``ES``: the units that entered the core, in order, and their sign (+1 added, -1 removed);
- ``L``: the state list (weights W, values P, decision bits V), sorted by weight with strictly increasing value.

numba's disk cache keys a compiled function by its own source file only, and a caller's cached code holds its
callees': the compiled binding stamps every kernel's cache entry with :data:`SOURCES`, all of them (an edit of any
module compiles them all again, as it did when they were one module).
"""

from __future__ import annotations

from pathlib import Path

from . import arith, batch, bounds, instance, meet, merge, order, registers, search, sides

MODULES = (registers, arith, order, bounds, instance, sides, search, merge, meet, batch)
SOURCES = tuple(sorted(str(Path(m.__file__)) for m in MODULES))

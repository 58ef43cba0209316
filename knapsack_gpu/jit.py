"""numba, guarded in one place: whether the states engine's kernels compile, and how.

The kernels (:mod:`knapsack_gpu.states.kernels`) compile with ``numba.njit(cache=True)``: on first use in an
environment (seconds, see the README), then from numba's disk cache (``__pycache__`` beside the source, or a
per-user cache directory where that is read-only; ``NUMBA_CACHE_DIR`` moves it). Without numba, or with
``KNAPSACK_GPU_JIT=0``, the same kernels run interpreted with numpy list operations, exact and slower: one warning
says so.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

ENV = "KNAPSACK_GPU_JIT"
_warned = False


def enabled() -> bool:
    """Whether the compiled kernels may be used: numba is importable and ``KNAPSACK_GPU_JIT`` is not "0"."""
    if os.environ.get(ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    if not _installed():
        _warn()
        return False
    return True


_found: bool | None = None


def _installed() -> bool:
    """Whether numba is installed (looked up once: a search of sys.path costs tens of microseconds)."""
    global _found
    if _found is None:
        _found = importlib.util.find_spec("numba") is not None
    return _found


def _warn() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            "numba is not installed: the states engine runs its kernels interpreted with numpy list operations, "
            "exact but 10-100x slower on small and medium instances; pip install numba (0.68+) for the compiled "
            "engine",
            RuntimeWarning,
            stacklevel=3,
        )


def compile_function(fn):
    """``fn`` compiled lazily (on its first call) with a disk cache; nogil so that other threads run meanwhile."""
    import numba

    return numba.njit(cache=True, nogil=True)(fn)

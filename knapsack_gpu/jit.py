"""numba, guarded in one place: whether the states engine's kernels compile, and how.

The kernels (:mod:`knapsack_gpu.states.kernels`) compile with ``numba.njit(cache=True)``: on first use in an
environment (tens of seconds, once: see the README; ``knapsack-gpu compile`` does it ahead of time), then from
numba's disk cache (``__pycache__`` beside the source, or a per-user cache directory where that is read-only;
``NUMBA_CACHE_DIR`` moves it). Without numba, or with ``KNAPSACK_GPU_JIT=0``, the same kernels run interpreted with
numpy list operations, exact and slower: one warning says so.

Callers that must not wait for a compile (the torch.compile plug-in's solves) ask for the "ready" binding: the
compiled kernels where this process has them already (:func:`ready`), else the interpreted ones while a background
thread loads the compiled ones (:func:`warm_in_background`).
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings

from . import env

ENV = "KNAPSACK_GPU_JIT"
_warned = False


def enabled() -> bool:
    """Whether the compiled kernels may be used: numba is importable and ``KNAPSACK_GPU_JIT`` is not "0"."""
    if env.get(ENV, "1").strip().lower() in ("0", "off", "false", "no"):
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


def compile_function(fn, inline: bool = False):
    """``fn`` compiled lazily (on its first call) with a disk cache; nogil so that other threads run meanwhile."""
    import numba

    return numba.njit(cache=True, nogil=True, inline="always" if inline else "never")(fn)


_ready: set[str] = set()  # value kinds ("i", "f") whose compiled kernels this process has loaded
_warming: threading.Thread | None = None


def ready(kind: str) -> bool:
    """Whether the compiled kernels for values of numpy kind ``kind`` ("i" or "f") are loaded in this process."""
    return kind in _ready


def mark_ready(kind: str) -> None:
    _ready.add(kind)


def warm(kinds: str = "if") -> None:
    """Compile (or load from the disk cache) the states engine's kernels for whole-number ("i") and float ("f")
    values, every entry point, by running each once on a tiny instance; blocks until done."""
    from .states import modes

    for kind in kinds:
        if enabled() and kind not in _ready:
            modes.warm(kind)
            _ready.add(kind)


def warm_in_background() -> None:
    """Start :func:`warm` in a daemon thread, once per process (numba compiles under its own lock)."""
    global _warming
    if _warming is None and enabled():
        _warming = threading.Thread(target=warm, name="knapsack_gpu-jit-warm", daemon=True)
        _warming.start()


def cache_is_warm() -> bool:
    """Whether numba's disk cache holds the states engine's main kernel, looked up without importing numba: beside
    the source (``__pycache__``), under ``NUMBA_CACHE_DIR``, or in the per-user cache numba falls back to where the
    source's folder is read-only. False means the first solve compiles (tens of seconds)."""
    import glob
    import sys

    if not enabled():
        return True
    from .states import kernels

    source = kernels.__file__
    name = (
        f"{os.path.splitext(os.path.basename(source))[0]}.run-{kernels.run.__code__.co_firstlineno}"
        f".py{sys.version_info[0]}{sys.version_info[1]}.nbi"
    )
    places = [os.path.join(os.path.dirname(source), "__pycache__")]
    if os.environ.get("NUMBA_CACHE_DIR"):
        places.append(os.environ["NUMBA_CACHE_DIR"])
    places.append(os.path.join(os.path.expanduser("~"), ".cache", "numba"))
    return any(
        os.path.exists(os.path.join(places[0], name))
        if i == 0
        else glob.glob(os.path.join(d, "**", name), recursive=True)
        for i, d in enumerate(places)
    )


COMPILE_NOTICE = (
    "knapsack-gpu: compiling the states engine (numba), once per environment: tens of seconds; later runs load it "
    "in about a second. `knapsack-gpu compile` does this ahead of time; KNAPSACK_GPU_JIT=0 runs it interpreted."
)

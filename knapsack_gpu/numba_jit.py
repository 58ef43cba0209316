"""numba, guarded in one place: whether the compiled kernels may run, how they compile, and what a user is told.

It imports none of the package's solvers (they import it): :mod:`knapsack_gpu.jit` compiles them ahead of use.

The kernels (:mod:`knapsack_gpu.states.kernels`, :mod:`knapsack_gpu.grouped_kernels`) compile with
``numba.njit(cache=True)`` on first use, entry point by entry point (a few seconds to half a minute each on a 2-core
VM), then load from numba's disk cache (``__pycache__`` beside the source, or a per-user cache directory where that is
read-only; ``NUMBA_CACHE_DIR`` moves it). ``knapsack-gpu compile`` (:func:`knapsack_gpu.jit.compile_all`) compiles
every one ahead of time in parallel worker processes. Without numba, or with ``KNAPSACK_GPU_JIT=0``, the states
engine's kernels run interpreted with numpy list operations, exact and slower: one warning says so.

Nothing waits for a compile unasked:

- a search whose kernels the disk cache does not hold yet runs the interpreted ones (the "python" binding) while its
  work stays small (:data:`TRIAL_UPDATES` a process): a few items or a short search answer in milliseconds where a
  compile would take a minute; a search that goes past it starts again compiled (:class:`knapsack_gpu.states.Search`);
- a compile that runs in the foreground says so first, once, with an estimate: a WARNING of the "knapsack_gpu" logger
  (a default Python set-up prints it on stderr; the CLI prints it as its other messages);
- callers that must not wait at all (the torch.compile plug-in's solves) ask for the "ready" binding: the compiled
  kernels where this process has them already (:func:`ready`), else the interpreted ones while a background thread
  loads the compiled ones (:func:`knapsack_gpu.states.warm_in_background`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import pickle
import threading
import warnings
from contextlib import contextmanager

from . import env

ENV = "KNAPSACK_GPU_JIT"
log = logging.getLogger("knapsack_gpu")
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


def compile_function(fn, inline: bool = False, sources: tuple[str, ...] | None = None):
    """``fn`` compiled lazily (on its first call) with a disk cache; nogil so that other threads run meanwhile.
    ``sources``: the files whose contents together stamp its cache entry (:func:`source_stamp`) in place of numba's
    stamp of ``fn``'s own file: kernels that call each other across files (whose cached code holds their callees')
    go stale together. None: numba's."""
    import numba

    set_up()
    compiled = numba.njit(cache=True, nogil=True, inline="always" if inline else "never")(fn)
    if sources is not None:
        compiled._cache._cache_file._source_stamp = source_stamp(sources)
    return compiled


_stamps: dict[tuple[str, ...], bytes] = {}


def source_stamp(sources: tuple[str, ...]) -> bytes:
    """The cache stamp of kernels spread over the files ``sources``: the hash of every file's name and contents
    (read once a process, as numba reads a source's)."""
    got = _stamps.get(sources)
    if got is None:
        h = hashlib.sha256()
        for path in sorted(sources):
            with open(path, "rb") as f:
                h.update(os.path.basename(path).encode() + b"\0" + f.read())
        got = _stamps[sources] = h.digest()
    return got


# --- the entry points: what Python calls, what each compiles, and how long -------------------------------------------

# Every compiled function Python calls (the states engine's through a binding, the grouped solver's directly), with
# the parameter that holds the values (its dtype tells a whole-number search's overload from a float one's; None:
# the same overload serves both) and how long a compile of it takes in a fresh cache, its callees included: seconds
# for int64 and float64 values, measured on the 2-core VM (one process, the other core idle; a machine 3x slower
# took 3x as long). The notice before a compile quotes them; none is given below a second.
KERNELS: dict[str, tuple[str, str | None, float, float]] = {
    # name: (module (of knapsack_gpu.states.kernels, or grouped_kernels), values parameter, seconds int64, float64)
    "first_run": ("search", "p", 33.0, 33.0),  # (start 16 + run 11 + its own 7)
    "first_runs": ("batch", "P", 36.0, 36.0),  # (first_run 33 and its own)
    "scale_rows_c": ("batch", None, 0.5, 0.5),
    "whole_values_c": ("batch", None, 0.5, 0.5),
    "start": ("instance", "p", 16.0, 16.0),
    "run": ("search", "VR", 11.0, 11.0),
    "arm": ("search", "VR", 0.4, 0.4),
    "refresh": ("search", "VR", 0.3, 0.3),
    "init_state": ("instance", "p", 1.1, 1.1),
    "setup_c": ("instance", "p", 10.5, 10.5),
    "items_c": ("instance", "p", 0.6, 0.6),
    "open_items": ("bounds", "d", 0.3, 0.3),
    "gcd_and_sum": ("arith", None, 0.3, 0.3),
    "pair_c": ("search", "P", 1.4, 1.4),
    "decode": ("instance", "P", 0.4, 0.4),
    "break_order_c": ("order", "p", 8.4, 8.4),
    "counted_c": ("bounds", None, 1.1, 1.1),
    "count_within_c": ("bounds", None, 2.0, 2.0),
    "surrogate_bisect": ("bounds", None, 1.4, 1.4),
    "surrogate_case": ("bounds", "P", 3.0, 3.0),
    "meet": ("meet", "p", 5.0, 5.0),
    "meet_instance": ("meet", "p", 9.0, 9.0),  # (meet 5 and its own)
    "combine_c": ("meet", "PA", 0.3, 0.3),
    "selection_sums": ("instance", "v", 0.3, 0.3),
    "items_valid": ("instance", None, 0.2, 0.2),
    "float_items_valid": ("instance", None, 0.2, 0.2),
    "dp_stage": ("grouped_kernels", None, 2.8, 2.8),
    "enumerate_vectors": ("grouped_kernels", None, 2.4, 2.4),
    "small_profile": ("grouped_kernels", None, 0.5, 0.5),
    "small_trace": ("grouped_kernels", None, 0.5, 0.5),
    "add_group": ("grouped_kernels", None, 0.6, 0.6),
    "group_trace": ("grouped_kernels", None, 0.5, 0.5),
}
DTYPES = {"i": "int64", "f": "float64"}

# The jobs of `knapsack-gpu compile` (:func:`knapsack_gpu.jit.compile_all`) and :func:`knapsack_gpu.states.warm`:
# (job, values kind: "i", "f" or "" where one overload serves both, the jobs of that kind it waits for). Each job
# runs one entry point (and the few small ones beside it) on a tiny instance (:func:`knapsack_gpu.states.warm_step`;
# "grouped": the grouped solver's, :func:`grouped.warm`).
# Longest chains first: a job starts once the jobs it waits for have put their kernels in the disk cache, so that it
# loads them instead of compiling them again (first_run calls start and run).
JOBS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("start", "f", ()),
    ("start", "i", ()),
    ("run", "f", ("start",)),
    ("run", "i", ("start",)),
    ("first_run", "f", ("start", "run")),
    ("first_run", "i", ("start", "run")),
    ("first_runs", "i", ("start", "run", "first_run")),
    ("meet", "i", ("start",)),
    ("meet_instance", "i", ("meet",)),
    ("grouped", "", ()),
    ("count_within_c", "", ()),
    ("surrogate_case", "i", ()),
    ("surrogate_bisect", "", ()),
    ("pair_c", "f", ("start", "run")),
    ("pair_c", "i", ("start", "run")),
    ("selection_sums", "i", ()),
    ("float_items_valid", "", ()),
)
# Seconds of the jobs above one after the other in a fresh cache on the 2-core VM (74-75 s), and the longest chain
# of jobs that wait for each other (start, run, first_run: ~34 s) with a worker's start-up: what `knapsack-gpu
# compile` tells before it starts. Two workers there took 43 s.
COMPILE_SECONDS = 75.0
CHAIN_SECONDS = 40.0
# Seconds of :func:`knapsack_gpu.states.warm` for each value kind in a fresh cache on the 2-core VM (the kind-free
# jobs with "i")
WARM_SECONDS = {"i": 42.0, "f": 31.0}
# What a search calls first, compiled (:func:`knapsack_gpu.states.modes.host`): a meet in the middle at once over a
# few items, or the expanding core's set-up and first run.
FEW = ("meet_instance",)
SEARCH = ("first_run", "start", "arm", "run")


def job_label(name: str, kind: str) -> str:
    """How progress names a job: "first_run (int64)", "grouped solver"."""
    if name == "grouped":
        return "grouped solver"
    return f"{name} ({DTYPES[kind]})" if kind else name


# --- the disk cache: whether it holds an entry point, looked up without importing numba --------------------------


def _cache_dir(source: str) -> str:
    """Where numba keeps the disk cache of functions defined in ``source``, as its locators pick it:
    ``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the source where that is writable, else the per-user cache."""
    folder = os.path.dirname(os.path.abspath(source))
    sub = f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return os.path.join(user, sub)
    tree = os.path.join(folder, "__pycache__")
    if os.access(tree if os.path.isdir(tree) else folder, os.W_OK):
        return tree
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numba", sub)


class _Signatures(pickle.Unpickler):
    """Reads a numba cache index without numba: its types come back as their names ("array(int64, 1d, C)"), and
    nothing but numba's types and the plain containers around them is accepted."""

    def find_class(self, module, name):
        if module.split(".")[0] == "numba":
            if name == "_type_reconstructor":
                return _type_name
            return type(name, (), {"__init__": lambda self, *a, **k: None})
        if (module, name) in (("copyreg", "_reconstructor"), ("builtins", "object")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name}")


def _type_name(reconstructor, args, state) -> str:
    return state.get("name", "?") if isinstance(state, dict) else "?"


def _dtype(type_name: str) -> str:
    """The dtype a numba type names: int64 of "array(int64, 1d, C)" or of "int64"."""
    return type_name[6:].split(",")[0] if type_name.startswith("array(") else type_name


def _index_signatures(path: str, stamp: bytes, version: str) -> list[tuple]:
    """The argument types (names) of every overload a fresh cache index at ``path`` holds ([] if none: no index,
    another numba, a stale source stamp, or a layout this reader does not know)."""
    try:
        with open(path, "rb") as f:
            if pickle.load(f) != version:
                return []
            data = f.read()
        got, overloads = _Signatures(io.BytesIO(data)).load()
        return [tuple(key[0]) for key in overloads] if got == stamp else []
    except Exception:  # noqa: BLE001 (any unreadable index: the compile it stands for is simply not counted)
        return []


_cached: dict[tuple[str, tuple[str, ...]], bool] = {}


def cached(kind: str, names: tuple[str, ...], find, sources: tuple[str, ...] | None = None) -> bool:
    """Whether numba's disk cache holds compiled entry points ``names`` (of :data:`KERNELS`; ``find(name)``: the
    Python function numba compiles for one) for values of numpy kind ``kind`` ("i" or "f"): their index files beside
    the source's cache (wherever numba keeps it) are fresh (the stamp of ``sources`` as :func:`compile_function`
    stamps them, else numba's: the source's hash) and name an overload for that dtype. Read without importing numba
    (~1 ms); remembered until this process compiles something. True where nothing compiles (numba missing,
    KNAPSACK_GPU_JIT=0)."""
    key = (kind, names)
    got = _cached.get(key)
    if got is None:
        got = _cached[key] = not enabled() or _look_up(kind, names, find, sources)
    return got


def cache_changed() -> None:
    """Forget what :func:`cached` found: this process (or its workers) put kernels in the disk cache."""
    _cached.clear()


def _look_up(kind: str, names: tuple[str, ...], find, sources: tuple[str, ...] | None) -> bool:
    import sys
    from importlib.metadata import version

    try:
        numba_version = version("numba")
    except Exception:  # noqa: BLE001 (numba found but its metadata is not: the lookup cannot tell)
        return False
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    stamps: dict[str, bytes] = {}
    for name in names:
        values = KERNELS[name][1]
        fn = find(name)
        source = fn.__code__.co_filename
        if source not in stamps:
            if sources is not None:
                stamps[source] = source_stamp(sources)
            else:  # (numba's stamp: the hash of the source file)
                with open(source, "rb") as f:
                    stamps[source] = hashlib.sha256(f.read()).digest()
        module = os.path.splitext(os.path.basename(source))[0]  # (numba names the index by the file's name)
        base = f"{module}.{name}-{fn.__code__.co_firstlineno}.{tag}.nbi"
        sigs = _index_signatures(os.path.join(_cache_dir(source), base), stamps[source], numba_version)
        at = fn.__code__.co_varnames.index(values) if values else None
        if not any(at is None or (at < len(s) and _dtype(s[at]) == DTYPES[kind]) for s in sigs):
            return False
    return True


# --- the interpreted stand-in's work -------------------------------------------------------------------------------

# A search whose compiled entry points the disk cache does not hold runs the interpreted kernels for up to this much
# work in a process (all such searches together), then compiles: ~2 s of the python binding on the 2-core VM, against
# 30-70 s to compile, counted as state updates (~15 ns each there on long lists) plus CORE_UPDATES for each unit that
# entered a core (~27 us of Python a step; a fit over 168 searches of 14 families, 30-10,000 items, 2-40x off on
# the few smallest). The demo's and the README's instances take under 1 %.
TRIAL_UPDATES = int(env.get("KNAPSACK_GPU_TRIAL_UPDATES", "130000000"))  # (tests and benchmarks set a smaller one)
CORE_UPDATES = 1_800
# In a process that has not imported numba, a search runs the interpreted kernels even where the disk cache holds
# them, for up to this much of the trial: importing numba and loading the kernels a search calls costs 0.5-0.9 s of a
# fresh process on the 2-core VM, this much interpreted work 0.1-0.3 s (circle n = 10,000: its extras fire early).
# Most searches (the README's, the demo's, kplib's n = 1,000: ~30,000 charged) end well within it, and a long one
# pays at most that much before it loads them.
LOAD_UPDATES = 2_000_000
_trial_left = TRIAL_UPDATES


def trial_left(cached: bool = False) -> int:
    """The interpreted stand-in's work left to this process (state updates; <= 0: searches compile, or load the
    compiled kernels); ``cached``: for a search whose compiled kernels the disk cache holds (the first LOAD_UPDATES
    of the trial)."""
    return _trial_left - (TRIAL_UPDATES - min(LOAD_UPDATES, TRIAL_UPDATES)) if cached else _trial_left


def spend_trial(updates: int) -> None:
    global _trial_left
    _trial_left -= updates


def end_trial() -> None:
    """From now on, searches of this process compile what they need."""
    global _trial_left
    _trial_left = 0


# --- compiling in a process of its own, while searches go on interpreted ------------------------------------------

# Interpreted state updates a search runs between two looks at whether the background compile has ended (~0.25 s)
SLICE_UPDATES = TRIAL_UPDATES // 8
_background = None  # the compile process this process started (subprocess.Popen), once
_LOCK = "knapsack_gpu.compiling"
# "0": no compile in a process of its own; a search past its trial compiles in the foreground, with a notice
BACKGROUND_ENV = "KNAPSACK_GPU_COMPILE_IN_BACKGROUND"


def compile_lock() -> str:
    """The file a compile holds an exclusive lock on while it runs (beside the states kernels' disk cache): a
    process that finds it held knows another is compiling, and waits for that one rather than compile too."""
    kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "states", "kernels", "search.py")
    folder = _cache_dir(kernels)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, _LOCK)


def _held_elsewhere() -> bool:
    """Whether another process holds the compile lock (POSIX; elsewhere: no)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        with open(compile_lock(), "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:  # (a read-only cache folder: numba's own per-user cache then; no lock to look at)
        return False
    return False


def compiling_elsewhere(kind: str) -> bool:
    """Whether a compile runs in another process for a search of values of kind ``kind`` to wait for: the one this
    process started in the background (once, the first time a search's interpreted trial ran out: ``knapsack-gpu
    compile --background``, one worker at the lowest priority, that kind's kernels first), or another process's
    that holds the compile lock. False where none runs or can start (the caller compiles in the foreground)."""
    global _background
    if not enabled() or env.get(BACKGROUND_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    if _background is None:
        if _held_elsewhere():
            return True
        import subprocess
        import sys

        cmd = [sys.executable, "-m", "knapsack_gpu", "compile", "--background", "--first", kind]
        try:
            _background = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
        except OSError:
            _background = False
            return False
        notify(
            ("background", kind),
            "the compiled kernels are not in numba's disk cache yet: a process of its own compiles them "
            f"(`knapsack-gpu compile`, about {estimate_total(1):.0f} s on this machine); searches go on interpreted "
            "meanwhile and switch to the compiled kernels once they are there",
        )
        return True
    if _background is False:
        return False
    running = _background.poll() is None or _held_elsewhere()
    if not running:
        cache_changed()  # (what it wrote is looked up again)
    return running


# --- notices --------------------------------------------------------------------------------------------------------

_told: set = set()
_local = threading.local()  # .quiet: this thread's compiles say nothing; .depth: compiles nested in this thread


def notify(key, message: str) -> None:
    """``message`` as a WARNING of the "knapsack_gpu" logger, once a process for each ``key``."""
    if key not in _told:
        _told.add(key)
        log.warning(message)


@contextmanager
def quiet():
    """This thread's compiles go unannounced (background warm-ups, compile workers: someone else reports)."""
    was = getattr(_local, "quiet", False)
    _local.quiet = True
    try:
        yield
    finally:
        _local.quiet = was


def is_quiet() -> bool:
    """Whether this thread's compiles go unannounced (see :func:`quiet`)."""
    return getattr(_local, "quiet", False)


# A fixed piece of pure Python (:func:`_spin`) takes this long on the 2-core VM the compile times above were measured
# on, idle (the least of three): the machine a notice is given on is measured against it. Set from a second VM (AMD
# EPYC, 2026-12-07: the spin 5.6-6.1 ms, `knapsack-gpu compile` 61-71 s where the first VM took 43 s: 1.45x).
REFERENCE_SPIN_S = 0.0040
_factor: tuple[float, float] | None = None  # (when measured, the factor)


def _spin() -> float:
    import time

    t = time.perf_counter()
    x = 0
    for i in range(100_000):
        x += i * i % 7
    return time.perf_counter() - t


def machine_factor() -> float:
    """How much longer a compile takes here than on the reference VM, measured, not assumed: this machine's speed
    at a fixed piece of Python (the least of three runs, ~25 ms in all) times its contention (the 1-minute load
    average with this process, over its cores, where that passes 1). Re-measured after a minute."""
    global _factor
    import time

    now = time.monotonic()
    if _factor is None or now - _factor[0] > 60:
        speed = min(_spin() for _ in range(3)) / REFERENCE_SPIN_S
        try:
            cores = len(os.sched_getaffinity(0)) or 1
        except AttributeError:
            cores = os.cpu_count() or 1
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
        _factor = (now, max(speed, 0.25) * max(1.0, (load + 1) / cores))
    return _factor[1]


def estimate(name: str, kind: str) -> float:
    """Seconds a compile of entry point ``name`` (values of kind ``kind``) takes on this machine as it is now."""
    entry = KERNELS.get(name)
    return 0.0 if entry is None else entry[3 if kind == "f" else 2] * machine_factor()


def estimate_total(workers: int) -> float:
    """Seconds ``knapsack-gpu compile`` takes into an empty cache with ``workers`` worker processes, here, now."""
    return max(COMPILE_SECONDS / workers, CHAIN_SECONDS) * machine_factor()


def compile_notice(name: str, kind: str) -> str:
    """What a process says before it compiles entry point ``name`` for values of kind ``kind`` (the first time
    in full, then briefly)."""
    what = f"{name} for {DTYPES[kind]} values" if kind else name
    text = f"compiling {what} (numba): about {estimate(name, kind):.0f} s"
    if not any(key[0] in ("compile", "warm") for key in _told):
        text += (
            ", once per environment (later runs load it from the disk cache); `knapsack-gpu compile` compiles every "
            "kernel ahead of time, in parallel"
        )
    return text


def _on_compile(dispatcher, args) -> None:
    """numba starts to compile ``dispatcher`` for ``args`` (numba types) in this thread: where it is an entry point
    of ours compiled for its own sake (not as a callee) and takes over a second, say so once."""
    name = dispatcher.py_func.__name__
    entry = KERNELS.get(name)
    if entry is None or getattr(_local, "quiet", False) or getattr(_local, "depth", 0) > 1:
        return
    values = entry[1]
    kind = ""
    if values is not None:
        at = dispatcher.py_func.__code__.co_varnames.index(values)
        kind = "f" if at < len(args) and _dtype(str(args[at])) == "float64" else "i"
    if estimate(name, kind or "i") >= 1.0:
        notify(("compile", name, kind), compile_notice(name, kind))


_ready_numba = False


def set_up() -> None:
    """Once numba is in use: the compile notices (numba's "numba:compile" event) and locked cache writes."""
    global _ready_numba
    if _ready_numba:
        return
    _ready_numba = True
    from numba.core import event

    class _Notices(event.Listener):
        def on_start(self, ev):
            _local.depth = getattr(_local, "depth", 0) + 1
            _on_compile(ev.data["dispatcher"], ev.data["args"])

        def on_end(self, ev):
            _local.depth -= 1
            if not _local.depth:
                cache_changed()

    event.register("numba:compile", _Notices())
    _lock_cache_writes()


def _lock_cache_writes() -> None:
    """numba adds an overload to its disk cache by reading the function's index, taking the first free data file
    and writing both: two processes adding different overloads of one function at once (parallel compile workers,
    a sweep's workers warming up together) can take the same data file, and the index of one then names the other's
    code (numba issue 4807: segmentation faults). Here each addition holds an exclusive lock on one file in the
    cache's folder (POSIX; elsewhere numba's own behaviour)."""
    try:
        import fcntl
    except ImportError:
        return
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "knapsack_gpu_locked", False):
        return

    def locked_save(self, key, data):
        os.makedirs(self._cache_path, exist_ok=True)
        with open(os.path.join(self._cache_path, "knapsack_gpu.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    locked_save.knapsack_gpu_locked = True
    caching.IndexDataCacheFile.save = locked_save


# --- what this process has loaded -----------------------------------------------------------------------------------

_ready: set[str] = set()  # value kinds ("i", "f") whose compiled kernels this process has loaded


def ready(kind: str) -> bool:
    """Whether the compiled kernels for values of numpy kind ``kind`` ("i" or "f") are loaded in this process."""
    return kind in _ready


def mark_ready(kind: str) -> None:
    _ready.add(kind)

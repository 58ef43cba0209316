"""Working-memory accounting: every buffer the solver allocates goes through a :class:`Meter`.

The plan decides from byte counts before allocating; the meter enforces the limit at allocation time and records the
peak that ``Solution.stats["peak_bytes"]`` reports.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from .devices import kind
from .lazy import torch
from .sizes import format_bytes  # noqa: F401  (re-exported: most callers import it from here)

# Share of the free memory used when the caller gives no memory_limit. CPU: half of MemAvailable leaves room for the
# caller's own arrays. CUDA: 80% of what mem_get_info reports free leaves room for the caching allocator's rounding.
CPU_SHARE = 0.5
CUDA_SHARE = 0.8


# Large host buffers ask for transparent huge pages (Linux, THP "madvise" mode): first-touching fresh memory in 4 KiB
# page faults can cost seconds per GB on a VM, and 2 MiB pages often cut that tenfold, though not on every host state
# (the README's benchmark notes give the measured cases). Below 32 MiB the faults cost little.
HUGE_PAGE_BYTES = 32 << 20
_MADV_HUGEPAGE = 14


@lru_cache(maxsize=1)
def _madvise():
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return fn


def advise_huge_pages(t: torch.Tensor) -> None:
    """Best effort: back a large CPU tensor with 2 MiB pages (no-op elsewhere or when refused)."""
    nbytes = t.numel() * t.element_size()
    if t.device.type != "cpu" or nbytes < HUGE_PAGE_BYTES or not sys.platform.startswith("linux"):
        return
    fn = _madvise()
    if fn is None:
        return
    page = 1 << 21
    start = (t.data_ptr() + page - 1) & ~(page - 1)
    end = (t.data_ptr() + nbytes) & ~(page - 1)
    if end > start:
        fn(start, end - start, _MADV_HUGEPAGE)


def element_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max" (cgroup v2's no-limit) is not a number


def _status_bytes(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _process_headroom() -> int | None:
    """Bytes this process may still allocate under RLIMIT_AS (ulimit -v) and its cgroup's memory limit, if set."""
    room = []
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            room.append(soft - (_status_bytes("VmSize") or 0))
    except (ImportError, OSError, ValueError):
        pass
    for limit, usage in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),  # v1
    ):
        top, used = _read_int(limit), _read_int(usage)
        if top is not None and used is not None and top < 1 << 60:  # v1 reports "no limit" as a huge number
            room.append(top - used)
    return max(0, min(room)) if room else None


# The CPU's free memory is read from /proc at most this often (seconds): five file reads cost ~80 us, a third of a
# small solve, and a default limit is a share of what is free, not an exact figure.
HOST_FREE_TTL = 1.0
_host_free: tuple[float, int] | None = None


def available_bytes(device: torch.device) -> int:
    """Bytes currently free to this process on ``device``: mem_get_info on CUDA; on the CPU MemAvailable, capped by
    RLIMIT_AS and the cgroup memory limit where they are set (re-read after HOST_FREE_TTL seconds)."""
    global _host_free
    if kind(device) == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    now = time.monotonic()
    if _host_free is None or now - _host_free[0] > HOST_FREE_TTL:
        _host_free = (now, _read_host_free())
    return _host_free[1]


def _read_host_free() -> int:
    free = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if free is None:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = 4 << 30
    room = _process_headroom()
    return free if room is None else min(free, room)


def default_limit(device: torch.device) -> int:
    share = CUDA_SHARE if kind(device) == "cuda" else CPU_SHARE
    return int(available_bytes(device) * share)


class DeviceOutOfMemory(MemoryError):
    """The device refused an allocation the plan allowed (something else holds the memory)."""


class Meter:
    """Allocates tensors against a byte limit and tracks the live total and its peak."""

    def __init__(self, limit: int, device: torch.device):
        self.limit = int(limit)
        self.device = device
        self.current = 0
        self.peak = 0
        self._live: dict[int, int] = {}

    def hold(self, nbytes: int, what: str) -> None:
        """Count ``nbytes`` that the solve keeps outside the meter's tensors (host arrays of per-item state) until
        the meter is dropped; raise MemoryError naming them if the limit cannot hold them."""
        if self.current + nbytes > self.limit:
            raise MemoryError(
                f"{what} needs at least {nbytes} bytes ({format_bytes(nbytes)}); with what the solve already "
                f"holds that is {self.current + nbytes} bytes, over memory_limit={self.limit} "
                f"({format_bytes(self.limit)})"
            )
        self.current += nbytes
        if self.current > self.peak:  # (not max(): a builtin's call costs ~0.2 us, and a small solve makes many)
            self.peak = self.current

    def note_peak(self, nbytes: int) -> None:
        """Record a transient use of ``nbytes`` on top of what is held (checked by its owner beforehand)."""
        if self.current + nbytes > self.peak:
            self.peak = self.current + nbytes

    def alloc(self, shape: tuple[int, ...] | int, dtype: torch.dtype) -> torch.Tensor:
        """Allocate on the meter's device; raise MemoryError naming the bytes if the limit or the device refuses."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        numel = 1
        for s in shape:
            numel *= s
        nbytes = numel * element_size(dtype)
        if self.current + nbytes > self.limit:
            raise MemoryError(
                f"knapsack working memory would reach {self.current + nbytes} bytes "
                f"({format_bytes(self.current + nbytes)}) on {self.device}, over memory_limit={self.limit}"
            )
        try:
            t = torch.empty(shape, dtype=dtype, device=self.device)
        except (MemoryError, RuntimeError) as exc:
            # torch.cuda.OutOfMemoryError is a RuntimeError; so is the CPU allocator's "can't allocate memory" when
            # the OS refuses (ulimit -v, a cgroup, overcommit off). The shape and device were checked before: any
            # failure here is the allocator's.
            raise DeviceOutOfMemory(
                f"{self.device} refused {nbytes} bytes ({format_bytes(nbytes)}): {str(exc).splitlines()[0][:200]}"
            ) from None
        advise_huge_pages(t)
        self._live[id(t)] = nbytes
        self.current += nbytes
        self.peak = max(self.peak, self.current)
        return t

    def free(self, t: torch.Tensor | None) -> None:
        if t is not None:
            self.current -= self._live.pop(id(t))

    @contextmanager
    def temporary(self, nbytes: int) -> Iterator[None]:
        """Account for a temporary that a library call allocates itself (e.g. ``torch.flip``, which has no out=)."""
        if self.current + nbytes > self.limit:
            raise MemoryError(f"a {nbytes}-byte temporary would exceed memory_limit={self.limit} on {self.device}")
        self.current += nbytes
        self.peak = max(self.peak, self.current)
        try:
            yield
        finally:
            self.current -= nbytes


class Workspace:
    """Named, grow-only buffers reused across passes, so no pass allocates per item (and few per pass)."""

    def __init__(self, meter: Meter):
        self.meter = meter
        self._buffers: dict[str, torch.Tensor] = {}

    def get(self, name: str, numel: int, dtype: torch.dtype) -> torch.Tensor:
        buf = self._buffers.get(name)
        if buf is None or buf.numel() < numel or buf.dtype != dtype:
            self.meter.free(buf)
            self._buffers.pop(name, None)
            buf = self.meter.alloc(numel, dtype)
            self._buffers[name] = buf
        return buf[:numel]

    def buffers(self) -> dict[str, torch.Tensor]:
        """The live buffers by name (to inspect or poison in tests)."""
        return dict(self._buffers)

    def nbytes(self, name: str) -> int:
        buf = self._buffers.get(name)
        return 0 if buf is None else buf.numel() * buf.element_size()

    def release(self, name: str) -> None:
        self.meter.free(self._buffers.pop(name, None))

    def clear(self) -> None:
        for name in list(self._buffers):
            self.release(name)

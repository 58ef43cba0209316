"""A torch.device's type and name, read once per device.

``torch.device.type`` builds a new string on every read (~0.6 us, where ``.index`` takes 0.04 us), and so does
``str(device)``; a solve of a small instance reads the type about six times on its way (the memory limit, the
backend, the states engine's placement, its budget) and the name once (its stats): :func:`kind` and :func:`name`
look them up in a dict keyed by the device (~0.08 us).
"""

from __future__ import annotations

import os


class _Host(str):
    """The CPU as a solve names it without torch: the string "cpu" (torch takes it wherever it takes a device) that
    reads like torch.device("cpu") too (``.type``, ``.index``)."""

    __slots__ = ()
    type = "cpu"
    index = None

    def __repr__(self) -> str:
        return "device(type='cpu')"


CPU = _Host("cpu")
# Where none of these exists, no NVIDIA driver is installed and CUDA cannot be available: "auto" is the CPU without
# importing torch to ask (1.8-2.3 s of a fresh process).
_DRIVER = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg")


_possible: list[bool] = []


def cuda_possible() -> bool:
    """Whether this machine may have a CUDA device (a driver is there); False means torch would say none. Looked up
    once a process (four stat calls: ~15 us, a third of a small solve)."""
    if not _possible:
        _possible.append(any(os.path.exists(p) for p in _DRIVER))
    return _possible[0]


_SEEN: dict = {}


def _read(device) -> tuple[str, str]:
    got = _SEEN.get(device)
    if got is None:  # a torch.device, or its name ("cuda:0")
        got = _SEEN[device] = (device.split(":")[0], device) if isinstance(device, str) else (device.type, str(device))
    return got


def kind(device) -> str:
    """``device.type`` ("cpu", "cuda", ...) of a torch.device or its name."""
    return _read(device)[0]


def name(device) -> str:
    """``str(device)`` ("cpu", "cuda:1", ...) of a torch.device."""
    return _read(device)[1]

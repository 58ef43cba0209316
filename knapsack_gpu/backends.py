"""Which device and which pass implementation: the one place optional imports (Triton) are guarded.

backend="auto" picks numpy on the CPU and, on CUDA, the Triton kernels when triton imports and supports the dtype,
else torch ops. The environment variable KNAPSACK_GPU_BACKEND overrides "auto" (e.g. to compare backends).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from . import env
from .devices import CPU, cuda_possible, kind
from .lazy import torch

if TYPE_CHECKING:
    from .dense.passes.base import ForwardPass
    from .memory import Workspace
    from .progress import Reporter

ENV_BACKEND = "KNAPSACK_GPU_BACKEND"
BACKENDS = ("auto", "numpy", "torch", "triton")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """ "auto"/None -> CUDA when available, else the CPU; otherwise "cpu", "cuda", "cuda:N" or a torch.device. The
    CPU is :data:`knapsack_gpu.devices.CPU` (a str torch takes as a device); "auto" asks torch only where torch is
    imported already or a CUDA driver is installed."""
    if device is None or (isinstance(device, str) and device == "auto"):
        if "torch" not in sys.modules and not cuda_possible():
            return CPU
        return torch.device("cuda") if torch.cuda.is_available() else CPU
    if isinstance(device, str) and device == "cpu":
        return CPU
    if not isinstance(device, str) and not ("torch" in sys.modules and isinstance(device, torch.device)):
        raise TypeError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or a torch.device, got {device!r}")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"device={device!r} is not a device: {exc}") from None
    if dev.type == "cpu":
        return CPU
    if dev.type != "cuda":
        raise ValueError(f"device={device!r}: only 'cpu' and 'cuda' devices are supported")
    if not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but CUDA is not available here; use device='auto' or 'cpu'")
    index = torch.cuda.current_device() if dev.index is None else dev.index
    if index >= torch.cuda.device_count():
        raise ValueError(f"device={device!r} but only {torch.cuda.device_count()} CUDA device(s) exist")
    return torch.device("cuda", index)


def triton_interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def have_triton() -> bool:
    """Whether the Triton kernels can load (triton installed)."""
    from .dense.passes.triton_pass import kernels

    return kernels() is not None


def resolve_backend(backend: str, device: torch.device, dtype: torch.dtype | None) -> str:
    """The pass implementation to use (``dtype`` None: the states engine's int64, checked without torch).

    Raises:
        ValueError: an unknown backend, or an explicit one that cannot run on this device or dtype.
    """
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; choose one of {', '.join(repr(b) for b in BACKENDS)}")
    if backend == "auto":
        named = env.get(ENV_BACKEND, "auto")
        if named != "auto":
            if named not in BACKENDS:
                raise ValueError(f"{ENV_BACKEND}={named!r}; choose one of {', '.join(BACKENDS)}")
            return resolve_backend(named, device, dtype)
        if kind(device) == "cpu":
            return "numpy"
        return "triton" if _triton_dtype(dtype) and have_triton() else "torch"
    if backend == "numpy" and kind(device) != "cpu":
        raise ValueError(f"backend='numpy' runs on the CPU only, not {device}; use 'torch' or 'triton' there")
    if backend == "triton":
        if not have_triton():
            raise ValueError("backend='triton' needs the triton package: pip install 'knapsack-gpu[triton]'")
        if kind(device) != "cuda" and not triton_interpreting():
            raise ValueError(
                f"backend='triton' runs on CUDA devices (or on CPU tensors under TRITON_INTERPRET=1), not {device}"
            )
        if not _triton_dtype(dtype):
            from .dtypes import supported

            raise ValueError(f"backend='triton' supports {', '.join(map(str, supported()))}, not {dtype}")
    return backend


def _triton_dtype(dtype) -> bool:
    from .dtypes import supported

    return dtype is None or dtype in supported()


def make_pass(
    name: str,
    device: torch.device,
    dtype: torch.dtype,
    ws: Workspace,
    progress: Reporter | None = None,
    reduced: bool = False,
) -> ForwardPass:
    """The forward pass of backend ``name``; ``reduced``: its jobs run in reduced values (knapsack_gpu/reduced.py)."""
    if name == "numpy":
        from .dense.passes.numpy_pass import NumpyPass

        return NumpyPass(device, dtype, ws, progress, reduced)
    if name == "torch":
        from .dense.passes.torch_pass import TorchPass

        return TorchPass(device, dtype, ws, progress, reduced)
    if name == "triton":
        from .dense.passes.triton_pass import TritonPass

        return TritonPass(device, dtype, ws, progress, reduced)
    raise ValueError(f"unknown backend {name!r}")

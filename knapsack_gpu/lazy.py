"""torch, imported on first use: ``from .lazy import torch`` in a module that needs torch only on some of its paths.

``import torch`` costs 1.8-2.3 s of a fresh process on the 2-core VM, ten times the rest of a small solve. A solve of
lists or numpy arrays on the CPU that its states engine answers never touches torch, so it never imports it (a test
holds that); a tensor passed in, a CUDA device, a dense pass, the partitioner or the torch and Triton backends do,
through the first attribute read of this stand-in. Type annotations stay strings (``from __future__ import
annotations``) and cost nothing. A torch tensor is recognised without importing torch by
:func:`knapsack_gpu.problem.is_tensor` (where torch is not imported, nothing is a tensor).
"""

from __future__ import annotations

import sys


class _Torch:
    """Reads of ``torch.<name>`` import torch the first time, then answer from the module itself."""

    __slots__ = ()

    def __getattr__(self, name: str):
        import torch

        return getattr(torch, name)

    def __repr__(self) -> str:
        return "<torch, imported on first use>"


torch = _Torch()


def loaded() -> bool:
    """Whether this process has imported torch (by this stand-in or otherwise)."""
    return "torch" in sys.modules

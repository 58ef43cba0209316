"""The environment variables a solve reads on every call (``KNAPSACK_GPU_STRATEGY``, ``_BACKEND``, ``_JIT``).

``os.environ.get`` of an unset variable costs ~1.8 us (the mapping raises KeyError and catches it): a solve of a small
instance reads three, a few per cent of its time. :func:`get` first looks the encoded name up in the mapping's own
dict (~0.1 us), which ``os.environ`` keeps in step with every change made through it, and reads through
``os.environ`` where the name is there (or where this Python's mapping has no such dict).
"""

from __future__ import annotations

import os
from functools import cache


def get(name: str, default: str) -> str:
    """``os.environ.get(name, default)``, fast where the variable is unset."""
    data = getattr(os.environ, "_data", None)
    if data is not None and _key(name) not in data:
        return default
    return os.environ.get(name, default)


@cache
def _key(name: str):
    encode = getattr(os.environ, "encodekey", None)
    return name if encode is None else encode(name)

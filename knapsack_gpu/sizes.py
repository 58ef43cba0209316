"""Byte counts in and out: "8GB" or "512MiB" to bytes, and bytes to a unit a person reads (no torch import: the CLI's
--help and --version use these)."""

from __future__ import annotations

import argparse
import re
from decimal import Decimal

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_MAX_BYTES = 2**63  # far past any machine: a larger limit is a typo (1e400), not a plan


def parse_bytes(text: str) -> int:
    """'8GB' -> 8e9, '512MiB' -> 512 * 2**20, '1e9' -> 1e9 (decimal units for kB/MB/GB/TB, binary for KiB...)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    unit = m and m.group(2).lower()
    if not m or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"cannot read {text!r} as a size: use e.g. 8GB, 512MiB or a number of bytes")
    try:
        number = Decimal(m.group(1))  # exact, where float would give inf for 1e400
        value = int(number * _UNITS[unit]) if number < _MAX_BYTES else _MAX_BYTES
    except ArithmeticError:  # an exponent past what Decimal holds, e.g. 1e-99999999999999999999
        raise argparse.ArgumentTypeError(f"{text!r} is not a size any machine has: use e.g. 8GB or 512MiB") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a memory limit must be at least 1 byte")
    if value >= _MAX_BYTES:
        raise argparse.ArgumentTypeError(f"{text!r}: a memory limit must be below 2**63 bytes")
    return value


def byte_count(value: object, name: str) -> int | None:
    """A size as every entry point takes it, in bytes: an int, or a string :func:`parse_bytes` reads ("2GB" is
    2 * 10**9, "2GiB" 2 * 2**30, as the CLI's flags); None stays None. TypeError/ValueError naming ``name``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return parse_bytes(value)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"{name}={value!r}: {exc}") from None
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be a number of bytes or a size such as '8GB' or '512MiB', got {value!r}")
    if int(value) <= 0:
        raise ValueError(f"{name} = {value}: it must be a positive number of bytes")
    return int(value)


def format_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError

"""Every kernel variant the launchers can launch, typed for compiling ahead of time (benchmarks/kernel_report.py).

A variant is a kernel with its constexprs (COVER, RECORD, the block size its launcher passes), its num_warps and the
argument types a launch specialises it to. The launch constants are read from the kernel modules when asked, so a
retuned BLOCK or num_warps is what gets compiled.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from . import item, sweep, tile

DTYPES = {"int16": "i16", "int32": "i32", "int64": "i64", "float32": "fp32", "float64": "fp64"}
"""The DP value dtypes the planner can choose (knapsack_gpu/dtypes.py; int16 for reduced values,
knapsack_gpu/reduced.py), by Triton type."""

_VALUE_POINTERS = {"src_ptr", "dst_ptr", "a_ptr", "b_ptr", "scratch_ptr", "v_ptr", "tail_ptr"}
# Capacities and offsets reach 1e10: a launch passes them as i64 once they pass 2**31, the case that costs registers.
_WIDE_SCALARS = {"start", "end", "length", "n_tiles", "top0"}


@dataclass(frozen=True)
class Variant:
    kernel: str
    fn: object  # the @triton.jit function
    dtype: str
    cover: bool
    record: bool
    block_name: str
    block: int
    num_warps: int
    maxnreg: int | None = None

    @property
    def options(self) -> dict[str, int]:
        return {"num_warps": self.num_warps, **({"maxnreg": self.maxnreg} if self.maxnreg else {})}

    @property
    def name(self) -> str:
        mode = ("cover" if self.cover else "standard") + ("+bits" if self.record else "")
        return f"{self.kernel}[{self.dtype}, {mode}, {self.block_name}={self.block}, warps={self.num_warps}]"

    def signature(self) -> dict[str, str]:
        sig = {}
        for name in self.fn.arg_names:
            if name in ("COVER", "RECORD", self.block_name):
                sig[name] = "constexpr"
            elif name in _VALUE_POINTERS:
                sig[name] = "*" + DTYPES[self.dtype]
            elif name == "bits_ptr":
                sig[name] = "*u8"
            elif name.endswith("_ptr"):
                sig[name] = "*i64"
            else:
                sig[name] = "i64" if name in _WIDE_SCALARS else "i32"
        return sig

    def constexprs(self) -> dict[str, object]:
        return {"COVER": self.cover, "RECORD": self.record, self.block_name: self.block}

    def aligned(self) -> list[int]:
        """Positions of the pointer arguments: torch allocations are 16-byte aligned, and launches specialise on it
        (vectorised loads), so the compiled code is what a launch runs."""
        return [i for i, name in enumerate(self.fn.arg_names) if name.endswith("_ptr")]


def launch_settings() -> dict[str, tuple[object, str, int, int, int | None]]:
    """kernel name -> (jit function, name of its block constexpr, block, num_warps, maxnreg) as the launchers use
    them."""
    return {
        "item": (item._item_kernel, "BLOCK", item.BLOCK, item.NUM_WARPS, None),
        "tile": (tile._tile_kernel, "BLOCK", tile.BLOCK, tile.NUM_WARPS, tile.MAXNREG),
        "sweep": (sweep._sweep_kernel, "CHUNK", sweep.CHUNK, sweep.NUM_WARPS, None),
    }


def variants() -> Iterator[Variant]:
    for kernel, (fn, block_name, block, warps, maxnreg) in launch_settings().items():
        for dtype in DTYPES:
            for cover in (False, True):
                for record in (False, True):
                    yield Variant(kernel, fn, dtype, cover, record, block_name, block, warps, maxnreg)

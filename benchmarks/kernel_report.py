"""Compile every kernel variant the launchers can launch for sm_80 and sm_90a, without a GPU, and report the resources.

    python benchmarks/kernel_report.py                 # table + benchmarks/results/kernel_report-triton3.9.json
    python benchmarks/kernel_report.py --check         # exit 1 on a compile error, a spill or a grid kernel under
                                                       # the occupancy floor (tests/test_kernel_report.py runs this)

Each variant (kernels/variants.py: kernel x dtype x cover x record at the launcher's block and num_warps) goes
through triton.compile for a GPUTarget that is not there; its PTX then through the ptxas Triton ships, with -v, which
prints registers, spill bytes and barriers. Theoretical occupancy is the resident warps an SM can hold (limited by
registers, threads, blocks and shared memory) over its 64. The sweep kernel runs one program on one SM, so its
occupancy is not a target; spills are, in every kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The report compiles real kernels: the interpreter's decorator would hand back functions that cannot be compiled.
os.environ.pop("TRITON_INTERPRET", None)
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's package, also from a side environment without it installed

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from knapsack_gpu.kernels.variants import Variant, variants  # noqa: E402

# Per-SM limits (CUDA occupancy calculator): registers are allocated per warp in units of 256, shared memory per
# block with 1 KB the driver reserves.
ARCHS = {
    "sm_80": {"cc": 80, "regs": 65536, "warps": 64, "blocks": 32, "smem": 164 * 1024, "max_regs": 255},
    "sm_90a": {"cc": 90, "regs": 65536, "warps": 64, "blocks": 32, "smem": 228 * 1024, "max_regs": 255},
}
GRID_KERNELS = ("item", "tile")  # many programs per launch: occupancy matters
OCCUPANCY_FLOOR = 0.25


def ptxas(cc: int) -> str:
    """The ptxas Triton itself uses for this architecture (the wheel's own; ptxas-blackwell for newer PTX)."""
    from triton.backends.nvidia import compiler as nv

    return nv.get_ptxas(cc).path


def compile_variant(v: Variant, arch: str) -> dict:
    spec = ARCHS[arch]
    attrs = {(i,): [["tt.divisibility", 16]] for i in v.aligned()}
    src = ASTSource(v.fn, v.signature(), v.constexprs(), attrs)
    row = {
        "kernel": v.kernel,
        "variant": v.name,
        "arch": arch,
        "dtype": v.dtype,
        "cover": v.cover,
        "record": v.record,
        "block": v.block,
        "num_warps": v.num_warps,
    }
    t = time.perf_counter()
    try:
        k = triton.compile(src, target=GPUTarget("cuda", spec["cc"], 32), options=v.options)
        with tempfile.TemporaryDirectory() as d:
            ptx = Path(d, "k.ptx")
            ptx.write_text(k.asm["ptx"])
            r = subprocess.run(
                [ptxas(spec["cc"]), f"-arch={arch}", "-v", str(ptx), "-o", str(Path(d, "k.o"))],
                capture_output=True,
                text=True,
            )
        if r.returncode:
            raise RuntimeError(r.stderr.strip()[-500:])
        info = r.stdout + r.stderr
        row.update(
            registers=int(re.search(r"Used (\d+) registers", info).group(1)),
            spill_stores=int(re.search(r"(\d+) bytes spill stores", info).group(1)),
            spill_loads=int(re.search(r"(\d+) bytes spill loads", info).group(1)),
            barriers=int(m.group(1)) if (m := re.search(r"used (\d+) barriers", info)) else 0,
            shared_bytes=int(k.metadata.shared),
        )
        row.update(occupancy(row["registers"], v.num_warps, row["shared_bytes"], spec))
        row["error"] = None
    except Exception as exc:  # a compile error is a result of the report, not the end of it
        row["error"] = f"{type(exc).__name__}: {exc}"[:800]
    row["compile_s"] = round(time.perf_counter() - t, 3)
    return row


def occupancy(registers: int, warps: int, shared: int, spec: dict) -> dict:
    """Blocks per SM under each limit and the theoretical occupancy (resident warps / max warps)."""
    regs_per_warp = -(-registers * 32 // 256) * 256
    limits = {
        "registers": spec["regs"] // (regs_per_warp * warps),
        "threads": spec["warps"] // warps,
        "blocks": spec["blocks"],
        "shared": spec["smem"] // (shared + 1024),
    }
    blocks = min(limits.values())
    return {
        "blocks_per_sm": blocks,
        "limited_by": min(limits, key=limits.get),
        "occupancy": blocks * warps / spec["warps"],
    }


def problems(row: dict) -> list[str]:
    if row["error"]:
        return [f"does not compile: {row['error']}"]
    out = []
    if row["spill_stores"] or row["spill_loads"]:
        out.append(f"spills {row['spill_stores']} B stores / {row['spill_loads']} B loads")
    if row["kernel"] in GRID_KERNELS and row["occupancy"] < OCCUPANCY_FLOOR:
        out.append(f"occupancy {row['occupancy']:.0%} < {OCCUPANCY_FLOOR:.0%} ({row['registers']} registers)")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", nargs="+", default=list(ARCHS), choices=list(ARCHS))
    version = ".".join(triton.__version__.split(".")[:2])
    ap.add_argument("--out", default=str(HERE / "results" / f"kernel_report-triton{version}.json"))
    ap.add_argument("--check", action="store_true", help="exit 1 on any compile error, spill or low occupancy")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = [compile_variant(v, arch) for arch in args.arch for v in variants()]
    print(f"triton {triton.__version__}, {len(rows)} variants in {time.perf_counter() - t0:.0f} s")
    print(f"{'variant':<58}{'arch':>7}{'regs':>6}{'spill':>7}{'smem':>7}{'occ':>6}  limited by")
    for r in rows:
        if r["error"]:
            print(f"{r['variant']:<58}{r['arch']:>7}  ERROR {r['error'][:60]}")
            continue
        print(
            f"{r['variant']:<58}{r['arch']:>7}{r['registers']:>6}{r['spill_stores']:>7}{r['shared_bytes']:>7}"
            f"{r['occupancy']:>6.0%}  {r['limited_by']}"
        )
    bad = [(r, p) for r in rows for p in problems(r)]
    for r, p in bad:
        print(f"PROBLEM {r['variant']} {r['arch']}: {p}")
    meta = {"triton": triton.__version__, "python": sys.version.split()[0], "seconds": time.perf_counter() - t0}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"meta": meta, "occupancy_floor": OCCUPANCY_FLOOR, "rows": rows}, indent=1))
    print(f"wrote {args.out}")
    return 1 if (args.check and bad) else 0


if __name__ == "__main__":
    sys.exit(main())

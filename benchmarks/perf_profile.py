"""Where a solve's time goes, compiled kernels included: Linux ``perf`` over repeated solves of one instance.

    python benchmarks/perf_profile.py ../shared/instances/kplib/00Uncorrelated_n01000_R10000_s000.kp  # a file
    python benchmarks/perf_profile.py almost-strongly:1000:1e6 --solves 3000 --top 30  # family:n:R[:seed]

cProfile sees a numba kernel as one opaque call and perf sees its code as anonymous JIT addresses. This script runs
the solves in a child under ``perf record``, sampling only while the child solves (perf's control fifo: imports,
the warm-up and the interpreter's exit are left out), and has the child write perf's map of the JIT code: every
compiled function of the states engine's binding, callees included, by name (numba keeps no object code for kernels
it loads from its disk cache, so the child keeps a copy as they load). It prints the share of the samples and the
microseconds a solve each symbol takes, and the totals for the kernels, the CPython interpreter, numpy and the rest.
One thread (torch and the states engine), as in the benchmarks. Needs perf (linux-tools) and permission to use it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = "KNAPSACK_PERF_CHILD"  # set in the child: "ctl-fifo,ack-fifo"


def _demangle(name: str) -> str:
    """A numba symbol's readable name: the last component of its (Itanium-style) mangled path, with its wrapper."""
    kind = ""
    if name.startswith("cfunc."):
        kind, name = "cfunc ", name[len("cfunc.") :]
    if not name.startswith("_ZN"):
        return kind + name
    parts, i = [], 3
    while i < len(name) and name[i].isdigit():
        m = re.match(r"\d+", name[i:])
        size = int(m.group())
        i += len(m.group())
        parts.append(name[i : i + size])
        i += size
    if parts and parts[0] == "cpython":
        kind, parts = "cpython ", parts[1:]
    return kind + (parts[-1] if parts else name)


def _keep_object_code() -> None:
    """Keep each numba library's object code as it loads (perf's map needs the symbols' offsets in it)."""
    import numba.core.codegen as codegen

    original = codegen.CPUCodeLibrary._set_compiled_object

    def keep(self, value):
        self._kept_object = value
        return original(self, value)

    codegen.CPUCodeLibrary._set_compiled_object = keep


def _write_perf_map() -> Path:
    """/tmp/perf-<pid>.map for every compiled overload of the states engine's binding."""
    import numba

    from knapsack_gpu.states import modes

    lines, seen = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "lib.o"
        for f in vars(modes.compiled()).values():
            if not isinstance(f, numba.core.registry.CPUDispatcher):
                continue
            for cres in f.overloads.values():
                lib = cres.library
                code = getattr(lib, "_kept_object", None)
                if code is None or id(lib) in seen:
                    continue
                seen.add(id(lib))
                obj.write_bytes(code)
                out = subprocess.run(["nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True).stdout
                rows = [line.split() for line in out.splitlines()]
                syms = [(int(r[0], 16), int(r[1], 16), r[3]) for r in rows if len(r) == 4 and r[2] in "tTW"]
                entry = cres.fndesc.llvm_func_name
                base = [lib.get_pointer_to_function(entry) - a for a, _, nm in syms if nm == entry]
                lines += [f"{base[0] + a:x} {s:x} {_demangle(nm)}\n" for a, s, nm in syms if base]
    # numba's runtime (reference counts: an atomic add each way) is JIT code of its own
    from numba.core.runtime import nrt

    runtime = nrt.rtsys.library
    names = [f.name for f in runtime._final_module.functions if not f.is_declaration]
    entries = sorted((runtime.get_pointer_to_function(name), name) for name in names)
    for (a, name), (b, _) in zip(entries, entries[1:] + [(entries[-1][0] + 64, "")], strict=True):
        lines.append(f"{a:x} {b - a:x} numba runtime {name}\n")
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    path.write_text("".join(sorted(set(lines))))
    return path


def _instance(spec: str):
    import numpy as np

    from knapsack_gpu import formats, generate

    if Path(spec).exists():
        fi = formats.read_instance(spec)
        return np.asarray(fi.weights), np.asarray(fi.values), int(fi.capacity)
    parts = spec.split(":")
    if len(parts) not in (3, 4) or parts[0] not in generate.FAMILIES:
        raise SystemExit(f"{spec!r}: not a file, nor family:n:R[:seed] with a family of {sorted(generate.FAMILIES)}")
    seed = int(parts[3]) if len(parts) == 4 else 1
    return generate.FAMILIES[parts[0]](np.random.default_rng(seed), int(parts[1]), int(float(parts[2])), 0.5)


def child(spec: str, solves: int) -> None:
    _keep_object_code()
    import torch

    torch.set_num_threads(1)
    import knapsack_gpu

    w, v, c = _instance(spec)
    for _ in range(20):  # load the kernels, warm the caches
        knapsack_gpu.solve(w, v, c, device="cpu")
    ctl, ack = os.environ[CHILD].split(",")
    with open(ctl, "w") as fc, open(ack) as fa:
        fc.write("enable\n")
        fc.flush()
        fa.readline()
        t = time.perf_counter()
        for _ in range(solves):
            sol = knapsack_gpu.solve(w, v, c, device="cpu")
        seconds = time.perf_counter() - t
        fc.write("disable\n")
        fc.flush()
        fa.readline()
    path = _write_perf_map()
    print(f"{os.getpid()} {seconds / solves} {sol.stats['strategy']} {path}")


def _classify(dso: str) -> str:
    if dso.startswith("[JIT]"):
        return "compiled kernels"
    if "libpython" in dso:
        return "CPython"
    if "_multiarray" in dso or "numpy" in dso:
        return "numpy"
    if dso.startswith("[kernel"):
        return "OS"
    return "other libraries"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="an instance file, or family:n:R[:seed] (capacity: half the weight)")
    ap.add_argument("--solves", type=int, default=2000, help="solves sampled (default 2000)")
    ap.add_argument("--top", type=int, default=25, help="symbols listed (default 25)")
    args = ap.parse_args()
    if args.solves < 1 or args.top < 1:
        ap.error("--solves and --top must be at least 1")
    if shutil.which("perf") is None:
        raise SystemExit("perf_profile needs Linux perf (linux-tools) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        ctl, ack, data = (os.path.join(tmp, x) for x in ("ctl", "ack", "perf.data"))
        os.mkfifo(ctl)
        os.mkfifo(ack)
        path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
        env = {**os.environ, CHILD: f"{ctl},{ack}", "PYTHONPATH": path}
        cmd = ["perf", "record", "-q", "-D", "-1", f"--control=fifo:{ctl},{ack}", "-o", data, "--"]
        cmd += [sys.executable, __file__, "--child", args.spec, str(args.solves)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"perf record failed ({out.returncode}):\n{out.stderr[-2000:]}")
        pid, per_solve, strategy, perf_map = out.stdout.split()[-4:]
        report = subprocess.run(
            ["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-q"],
            capture_output=True,
            text=True,
        ).stdout
        Path(perf_map).unlink(missing_ok=True)
    rows = []
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+(?: tid \d+)?)\s+\[[.k]\]\s+(.*)", line)  # share, dso, [.] or [k], symbol
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3).strip()))
    us = float(per_solve) * 1e6
    print(f"{args.spec}: {us:.1f} us a solve ({strategy}), {args.solves} solves sampled, one thread, pid {pid}")
    totals: dict[str, float] = {}
    for pct, dso, _ in rows:
        kind = _classify(dso)
        totals[kind] = totals.get(kind, 0.0) + pct
    for kind, pct in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:18s} {pct:5.1f}%  {pct * us / 100:8.1f} us")
    print(f"\n{'share':>6s} {'us':>8s}  symbol")
    for pct, dso, sym in rows[: args.top]:
        where = "" if dso.startswith("[JIT]") else f"  ({Path(dso).name})"
        print(f"{pct:5.1f}% {pct * us / 100:8.1f}  {sym[:70]}{where}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()

"""Regenerate the instance files the README's command lines run against (python examples/make.py).

Each is made by knapsack_gpu.generate with a fixed seed, written in its format, and its optimum (where the file
states one) checked by two engines that share no code (the states engine and the plain dense DP). Not public benchmark
instances: small ones for trying the CLI; ../shared/instances (or a checkout of Jooken's repository) holds those.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from knapsack_gpu import generate, solve  # noqa: E402
from knapsack_gpu.formats import write_json  # noqa: E402


def optimum(w, v, c) -> tuple[int, np.ndarray]:
    """The optimum by the states engine, checked against the dense DP (and the selection's sums)."""
    a = solve(w, v, c, device="cpu", strategy="states")
    b = solve(w, v, c, device="cpu", strategy="dense")
    assert a.value == b.value and int(np.asarray(w)[a.indices].sum()) <= c, (a.value, b.value)
    return a.value, a.indices


def kplib(path: Path, w, v, c) -> None:
    """kplib's .kp: (blank) n, capacity, (blank), then "profit weight" lines."""
    rows = "\n".join(f"{p} {x}" for p, x in zip(v.tolist(), w.tolist(), strict=True))
    path.write_text(f"\n{len(w)}\n{c}\n\n{rows}\n")


def jooken(path: Path, w, v, c) -> None:
    """Jooken's .in: n, then "id profit weight" lines, then the capacity."""
    rows = "\n".join(f"{i} {p} {x}" for i, (p, x) in enumerate(zip(v.tolist(), w.tolist(), strict=True)))
    path.write_text(f"{len(w)}\n{rows}\n{c}\n")


def pisinger(path: Path, instances) -> None:
    """Pisinger's own knapPI csv: per instance its name, n, c, z, time, "i,p,w,x" rows and a "-----" line."""
    out = []
    for name, (w, v, c) in instances:
        z, chosen = optimum(w, v, c)
        x = np.zeros(len(w), dtype=int)
        x[chosen] = 1
        out += [name, f"n {len(w)}", f"c {c}", f"z {z}", "time 0.00"]
        out += [f"{i + 1},{p},{q},{s}" for i, (p, q, s) in enumerate(zip(v.tolist(), w.tolist(), x.tolist(),
                                                                           strict=True))]  # fmt: skip
        out += ["-----", ""]
    path.write_text("\n".join(out))


def main() -> None:
    write_json(HERE / "five.json", [12, 7, 11, 8, 9], [24, 13, 23, 15, 16], 26, name="five")
    w, v, c = generate.strongly_correlated(np.random.default_rng(0), 1000, R=10**4)
    kplib(HERE / "strongly_n1000.kp", np.asarray(w), np.asarray(v), c)
    w, v, c = generate.jooken(np.random.default_rng(0), 400, c=10**8, g=10, f=0.1, eps=0.0, s=100)
    jooken(HERE / "jooken_n400_c1e8_g10.in", np.asarray(w), np.asarray(v), c)
    print("jooken_n400_c1e8_g10.in optimum", optimum(w, v, c)[0])
    rng = np.random.default_rng(1)
    pisinger(HERE / "knapPI_like_1_50_1000.csv",
             [(f"knapPI_like_1_50_1000_{k}", generate.uncorrelated(rng, 50, R=1000)) for k in (1, 2, 3)])  # fmt: skip


if __name__ == "__main__":
    main()

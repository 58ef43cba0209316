"""The instances the suite runs: the partitioner's scale, the seeds' scale, and the public instances with optima.

A workload is a JSON-able dict: {"id", "group", "n", "capacity", "source": {...}, "optimum" (or None)}. The source is
either {"generator": name, "n", "capacity", "seed"} or {"file": path}; :func:`load` turns it into arrays, in the
child process that times it.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

INSTANCES = Path(os.environ.get("KNAPSACK_INSTANCES", Path(__file__).resolve().parents[2] / "shared" / "instances"))


def _generated(group: str, n: int, capacity: int, seed: int = 0, values: str = "float") -> dict:
    return {
        "id": f"{group}/n{n}-C{capacity:.0e}-{values}".replace("+0", ""),
        "group": group,
        "n": n,
        "capacity": capacity,
        "source": {"generator": "partitioner", "n": n, "capacity": capacity, "seed": seed, "values": values},
        "optimum": None,
    }


def partitioner_scale(quick: bool) -> list[dict]:
    """Quantized memories (capacity 1e3..1e4) and float runtimes: what torch.compile's partitioner solves."""
    ns = [100, 2000] if quick else [100, 500, 2000, 5000]
    caps = [10_000] if quick else [1_000, 10_000]
    return [_generated("partitioner", n, c) for n in ns for c in caps]


def pareto_scale(quick: bool) -> list[dict]:
    """The whole trade-off (knee search) at the partitioner's scale."""
    return [_generated("pareto", n, 10_000) for n in ([500] if quick else [500, 2000])]


def seeds_scale(quick: bool, large: bool = False) -> list[dict]:
    """The project seeds' scale: large capacities (the published n x W table blow-up)."""
    if quick:
        cases = [(200, 10**6)]
    else:
        cases = [(200, 10**6), (200, 10**7), (2000, 10**6), (2000, 10**7), (100, 10**8)]
        if large:
            cases.append((2000, 380_000_000))
    out = [_generated("seeds", n, c) for n, c in cases]
    if not quick:
        out.append(_generated("seeds", 200, 10**7, values="int"))  # FLOP-like integer runtimes
    return out


def _manifest(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


QUICK_PUBLIC = {
    "jooken/n_400_c_1000000_g_14_f_0.3_eps_0_s_200",
    "jooken/n_1200_c_1000000_g_2_f_0.1_eps_0_s_200",
    "kplib/03InverseStronglyCorrelated_n01000_R10000_s000",
    "pisinger/knapPI_2_1000_1000_1",
}


def public(quick: bool) -> list[dict]:
    """Jooken, kplib and Pisinger's knapPI instances from ../shared/instances, with their known optima."""
    out = []
    if not INSTANCES.exists():
        return out
    if quick:
        return [wl for wl in public(False) if wl["id"] in QUICK_PUBLIC]
    jooken = INSTANCES / "jooken"
    for row in _manifest(jooken / "manifest.csv"):
        n, cap = int(row["n"]), int(row["capacity"])
        opt = int(row["optimum"])
        out.append(
            {
                "id": f"jooken/{row['file'][:-3]}",
                "group": "public",
                "n": n,
                "capacity": cap,
                "source": {"file": str(jooken / row["file"])},
                "optimum": opt if opt >= 0 else None,
            }
        )
    kplib = INSTANCES / "kplib"
    optima = {r["file"]: int(r["optimum"]) for r in _manifest(kplib / "optima_computed.csv")}
    for row in _manifest(kplib / "manifest.csv"):
        n, cap = int(row["n"]), int(row["capacity"])
        out.append(
            {
                "id": f"kplib/{row['file'][:-3]}",
                "group": "public",
                "n": n,
                "capacity": cap,
                "source": {"file": str(kplib / row["file"])},
                "optimum": optima.get(row["file"]),
            }
        )
    pis = INSTANCES / "pisinger_knapPI_chuanyuxue"
    for path in sorted((pis / "large_scale").glob("knapPI_*")):
        n = int(path.name.split("_")[2])
        cap = int(path.read_text().split()[-1])
        opt = int((pis / "large_scale-optimum" / path.name).read_text().split()[0])
        out.append(
            {
                "id": f"pisinger/{path.name}",
                "group": "public",
                "n": n,
                "capacity": cap,
                "source": {"file": str(path)},
                "optimum": opt,
            }
        )
    return out


def load(source: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """(weights, values, capacity) of a workload's source."""
    if "file" in source:
        from knapsack_gpu.formats import read_instance

        inst = read_instance(source["file"])
        return np.asarray(inst.weights), np.asarray(inst.values), int(inst.capacity)
    from knapsack_gpu.generate import partitioner

    rng = np.random.default_rng(source["seed"])
    w, v, cap = partitioner(rng, source["n"], source["capacity"])
    if source.get("values") == "int":
        v = np.round(v * 1000).astype(np.int64)  # runtimes up to 1e6, like FLOP counts in thousands
    return w, v, cap

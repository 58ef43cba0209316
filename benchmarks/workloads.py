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

INSTANCES_VAR = "KNAPSACK_INSTANCES"
DEFAULT_INSTANCES = Path(__file__).resolve().parents[2] / "shared" / "instances"  # ../shared/instances


def instances(folder: str | None = None) -> Path:
    """The public instances' folder: `folder` (the suite's --instances), else $KNAPSACK_INSTANCES, else
    ../shared/instances beside the checkout.

    Raises:
        FileNotFoundError: the folder does not exist, naming where it was looked for and how to point elsewhere.
    """
    root = Path(folder or os.environ.get(INSTANCES_VAR) or DEFAULT_INSTANCES)
    if not root.is_dir():
        how = "--instances" if folder else (INSTANCES_VAR if os.environ.get(INSTANCES_VAR) else "the default")
        raise FileNotFoundError(
            f"public instances not found at {root} (from {how}): set {INSTANCES_VAR} or pass --instances to the "
            "folder holding jooken/, kplib/ and pisinger_knapPI_chuanyuxue/, or leave the public groups out of --groups"
        )
    return root


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
QUICK_KPLIB10K = {"kplib/00Uncorrelated_n10000_R10000_s000"}


def _file(group: str, wid: str, path: Path, n: int, capacity: int, optimum: int | None) -> dict:
    return {"id": wid, "group": group, "n": n, "capacity": capacity, "source": {"file": str(path)}, "optimum": optimum}


def _kplib(root: Path, group: str, n: int) -> list[dict]:
    """kplib's instances with n items, one per class, with their computed optima."""
    kplib = root / "kplib"
    optima = {r["file"]: int(r["optimum"]) for r in _manifest(kplib / "optima_computed.csv")}
    return [
        _file(group, f"kplib/{r['file'][:-3]}", kplib / r["file"], n, int(r["capacity"]), optima.get(r["file"]))
        for r in _manifest(kplib / "manifest.csv")
        if int(r["n"]) == n
    ]


def public(quick: bool, root: Path) -> list[dict]:
    """Jooken, kplib (n = 1000) and Pisinger's knapPI instances under `root` (see :func:`instances`), with their
    known optima."""
    if quick:
        return [wl for wl in public(False, root) if wl["id"] in QUICK_PUBLIC]
    out = []
    jooken = root / "jooken"
    for row in _manifest(jooken / "manifest.csv"):
        opt = int(row["optimum"])
        path = jooken / row["file"]
        out.append(
            _file("public", f"jooken/{path.stem}", path, int(row["n"]), int(row["capacity"]), opt if opt >= 0 else None)
        )
    out += _kplib(root, "public", 1000)
    pis = root / "pisinger_knapPI_chuanyuxue"
    for path in sorted((pis / "large_scale").glob("knapPI_*")):
        n = int(path.name.split("_")[2])
        cap = int(path.read_text().split()[-1])
        opt = int((pis / "large_scale-optimum" / path.name).read_text().split()[0])
        out.append(_file("public", f"pisinger/{path.name}", path, n, cap, opt))
    return out


def kplib10k(quick: bool, root: Path) -> list[dict]:
    """kplib's 13 classes at n = 10,000 (C ~ 2.5e7, n*C ~ 2.5e11): where branch and bound is strong and a dense DP
    alone is not the tool (issue 10)."""
    out = _kplib(root, "kplib10k", 10_000)
    return [wl for wl in out if wl["id"] in QUICK_KPLIB10K] if quick else out


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

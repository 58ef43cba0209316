"""The instances the suite runs: the partitioner's scale, the seeds' scale, and the public instances with optima.

A workload is a JSON-able dict: {"id", "group", "n", "capacity", "source": {...}, "optimum" (or None)}, and for the
classes, kplib and Jooken workloads a "class" (the per-class tables group by it). The source is one of
{"generator": "partitioner", "n", "capacity", "seed"}, {"generator": family, "n", "R", "seed", "fraction"} (a family
of knapsack_gpu.generate.FAMILIES: regenerable from the id alone) or {"file": path}; :func:`load` turns it into
arrays, in the child process that times it.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

INSTANCES_VAR = "KNAPSACK_INSTANCES"
DEFAULT_INSTANCES = Path(__file__).resolve().parents[2] / "shared" / "instances"  # ../shared/instances


def instances(folder: str | None = None, generated_ok: bool = False) -> Path | None:
    """The public instances' folder: `folder` (the suite's --instances), else $KNAPSACK_INSTANCES, else
    ../shared/instances beside the checkout.

    Args:
        folder: the suite's --instances, or None.
        generated_ok: where neither `folder` nor the variable names a folder and the default one is missing, return
            None instead of raising: the caller runs generated stand-ins (--quick in a fresh clone, see
            :func:`generated`).

    Raises:
        FileNotFoundError: the folder does not exist, naming where it was looked for and how to point elsewhere.
    """
    root = Path(folder or os.environ.get(INSTANCES_VAR) or DEFAULT_INSTANCES)
    if not root.is_dir():
        if generated_ok and not folder and not os.environ.get(INSTANCES_VAR):
            return None
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


def _file(group: str, wid: str, path: Path, n: int, capacity: int, optimum: int | None, cls: str = "") -> dict:
    wl = {"id": wid, "group": group, "n": n, "capacity": capacity, "source": {"file": str(path)}, "optimum": optimum}
    return wl | ({"class": cls} if cls else {})


def _kplib(root: Path, group: str, ns: tuple[int, ...]) -> list[dict]:
    """kplib's instances with n in `ns` items, one per class (the class: its name without the number, e.g.
    StronglyCorrelated), with their computed optima."""
    kplib = root / "kplib"
    optima = {r["file"]: int(r["optimum"]) for r in _manifest(kplib / "optima_computed.csv")}
    return [
        _file(
            group,
            f"kplib/{r['file'][:-3]}",
            kplib / r["file"],
            int(r["n"]),
            int(r["capacity"]),
            optima.get(r["file"]),
            r["file"].split("_")[0].lstrip("0123456789"),
        )
        for n in ns
        for r in _manifest(kplib / "manifest.csv")
        if int(r["n"]) == n
    ]


def _jooken(root: Path, group: str, capacities: tuple[int, ...] | None = None) -> list[dict]:
    """Jooken's instances (those of the given capacities; all when None), class "c=1e6" etc., with their optima
    where Combo found one."""
    jooken = root / "jooken"
    out = []
    for row in _manifest(jooken / "manifest.csv"):
        opt, cap, path = int(row["optimum"]), int(row["capacity"]), jooken / row["file"]
        if capacities is None or cap in capacities:
            wid = f"jooken/{path.stem}"
            out.append(_file(group, wid, path, int(row["n"]), cap, opt if opt >= 0 else None, f"c={_exp(cap)}"))
    return out


def public(quick: bool, root: Path | None) -> list[dict]:
    """Jooken, kplib (n = 1000) and Pisinger's knapPI instances under `root` (see :func:`instances`), with their
    known optima; generated stand-ins where `root` is None."""
    if root is None:
        return generated("public")
    if quick:
        return [wl for wl in public(False, root) if wl["id"] in QUICK_PUBLIC]
    out = _jooken(root, "public")
    out += _kplib(root, "public", (1000,))
    pis = root / "pisinger_knapPI_chuanyuxue"
    for path in sorted((pis / "large_scale").glob("knapPI_*")):
        n = int(path.name.split("_")[2])
        cap = int(path.read_text().split()[-1])
        opt = int((pis / "large_scale-optimum" / path.name).read_text().split()[0])
        out.append(_file("public", f"pisinger/{path.name}", path, n, cap, opt))
    return out


def kplib10k(quick: bool, root: Path | None) -> list[dict]:
    """kplib's 13 classes at n = 10,000 (C ~ 2.5e7, n*C ~ 2.5e11): where branch and bound is strong and a dense DP
    alone is not the tool (issue 10); generated stand-ins where `root` is None."""
    if root is None:
        return generated("kplib10k")
    out = _kplib(root, "kplib10k", (10_000,))
    return [wl for wl in out if wl["id"] in QUICK_KPLIB10K] if quick else out


# issue 15: ours against Pisinger's combo (and minknap) on the classes where an expanding core is at home.
QUICK_KPLIB = {
    "kplib/02StronglyCorrelated_n01000_R10000_s000",
    "kplib/03InverseStronglyCorrelated_n10000_R10000_s000",
    "kplib/09SpannerStronglyCorrelated_n01000_R10000_s000",
    "kplib/11ProfitCeiling_n10000_R10000_s000",
    "kplib/12Circle_n01000_R10000_s000",
}
QUICK_JOOKEN = {
    "jooken/n_400_c_1000000_g_14_f_0.3_eps_0_s_200",
    "jooken/n_1200_c_1000000_g_2_f_0.1_eps_0_s_200",
    "jooken/n_400_c_100000000_g_2_f_0.2_eps_0.1_s_100",
    "jooken/n_600_c_100000000_g_6_f_0.1_eps_0_s_100",
    "jooken/n_1000_c_100000000_g_10_f_0.2_eps_0_s_300",  # combo's states array overflows (measured)
}


def kplib(quick: bool, root: Path | None) -> list[dict]:
    """All 26 shipped kplib instances: 13 classes at n = 1,000 and at n = 10,000 (R = 1e4); generated stand-ins
    where `root` is None."""
    if root is None:
        return generated("kplib")
    out = _kplib(root, "kplib", (1000, 10_000))
    return [wl for wl in out if wl["id"] in QUICK_KPLIB] if quick else out


def jooken(quick: bool, root: Path | None) -> list[dict]:
    """The shipped Jooken instances with C = 1e6 and C = 1e8 (c = 1e10 passes combo's int32 capacity); generated
    stand-ins where `root` is None."""
    if root is None:
        return generated("jooken")
    out = _jooken(root, "jooken", (10**6, 10**8))
    return [wl for wl in out if wl["id"] in QUICK_JOOKEN] if quick else out


CLASSES = [
    "uncorrelated",
    "weakly",
    "strongly",
    "inverse-strongly",
    "almost-strongly",
    "subset-sum",
    "similar-weights",
    "spanner-uncorrelated",
    "spanner-weakly",
    "spanner-strongly",
    "multiple-strongly",
    "profit-ceiling",
    "circle",
]
# Seed 1 for every workload (the id's "-s1"): numpy's default_rng(1), with knapsack_gpu.generate's definitions.
# These are not kplib's s000 instances (another generator, another seed), nor any seed kplib ships: fresh instances
# of the same classes, at ranges kplib does not have.
CLASSES_SEED = 1
QUICK_CLASSES = ["strongly", "inverse-strongly", "subset-sum", "spanner-strongly", "profit-ceiling", "circle"]


def _exp(x: int) -> str:
    """1e6 for 1000000."""
    return f"{x:.0e}".replace("e+0", "e").replace("e+", "e")


def class_workload(family: str, n: int, R: int, seed: int = CLASSES_SEED, fraction: float = 0.5) -> dict:
    """A generated Pisinger class instance as a workload: id classes/<family>-n<n>-R<R>-s<seed>, its source the
    generator's arguments (the capacity is computed here, as the child will regenerate it)."""
    source = {"generator": family, "n": n, "R": R, "seed": seed, "fraction": fraction}
    _, _, cap = load(source)
    wid = f"classes/{family}-n{n}-R{_exp(R)}-s{seed}"
    return {"id": wid, "group": "classes", "n": n, "capacity": cap, "source": source, "optimum": None, "class": family}


# The quick run's stand-ins for the public instances where no instance folder is given or found (a fresh clone):
# generated by knapsack_gpu.generate, seeded, nothing fetched. The same classes and sizes as the QUICK_* files above
# (kplib's classes at R = 1e4, Pisinger's knapPI_2 a weakly correlated class at R = 1e3, Jooken's class at its
# parameters), but other instances: their rows are judged by the exact contenders' agreement, with no known optimum.
GENERATED = "generated"  # the workloads' id prefix
GENERATED_SEED = 0
_GENERATED_JOOKEN = {
    "public": [(400, 10**6, 14, 0.3, 200), (1200, 10**6, 2, 0.1, 200)],
    "jooken": [(400, 10**6, 14, 0.3, 200), (1200, 10**6, 2, 0.1, 200), (600, 10**8, 6, 0.1, 100)],
}
_GENERATED_CLASSES = {
    "public": [("inverse-strongly", 1000, 10**4), ("weakly", 1000, 10**3)],
    "kplib10k": [("uncorrelated", 10_000, 10**4)],
    "kplib": [
        ("strongly", 1000, 10**4),
        ("inverse-strongly", 10_000, 10**4),
        ("spanner-strongly", 1000, 10**4),
        ("profit-ceiling", 10_000, 10**4),
        ("circle", 1000, 10**4),
    ],
}


def generated(group: str) -> list[dict]:
    """The quick workloads of a public group (public, kplib10k, kplib, jooken) as generated instances, ids
    "generated/...": a small Jooken-like set and kplib-like classes, seeded (GENERATED_SEED)."""
    out = []
    for n, c, g, f, s in _GENERATED_JOOKEN.get(group, ()):
        source = {"generator": "jooken", "n": n, "c": c, "g": g, "f": f, "eps": 0.0, "s": s, "seed": GENERATED_SEED}
        wid = f"{GENERATED}/jooken-n_{n}_c_{c}_g_{g}_f_{f}_eps_0_s_{s}-s{GENERATED_SEED}"
        out.append({"id": wid, "group": group, "n": n, "capacity": c, "source": source, "optimum": None})
        out[-1]["class"] = f"c={_exp(c)}"
    for family, n, R in _GENERATED_CLASSES.get(group, ()):
        wl = class_workload(family, n, R, seed=GENERATED_SEED)
        out.append(wl | {"id": f"{GENERATED}/{wl['id'].removeprefix('classes/')}", "group": group})
    return out


def classes(quick: bool) -> list[dict]:
    """The Pisinger classes at n in {1e3, 1e4}, R in {1e4, 1e5, 1e6, 1e7}, capacity half the weight sum. --quick:
    six classes at (n = 1e3, R = 1e4) and (n = 1e4, R = 1e5), where combo's int32 capacity holds (C ~ 2.5e8)."""
    if quick:
        return [class_workload(f, n, R) for n, R in ((1000, 10**4), (10_000, 10**5)) for f in QUICK_CLASSES]
    return [class_workload(f, n, 10**e) for n in (1000, 10_000) for e in (4, 5, 6, 7) for f in CLASSES]


def load(source: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """(weights, values, capacity) of a workload's source."""
    if "file" in source:
        from knapsack_gpu.formats import read_instance

        inst = read_instance(source["file"])
        return np.asarray(inst.weights), np.asarray(inst.values), int(inst.capacity)
    if source["generator"] == "jooken":
        from knapsack_gpu.generate import jooken as jooken_class

        rng = np.random.default_rng(source["seed"])
        return jooken_class(rng, **{k: source[k] for k in ("n", "c", "g", "f", "eps", "s")})
    if source["generator"] != "partitioner":
        from knapsack_gpu.generate import FAMILIES

        rng = np.random.default_rng(source["seed"])
        return FAMILIES[source["generator"]](rng, source["n"], R=source["R"], fraction=source["fraction"])
    from knapsack_gpu.generate import partitioner

    rng = np.random.default_rng(source["seed"])
    w, v, cap = partitioner(rng, source["n"], source["capacity"])
    if source.get("values") == "int":
        v = np.round(v * 1000).astype(np.int64)  # runtimes up to 1e6, like FLOP counts in thousands
    return w, v, cap

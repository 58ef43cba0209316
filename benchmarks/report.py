"""Turn the suite's rows into markdown tables, the seeds' memory claim, and PNG plots."""

from __future__ import annotations

import statistics
from pathlib import Path

import provenance

MB = 1e6


def _fmt_s(r: dict) -> str:
    if r["status"] != "ok":
        return r["status"] if r["status"] != "skipped" else "skipped"
    return f"{r['median_s']:.4g}" + (f" ({r['repeats']}x)" if r["repeats"] > 1 else "")


def _fmt_secs(r: dict) -> str:
    """_fmt_s, showing the seconds the ratios use (the solver's own clock, where it has one)."""
    if r["status"] != "ok" or r.get("internal_median_s") is None:
        return _fmt_s(r)
    return f"{r['internal_median_s']:.4g} own clock" + (f" ({r['repeats']}x)" if r["repeats"] > 1 else "")


def _secs(r: dict) -> float:
    """The seconds a row's ratios use: the solver's own clock where it reports one (combo), else the suite's wall
    time. The own clock leaves out the call's overhead (and combo's int32 copies): the measure that favours it."""
    return r["internal_median_s"] if r.get("internal_median_s") is not None else r["median_s"]


ITEMSIZE = {"int32": 4, "float32": 4, "int64": 8, "float64": 8}
REFERENCE = ("ours-numpy", "ours-pareto-knee")  # the row of ours each workload's rivals are compared with
# A heuristic that happens to hit the optimum has not solved the instance (it cannot know): a row, never a rival.
HEURISTICS = {"torch-greedy"}


def _cells(st: dict) -> float | None:
    """DP cells the solver did: `cells` where it reports them (the pruning solver), else its `cell_updates`."""
    return st.get("cells", st.get("cell_updates"))


def _note(r: dict, bandwidth: float) -> str:
    """The verdict, and for our rows the cell rate against `bandwidth`, the copy bandwidth of r's run."""
    if r["status"] == "skipped":
        return r["reason"]
    if r["status"] != "ok":
        return r.get("error", "")[:120]
    parts = [r.get("verdict", "")]
    if r.get("weight", 0) is None:
        parts.append("value only: no selection, feasibility unchecked")
    if r.get("internal_median_s") is not None:
        parts.append(f"its own clock {r['internal_median_s']:.4g} s (the ratios use it)")
    st = r.get("stats") or {}
    if _cells(st) and r["median_s"] > 0:
        rate = _cells(st) / r["median_s"]
        # A cell update reads f(c) and f(c - w) and writes f(c): three values through memory at most.
        share = rate * 3 * ITEMSIZE.get(st.get("dtype"), 8) / bandwidth
        parts.append(f"{rate:.3g} cells/s, {share:.0%} of copy bw")
    return "; ".join(p for p in parts if p)


def _plan(r: dict) -> str:
    """Our solver's plan and the work it did, each part where the solver reports it: strategy and dtype, cells done
    against n*C, peak states (a states plan), items fixed by reduction, lower and upper bound."""
    st = r.get("stats") or {}
    parts = [", ".join(str(st[k]) for k in ("strategy", "dtype") if st.get(k))]
    if _cells(st) is not None:
        parts.append(f"{_cells(st):.3g} cells, {100 * _cells(st) / max(1, r['n'] * r['capacity']):.3g}% of n*C")
    if st.get("peak_states") is not None:
        parts.append(f"{st['peak_states']:.3g} states")
    fixed = st.get("fixed")
    if isinstance(fixed, dict):
        parts.append(f"fixed {fixed.get('in', 0)} in, {fixed.get('out', 0)} out")
    elif fixed is not None:
        parts.append(f"fixed {fixed}")
    if st.get("lower_bound") is not None or st.get("upper_bound") is not None:
        parts.append(f"bounds [{st.get('lower_bound', '?')}, {st.get('upper_bound', '?')}]")
    return "; ".join(p for p in parts if p)


def _ours(r: dict) -> bool:
    return r["contender"].startswith("ours")


def _right(r: dict) -> bool:
    """An answer that counts: optimal and feasible, or (knee search) the knee every contender agreed on."""
    verdict = r.get("verdict", "")
    knee = verdict.startswith("knee ") and "differ" not in verdict
    return r["status"] == "ok" and (verdict == "optimal" or knee)


def staleness(rows: list[dict]) -> dict[str | None, bool | None]:
    """For each commit our rows were measured at: has the solver code changed since (None: cannot tell)?"""
    return {c: provenance.solver_changed_since(c) for c in {r["commit"] for r in rows if _ours(r)}}


def _stale(r: dict, changed: dict) -> str:
    """Our rows only: a rival's row depends on the rival's version (in its machine id) and the workload alone."""
    return {True: "stale", False: "", None: "?"}[changed[r["commit"]]] if _ours(r) else ""


def _md(cells: list) -> str:
    """One markdown table line."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


COLUMNS = ["workload", "contender", "median s", "vs ours", "peak RSS MB", "solver peak MB", "plan", "result"]
COLUMNS += ["commit", "machine", "stale"]


def table(rows: list[dict], runs: list[dict], changed: dict) -> str:
    out = [_md(COLUMNS), "|---|---|---:|---:|---:|---:|---|---|---|---|---|"]
    ours = {r["workload"]: r for r in rows if r["contender"] in REFERENCE and r["status"] == "ok"}
    for r in rows:
        ref = ours.get(r["workload"])
        ratio = f"{_secs(r) / ref['median_s']:.2f}x" if ref and r["status"] == "ok" else ""
        rss = f"{r['rss_peak'] / MB:.0f}" if r["status"] == "ok" else ""
        solver = f"{r['stats']['peak_bytes'] / MB:.1f}" if r["status"] == "ok" and r.get("stats") else ""
        note = _note(r, runs[r["run"]]["copy_bandwidth_bytes_per_s"])
        cells = [r["workload"], r["contender"], _fmt_s(r), ratio, rss, solver, _plan(r), note]
        out.append(_md(cells + [r["commit"], r["machine"], _stale(r, changed)]))
    return "\n".join(out)


def _named(names: list[str]) -> str:
    """How many, and which."""
    return f"{len(names)}" + (f" ({', '.join(names)})" if names else "")


def versus(rows: list[dict]) -> str:
    """Each workload's row of ours against the fastest exact rival with a right answer, and a line that sums them up:
    where ours is faster, the median ratio, where a rival was more than 2x faster, where only a rival answered."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["workload"], []).append(r)
    lines = [
        _md(["workload", "ours s", "fastest right rival", "its s", "rival s / ours s"]),
        "|---|---:|---|---:|---:|",
    ]
    ratios, beaten, unanswered, alone = [], [], [], 0
    for wl, rs in by.items():
        ours = next((r for r in rs if r["contender"] in REFERENCE), None)
        if ours is None:
            continue
        rivals = (r for r in rs if not _ours(r) and r["contender"] not in HEURISTICS and _right(r))
        best = min(rivals, key=_secs, default=None)
        if best is None:
            alone += 1
            lines.append(_md([wl, _fmt_s(ours), "none right", "", ""]))
            continue
        ratio = _secs(best) / ours["median_s"] if _right(ours) else None
        if ratio is None:
            unanswered.append(wl)
        else:
            ratios.append(ratio)
            if ratio < 0.5:
                beaten.append(wl)
        shown = "-" if ratio is None else f"{ratio:.2f}x"
        lines.append(_md([wl, _fmt_s(ours), best["contender"], _fmt_secs(best), shown]))
    if len(lines) == 2:
        return ""
    ref = next(r["contender"] for r in rows if r["contender"] in REFERENCE)
    median = f", median rival/ours {statistics.median(ratios):.2f}x" if ratios else ""
    summary = (
        f"**{ref} against the fastest rival with a right answer**, on {len(ratios)} workloads where both were right: "
        f"ours faster on {sum(x > 1 for x in ratios)}{median}; a rival more than 2x faster on {_named(beaten)}. "
        f"Ours skipped, timed out, failed or wrong where a rival was right: {_named(unanswered)}; no rival right: "
        f"{alone}."
    )
    return "\n".join([summary, "", *lines])


PISINGER = ("combo", "minknap")  # the rivals of the per-class tables (issue 15)


def per_class(rows: list[dict], rival: str, ours: str) -> str:
    """`rival` / `ours` time per (group, class), on the instances where both were right: the median and the
    smallest ratio (the rival's best case), how often ours took over 10x the rival's time, and how often the rival
    took 0.1 s or more and ours longer still; beside them, where only one was right and where the rival skipped."""
    pair: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        if r["contender"] in (rival, ours):
            pair.setdefault((r["group"], r["workload"]), {})[r["contender"]] = r
    by: dict[tuple[str, str], list[tuple[str, dict, dict]]] = {}
    for (group, wl), rs in pair.items():
        if rival in rs and ours in rs:
            by.setdefault((group, rs[ours].get("class") or "-"), []).append((wl, rs[ours], rs[rival]))
    if not by:
        return ""
    head = ["group", "class", "instances", "both right", f"median {rival} s / ours s", "min", "ours > 10x"]
    head += [f"{rival} >= 0.1 s, ours slower", "only ours right", f"only {rival} right", f"{rival} skipped"]
    lines = [_md(head), "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    every: list[float] = []
    slow: list[str] = []
    behind: list[str] = []
    for (group, cls), cases in by.items():
        both = [(wl, o, c) for wl, o, c in cases if _right(o) and _right(c)]
        ratios = [_secs(c) / o["median_s"] for _, o, c in both]
        tenx = [wl for wl, o, c in both if o["median_s"] > 10 * _secs(c)]
        heavy = [wl for wl, o, c in both if _secs(c) >= 0.1 and o["median_s"] > _secs(c)]
        only_ours = sum(_right(o) and not _right(c) and c["status"] != "skipped" for _, o, c in cases)
        only_rival = sum(_right(c) and not _right(o) for _, o, c in cases)
        skipped = sum(c["status"] == "skipped" for _, _, c in cases)
        every += ratios
        slow += tenx
        behind += heavy
        median = f"{statistics.median(ratios):.3g}" if ratios else "-"
        least = f"{min(ratios):.3g}" if ratios else "-"
        counts = [len(tenx), len(heavy), only_ours, only_rival, skipped]
        lines.append(_md([group, cls, len(cases), len(both), median, least, *counts]))
    median = f"median {rival}/ours {statistics.median(every):.3g}, min {min(every):.3g}; " if every else ""
    summary = (
        f"**{rival} against {ours}, per class**: {rival}'s own clock over ours' wall time (below 1: {rival} is "
        f"faster), on the {len(every)} instances where both were right; {median}ours took over 10x {rival}'s time "
        f"on {_named(slow)}; {rival} took 0.1 s or more and ours longer on {_named(behind)}."
    )
    return "\n".join([summary, "", *lines])


def targets(rows: list[dict], ours: str = "ours-numpy") -> str:
    """Issue 15's and issue 23's targets, as far as these rows show them: against combo (instances both got right,
    combo timed by its own clock), the classes at R = 1e7 and n = 10,000 (past combo's int32: is each solved within
    1 s?), and Jooken's c = 1e10, g >= 10 ones."""
    mine = {(r["group"], r["workload"]): r for r in rows if r["contender"] == ours}
    combo = {(r["group"], r["workload"]): r for r in rows if r["contender"] == "combo"}
    pairs = [(k, mine[k], c) for k, c in combo.items() if k in mine and _right(mine[k]) and _right(c)]
    both = [(o, c) for _, o, c in pairs]
    out = []
    standard = [(k[1].split("/")[-1], o, c) for k, o, c in pairs if k[0] in ("kplib", "classes")]
    if standard:
        ratios = [_secs(c) / o["median_s"] for _, o, c in standard]
        over = [wl for wl, o, c in standard if o["median_s"] > 3 * _secs(c)]
        behind = [wl for wl, o, c in standard if _secs(c) >= 0.01 and o["median_s"] > _secs(c)]
        out.append(
            f"- issue 23, the {len(standard)} kplib and class instances both got right (C < 2^31): median combo/ours "
            f"{statistics.median(ratios):.3g} (target >= 1.0); ours over 3x combo's time on {_named(over)} (target "
            f"0); where combo took 10 ms or more, ours took longer on {_named(behind)} (target 0)."
        )
    if both:
        ratios = [_secs(c) / o["median_s"] for o, c in both]
        tenx = sum(o["median_s"] > 10 * _secs(c) for o, c in both)
        heavy = [(o, c) for o, c in both if _secs(c) >= 0.1]
        behind = sum(o["median_s"] > _secs(c) for o, c in heavy)
        out.append(
            f"- issue 15, combo's time over ours, {len(both)} instances both got right (kplib, classes, Jooken; "
            f"C < 2^31): median {statistics.median(ratios):.3g} (target >= 0.5), min {min(ratios):.3g}; ours over 10x "
            f"combo's time on {tenx} (target 0); of the {len(heavy)} where combo took 0.1 s or more, ours took "
            f"longer on {behind} (target 0)."
        )
    big = [r for (g, wl), r in mine.items() if g == "classes" and "n10000-R1e7" in wl]
    if big:
        fast = sum(_right(r) and r["median_s"] <= 1.0 for r in big)
        slow = [f"{r['workload'].split('/')[-1]} ({_fmt_s(r)})" for r in big if not (_right(r) and r["median_s"] <= 1)]
        out.append(
            f"- issue 15, the classes at R = 1e7, n = 10,000 (C ~ 2.5e10, past combo's int32): {fast} of {len(big)} "
            f"solved within 1 s (target: all){'; not: ' + ', '.join(slow) if slow else ''}."
        )
    hard = [r for (g, wl), r in mine.items() if "_c_10000000000_g_1" in wl]
    if hard:
        solved = [r for r in hard if _right(r)]
        out.append(
            f"- issue 15, Jooken c = 1e10, g = 10 and 14 (stretch): {len(solved)} of {len(hard)} solved within the "
            f"run's timeout ({', '.join(f'{_fmt_s(r)}' for r in solved) or 'none'})."
        )
    return "\n".join(out)


def claims(rows: list[dict]) -> str:
    """The seeds' n x W claim: the formula, its prediction at the published scale, and what this machine measured."""
    n_pub = 100
    w_pub = 304e9 / (4 * (n_pub + 1)) - 1  # the published 304 GB at 100 items
    row = 4 * (w_pub + 1)  # one int32 profile
    bits = -(-n_pub // 8) * (w_pub + 1)
    lines = [
        "### The n x W table, against an O(W) plan",
        "",
        "torch's `dp_knapsack` allocates a float32 table of (n + 1)(W + 1) cells: **4 (n + 1)(W + 1) bytes**. The",
        f"published 304 GB at {n_pub} items means W = {w_pub:.3g}. At that scale knapsack_gpu's single-pass plan",
        f"needs an int32 profile row and a bit table of ceil(n / 8)(W + 1) bytes: {row / 1e9:.1f} + {bits / 1e9:.1f}",
        f"= {(row + bits) / 1e9:.1f} GB ({304e9 / (row + bits):.0f}x less); under a memory limit of a few rows it",
        f"runs Hirschberg in two rows (profile + kept half): {2 * row / 1e9:.1f} GB ({304e9 / (2 * row):.0f}x less).",
        "What this machine could run of it:",
        "",
        "| workload | dp_knapsack predicted | dp_knapsack RSS | ours RSS | ours low-mem RSS | RSS ratio | time ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    by = {}
    for r in rows:
        if r["group"] == "seeds":
            by.setdefault(r["workload"], {})[r["contender"]] = r
    for wl, rs in by.items():
        n, c = next(iter(rs.values()))["n"], next(iter(rs.values()))["capacity"]
        pred = 4 * (n + 1) * (c + 1) / 1e9
        dp, ours, low = rs.get("torch-dp"), rs.get("ours-numpy"), rs.get("ours-numpy-lowmem")

        def rss(r):
            return f"{r['rss_peak'] / 1e9:.2f} GB" if r and r["status"] == "ok" else (r or {}).get("status", "-")

        ok = dp and ours and dp["status"] == "ok" and ours["status"] == "ok"
        ratio = f"{dp['rss_peak'] / ours['rss_peak']:.1f}x" if ok else "-"
        tratio = f"{dp['median_s'] / ours['median_s']:.1f}x" if ok else "-"
        lines.append(f"| {wl} | {pred:.1f} GB | {rss(dp)} | {rss(ours)} | {rss(low)} | {ratio} | {tratio} |")
    return "\n".join(lines)


def plots(runs: list[dict], rows: list[dict], out_dir: Path, stem: str) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    ok = [r for r in rows if r["status"] == "ok"]

    def save(fig, name):
        path = out_dir / f"{stem}-{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path.name)

    # The greedy heuristic is not exact and takes microseconds: it would only stretch the axis.
    seeds = [
        r for r in ok if r["group"] == "seeds" and r["workload"].endswith("float") and r["contender"] != "torch-greedy"
    ]
    if seeds:
        fig, ax = plt.subplots(figsize=(8, 4.2))
        names = sorted({r["contender"] for r in seeds})
        sizes = sorted({r["n"] for r in seeds})
        styles = ["-", "--", ":", "-."]
        for i, name in enumerate(names):
            for k, n in enumerate(sizes):
                pts = sorted((r["capacity"], r["median_s"]) for r in seeds if r["contender"] == name and r["n"] == n)
                if pts:
                    ax.plot(
                        *zip(*pts, strict=True),
                        color=f"C{i}",
                        linestyle=styles[k % len(styles)],
                        marker="osd^"[k % 4],
                        label=f"{name}, n={n}",
                    )
        ax.set(xscale="log", yscale="log", xlabel="capacity C", ylabel="seconds (median)", title="time vs capacity")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        save(fig, "time-vs-capacity")

    part = [r for r in ok if r["group"] == "partitioner" and r["capacity"] == 10_000]
    if part:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name in sorted({r["contender"] for r in part}):
            pts = sorted((r["n"], (r["rss_peak"] - r["rss_before"]) / MB) for r in part if r["contender"] == name)
            ax.plot(*zip(*pts, strict=True), marker="o", label=name)
        ax.set(xscale="log", yscale="log", xlabel="items n", ylabel="peak RSS over baseline (MB)")
        ax.set_title("memory vs n (C = 1e4)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
        save(fig, "memory-vs-n")

    ours = [r for r in ok if _ours(r) and _cells(r.get("stats") or {}) and r["stats"].get("profile_length")]
    if ours:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for name in sorted({r["contender"] for r in ours}):
            pts = sorted(
                (r["stats"]["profile_length"], _cells(r["stats"]) / r["median_s"])
                for r in ours
                if r["contender"] == name
            )
            ax.plot(*zip(*pts, strict=True), marker="o", linestyle="none", label=name)
        bw = statistics.median(run["copy_bandwidth_bytes_per_s"] for run in runs)
        ax.axhline(bw / 12, color="gray", linestyle="--", label=f"copy bandwidth / 12 B per int32 cell ({bw / 12:.2g})")
        ax.set(xscale="log", yscale="log", xlabel="profile length (DP capacity + 1)", ylabel="cell updates / s")
        ax.set_title("throughput vs capacity")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
        save(fig, "cells-per-s")
    return made


def _bandwidth(runs: list[dict]) -> str:
    """The run's measured copy bandwidth, or the range over merged runs (each row is rated against its own)."""
    bws = [r["copy_bandwidth_bytes_per_s"] for r in runs]
    lo, hi = min(bws) / 1e9, max(bws) / 1e9
    return f"{lo:.1f} GB/s" if hi - lo < 0.05 else f"{lo:.1f}-{hi:.1f} GB/s by run"


def stale_summary(rows: list[dict], changed: dict) -> str:
    """How many of our rows are stale, dirty, or of a commit git cannot place, against HEAD now."""
    ours = [r for r in rows if _ours(r)]
    stale = [r for r in ours if changed[r["commit"]]]
    timed = sum(r["status"] == "ok" for r in stale)
    dirty = sum(str(r["commit"]).endswith("+dirty") for r in ours)
    unknown = sum(changed[r["commit"]] is None for r in ours)
    return (
        f"**Stale: {len(stale)} of our {len(ours)} rows** ({timed} of them timed, the rest skipped or failed) were "
        f"measured at a commit whose solver code (knapsack_gpu/, kernels/) differs from HEAD {provenance.head()} "
        f"at report time; {dirty} were measured on a dirty tree, {unknown} at a commit git cannot place."
    )


def runs_and_machines(runs: list[dict], rows: list[dict]) -> str:
    """Each run (commit, time, machine, rows it still holds, the solver commits since) and each machine in full."""
    lines = [
        "## Runs and machines",
        "",
        "| run | commit | timestamp (UTC) | machine | rows | copy bandwidth | solver commits since |",
        "|---:|---|---|---|---:|---:|---|",
    ]
    for i, run in enumerate(runs):
        held = sum(r["run"] == i for r in rows)
        since = provenance.solver_commits_since(run["git_commit"])
        bandwidth = f"{run['copy_bandwidth_bytes_per_s'] / 1e9:.1f} GB/s"
        lines.append(
            _md(
                [i, run["git_commit"], run["timestamp"], provenance.machine_id(run), held, bandwidth]
                + [", ".join(since) or "-"]
            )
        )
    names = ["python", "torch", "numpy", "triton", "scipy", "ortools"]
    lines += [
        "",
        _md(["machine", "cpu", "cores", "memory", "GPU", "threads", *names]),
        "|---|---|---:|---:|---|---:|" + "---|" * len(names),
    ]
    machines = {provenance.machine_id(run): run for run in runs}
    for mid, m in machines.items():
        memory = f"{m['memory_bytes'] / 2**30:.0f} GiB" if m.get("memory_bytes") else "?"
        versions = [m["versions"].get(k) for k in names]
        lines.append(_md([mid, m["cpu"], m["cores"], memory, m["gpu"] or "none", m["threads"], *versions]))
    return "\n".join(lines)


HISTORY = "HISTORY.md"
PER_CLASS_NOTE = (
    "combo and minknap are Pisinger's C codes as the digneapy 0.2.5 wheel builds them (int32 inputs: skipped where C, "
    "a weight or a value reaches 2^31). Their time here is their own clock (milliseconds measured inside the C call); "
    "ours is the suite's wall time around solve(). combo returns its value only: its answer counts as right when the "
    "value is the optimum (known, or ours' and minknap's checked selections), its feasibility cannot be checked. A "
    "states-array overflow exit()s the process: those rows read failed, with what the code printed."
)


def write_report(runs: list[dict], rows: list[dict], out_dir: Path, stem: str) -> str:
    changed = staleness(rows)
    head = [
        f"# Benchmark suite ({stem})",
        "",
        f"{len(runs)} run(s), {runs[0]['timestamp']} to {runs[-1]['timestamp']}, on "
        f"{len({provenance.machine_id(r) for r in runs})} machine(s), both listed under Runs and machines at the end; "
        f"copy bandwidth {_bandwidth(runs)}.",
        "",
        stale_summary(rows, changed),
        "",
        "Medians of the repeats shown, after one untimed warm-up run per contender where n*C <= 1e9 (beyond that the",
        "first, cold run is among the repeats; a solve whose first timed run took under 10 ms is repeated 51 times,",
        "every contender alike); peak RSS is the contender's whole process (python + torch included);",
        "solver peak is knapsack_gpu's own accounting of its buffers. `result` checks each answer against the known",
        "optimum (public instances) or the exact contenders' (ours, OR-Tools, minknap), and feasibility separately;",
        "combo's value only (it returns no selection) is checked against that and never sets it.",
        "`% of copy bw`: cell updates/s times three values a cell (read f(c) and f(c - w), write f(c)) against the",
        "measured copy bandwidth; over 100% means the shifted read came from cache, and a row that fits in cache",
        "(C ~ 1e4) is bound by ufunc calls, not memory. `plan` (our rows): strategy and dtype, DP cells done against",
        "n*C, and where the solver reports them its peak states, the items reduction fixed in and out, its bounds.",
        "Each group opens with ours against the fastest rival whose answer was right (rival s / ours s: above 1, ours",
        "is faster); torch's greedy heuristic is never that rival, even where it happens to hit the optimum.",
        "`commit`: the code the row was measured at, `+dirty` when tracked files under knapsack_gpu/, kernels/ or",
        "benchmarks/ differed from it. `machine`: hardware, threads and library versions, listed at the end. `stale`:",
        "one of our rows whose solver code changed since its commit (`git diff --quiet <commit> HEAD -- knapsack_gpu",
        "kernels`, asked when this report was written; `?` where git cannot tell). A rival's row depends only on the",
        "rival's version, which its machine id records, and the workload.",
        "",
    ]
    body = []
    for group, title in [
        ("partitioner", "Partitioner scale"),
        ("pareto", "The whole trade-off: knee search over 100 budgets, one pass vs one dp_knapsack per budget"),
        ("seeds", "Seeds' scale"),
        ("public", "Public instances"),
        ("kplib10k", "kplib n = 10,000: ours against branch and bound (OR-Tools, HiGHS) and OR-Tools' DP"),
        ("kplib", "kplib, n = 1,000 and 10,000: ours against Pisinger's combo and minknap"),
        ("classes", "Pisinger's classes, n = 1e3..1e4, R = 1e4..1e7: ours against combo and minknap"),
        ("jooken", "Jooken c = 1e6 and 1e8: ours against combo and minknap"),
    ]:
        g = [r for r in rows if r["group"] == group]
        if g:
            body += [f"## {title}", "", versus(g), "", table(g, runs, changed), ""]
            if group == "seeds":
                body += [claims(rows), ""]
    present = {r["contender"] for r in rows}
    ours = [name for name in ("ours-numpy", "ours-cuda-triton", "ours-cuda-torch") if name in present]
    tables = [per_class(rows, rival, name) for rival in PISINGER for name in ours]
    if any(tables):
        body += ["## Ours against Pisinger's codes, per class", "", PER_CLASS_NOTE, ""]
        body += [t + "\n" for t in tables if t]
    goals = targets(rows)
    if goals:
        body += ["## The issues' targets", "", goals, ""]
    wrong = [
        r
        for r in rows
        if r.get("verdict", "optimal") not in ("optimal", "unchecked")
        and not r["verdict"].startswith("knee ")
        or "knees differ" in r.get("verdict", "")
    ]
    body += ["## Answers that were not optimal or not feasible", ""]
    body += [f"- {r['workload']}: {r['contender']}: {r['verdict']}" for r in wrong] or ["- none"]
    body += ["", runs_and_machines(runs, rows)]
    history = out_dir / HISTORY
    if history.exists():  # hand-written: what earlier releases measured, and why rows are marked stale
        body += ["", history.read_text().strip()]
    pngs = plots(runs, rows, out_dir, stem)
    body += ["", "## Plots", ""] + [f"![{p}]({p})" for p in pngs]
    md = "\n".join(head + body) + "\n"
    (out_dir / f"{stem.upper()}.md").write_text(md)
    return md

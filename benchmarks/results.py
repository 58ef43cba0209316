"""Result files: the runs that measured them and their rows, each row pointing to its run.

    {"runs": [run, ...], "rows": [{"workload", "contender", ..., "run": index in runs, "commit", "machine"}, ...]}

A run is :func:`provenance.machine`'s record plus the run's copy bandwidth. Every row also carries its run's commit
(with its "+dirty" mark) and machine id, so a row read alone still says where and at which code it was measured.
Merging keeps every source's runs; a later source's row replaces an earlier row of the same group, workload and
contender where it stood (one instance may sit in two groups: kplib's n = 1000 ones are in public and in kplib).
"""

from __future__ import annotations

import json
from pathlib import Path

from provenance import machine_id


def stamp(row: dict, runs: list[dict], index: int) -> dict:
    """`row` pointing to runs[index], with that run's commit and machine id."""
    run = runs[index]
    return {**row, "run": index, "commit": run["git_commit"], "machine": machine_id(run)}


def _from_meta(data: dict) -> tuple[list[dict], list[dict]]:
    """Files written before runs were kept: one run's "meta", or a merge's meta whose "runs" listed each source's
    meta while its rows carried their run's commit and copy bandwidth (which together name the run)."""
    meta = data["meta"]
    runs = [{k: v for k, v in m.items() if k not in ("runs", "workloads")} for m in meta.get("runs", [meta])]
    key = {(m["git_commit"], m["copy_bandwidth_bytes_per_s"]): i for i, m in enumerate(runs)}
    rows = []
    for r in data["rows"]:
        r = dict(r)
        commit, bandwidth = r.pop("commit", meta["git_commit"]), r.pop("copy_bandwidth", None)
        bandwidth = meta["copy_bandwidth_bytes_per_s"] if bandwidth is None else bandwidth
        if (commit, bandwidth) not in key:
            raise ValueError(f"row {r['workload']} / {r['contender']}: no run in the file's meta measured it")
        rows.append(stamp(r, runs, key[commit, bandwidth]))
    return runs, rows


def load(path: str | Path) -> tuple[list[dict], list[dict]]:
    """(runs, rows) of a results file, older formats included."""
    data = json.loads(Path(path).read_text())
    return (data["runs"], data["rows"]) if "runs" in data else _from_meta(data)


def save(path: Path, runs: list[dict], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"runs": runs, "rows": rows}, indent=1))


def merge(sources: list[tuple[list[dict], list[dict]]]) -> tuple[list[dict], list[dict]]:
    """All runs of all sources (a run met twice, e.g. in a merged file merged again, stays one) and their rows,
    a later row replacing an earlier one of the same group, workload and contender in its place."""
    runs: list[dict] = []
    rows: dict[tuple[str | None, str, str], dict] = {}
    for src_runs, src_rows in sources:
        index = []
        for run in src_runs:
            if run not in runs:
                runs.append(run)
            index.append(runs.index(run))
        for r in src_rows:
            rows[r.get("group"), r["workload"], r["contender"]] = stamp(r, runs, index[r["run"]])
    return runs, list(rows.values())

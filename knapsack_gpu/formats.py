"""Read knapsack instance files: kplib (.kp), Jooken (.in), Pisinger knapPI, and our JSON.

- kplib:    n, capacity, then n lines "profit weight" (blank lines ignored)
- jooken:   n, then n lines "id profit weight", then capacity
- pisinger: n, then n lines "profit weight", then capacity
- json:     {"weights": [...], "values": [...], "capacity": C, "name": optional}

A malformed file raises :class:`FormatError` naming the line and what was expected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMATS = ("auto", "kp", "jooken", "pisinger", "json")


class FormatError(ValueError):
    """The file does not follow its format; the message names the file, the line and what was expected."""


@dataclass(frozen=True)
class FileInstance:
    weights: np.ndarray
    values: np.ndarray
    capacity: int
    name: str
    format: str


def _lines(text: str) -> list[tuple[int, list[str]]]:
    """Non-blank lines as (1-based line number, tokens)."""
    return [(i, line.split()) for i, line in enumerate(text.splitlines(), 1) if line.strip()]


def _ints(path: Path, lineno: int, tokens: list[str], expected: str) -> list[int]:
    try:
        return [int(t) for t in tokens]
    except ValueError:
        raise FormatError(f"{path}:{lineno}: expected {expected}, got {' '.join(tokens)!r}") from None


def _one(path: Path, lines, k: int, what: str) -> int:
    if k >= len(lines):
        raise FormatError(f"{path}: ended early: expected {what} after line {lines[-1][0] if lines else 0}")
    lineno, tokens = lines[k]
    if len(tokens) != 1:
        raise FormatError(f"{path}:{lineno}: expected {what} (one integer), got {' '.join(tokens)!r}")
    return _ints(path, lineno, tokens, what)[0]


def _items(path: Path, lines, first: int, n: int, columns: str) -> tuple[np.ndarray, np.ndarray]:
    ncol = len(columns.split())
    if first + n > len(lines):
        got = max(0, len(lines) - first)
        raise FormatError(f"{path}: expected {n} item lines '{columns}', found {got}")
    values, weights = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for i in range(n):
        lineno, tokens = lines[first + i]
        if len(tokens) != ncol:
            raise FormatError(f"{path}:{lineno}: expected '{columns}' ({ncol} integers), got {' '.join(tokens)!r}")
        row = _ints(path, lineno, tokens, f"'{columns}'")
        values[i], weights[i] = row[-2], row[-1]
    return weights, values


def _trailing(path: Path, lines, k: int) -> None:
    if k < len(lines):
        lineno, tokens = lines[k]
        raise FormatError(f"{path}:{lineno}: expected the end of the file, got {' '.join(tokens)!r}")


def detect(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".json" or text.lstrip().startswith("{"):
        return "json"
    if suffix == ".kp":
        return "kp"
    lines = _lines(text)
    if len(lines) >= 2 and len(lines[0][1]) == 1:
        second = len(lines[1][1])
        if second == 1:
            return "kp"
        if second == 3:
            return "jooken"
        if second == 2:
            return "pisinger"
    raise FormatError(f"{path}: cannot tell the format; pass --format kp, jooken, pisinger or json")


def parse(text: str, path: Path, fmt: str = "auto") -> FileInstance:
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "auto":
        fmt = detect(path, text)
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(data, dict) or not {"weights", "values", "capacity"} <= data.keys():
            raise FormatError(f"{path}: expected a JSON object with 'weights', 'values' and 'capacity'")
        return FileInstance(
            np.asarray(data["weights"]), np.asarray(data["values"]), data["capacity"], data.get("name", path.stem), fmt
        )
    lines = _lines(text)
    n = _one(path, lines, 0, "the number of items")
    if fmt == "kp":
        capacity = _one(path, lines, 1, "the capacity")
        weights, values = _items(path, lines, 2, n, "profit weight")
        _trailing(path, lines, 2 + n)
    else:
        columns = "id profit weight" if fmt == "jooken" else "profit weight"
        weights, values = _items(path, lines, 1, n, columns)
        capacity = _one(path, lines, 1 + n, "the capacity")
        _trailing(path, lines, 2 + n)
    return FileInstance(weights, values, capacity, path.stem, fmt)


def read_instance(path: str | Path, fmt: str = "auto") -> FileInstance:
    """Read an instance file.

    Args:
        path: the file.
        fmt: "auto" (by extension, then by content), "kp", "jooken", "pisinger" or "json".

    Raises:
        FormatError: malformed content, naming the line.
        OSError: the file cannot be read.
    """
    path = Path(path)
    return parse(path.read_text(), path, fmt)


def write_json(path: str | Path, weights, values, capacity: int, name: str | None = None) -> None:
    """Write an instance in our JSON format."""
    data = {"name": name or Path(path).stem, "capacity": int(capacity)}
    data["weights"] = [int(x) for x in weights]
    data["values"] = [x.item() if hasattr(x, "item") else x for x in values]
    Path(path).write_text(json.dumps(data))

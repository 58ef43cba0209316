"""Read knapsack instance files: kplib (.kp), Jooken (.in), Pisinger knapPI, and our JSON.

- kplib:    n, capacity, then n lines "profit weight" (blank lines ignored)
- jooken:   n, then n lines "id profit weight", then capacity
- pisinger: n, then n lines "profit weight", then capacity
- json:     {"weights": [...], "values": [...], "capacity": C, "name": optional}

The text formats are ASCII; lines end with \\n, \\r\\n or \\r; numbers are integers ``[+-]?[0-9]+`` separated by
whitespace. Weights and the capacity must lie in [0, 2**62) and profits in [0, 2**63), the solver's limits.
A malformed file raises :class:`FormatError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tempfile
import warnings
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from .limits import MAX_WEIGHT

FORMATS = ("auto", "kp", "jooken", "pisinger", "json")
_COLUMNS = {"kp": "profit weight", "jooken": "id profit weight", "pisinger": "profit weight"}
_MAX_VALUE = 2**63  # profits are int64


class FormatError(ValueError):
    """The file does not follow its format; the message names the file, the line and what was expected."""


@dataclass(frozen=True)
class FileInstance:
    """An instance read from a file.

    Attributes:
        weights: int64 array of shape (n,), entries in [0, 2**62); may be a strided view of the parsed rows.
        values: shape (n,), int64 (text formats, JSON integers) or float64 (JSON with fractional values).
        capacity: in [0, 2**62).
        name: the JSON "name", else the file name without its suffix.
        format: "kp", "jooken", "pisinger" or "json".
    """

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    name: str
    format: str


def read_instance(path: str | Path, fmt: str = "auto", *, fast: bool = True) -> FileInstance:
    """Read an instance file.

    Args:
        path: the file; "-" reads standard input (named "stdin", the format by content).
        fmt: "auto" (by extension, then by content), "kp", "jooken", "pisinger" or "json".
        fast: parse the item lines with numpy (memory about the size of the arrays); a file it does not accept
            whole is read again line by line, which finds the offending line. False reads line by line only
            (the reference parse the tests compare against).

    Raises:
        FormatError: malformed content or a number outside the solver's limits, naming the file and the line.
        OSError: the file cannot be read.
    """
    if str(path) == "-":
        data = sys.stdin.buffer.read()
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "stdin").write_bytes(data)
            return read_instance(Path(tmp) / "stdin", fmt, fast=fast)
    path = Path(path)
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "auto":
        fmt = detect(path)
    if fmt == "json":
        return _read_json(path)
    if fast:
        try:
            inst = _read_text_fast(path, fmt)
        except ValueError:  # includes FormatError and UnicodeDecodeError; the line-by-line pass names the line
            inst = None
        if inst is not None:
            return inst
    return _read_text_slow(path, fmt)


BOM = b"\xef\xbb\xbf"


def _text(path: Path, encoding: str):
    """The file as text (universal newlines), past a leading UTF-8 byte-order mark if there is one."""
    raw = open(path, "rb")  # noqa: SIM115  (closed with the wrapper)
    if raw.read(len(BOM)) != BOM:
        raw.seek(0)
    return io.TextIOWrapper(raw, encoding=encoding, newline=None)


def detect(path: Path) -> str:
    """The format of a file: JSON by extension or a leading "{", kplib by extension, else by the first two lines."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "json"
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.removeprefix(BOM).lstrip().startswith(b"{"):  # JSON may hold UTF-8, so look at bytes before reading lines
        return "json"
    if suffix == ".kp":
        return "kp"
    with _text(path, "latin-1") as f:
        lines = _Lines(f, path)
        first = lines.next("the number of items")
        second = lines.next("an item line or the capacity")
    if first is None:
        raise FormatError(f"{path}:{max(lines.lineno, 1)}: the file is empty or blank: it holds no instance")
    if second is not None and len(first[1]) == 1:
        width = len(second[1])
        if width == 1:
            return "kp"
        if width == 3:
            return "jooken"
        if width == 2:
            return "pisinger"
    line = first[0] if len(first[1]) != 1 or second is None else second[0]
    raise FormatError(
        f"{path}:{line}: cannot tell the format (expected the number of items alone on the first line, then an item "
        "line or the capacity); pass --format kp, jooken, pisinger or json"
    )


# ---------------------------------------------------------------- text formats, line by line (the reference)


class _Lines:
    """The non-blank lines of a text file as (line number, tokens), splitting as np.loadtxt does: universal
    newlines (the file is opened with newline=None) and str.split() whitespace."""

    def __init__(self, f, path: Path):
        self.f, self.path, self.lineno = f, path, 0

    def next(self, what: str) -> tuple[int, list[str]] | None:
        """The next non-blank line, or None at the end of the file; a line that is not ASCII is an error."""
        for line in self.f:
            self.lineno += 1
            if not line.isascii():
                col, byte = next((i, ord(c)) for i, c in enumerate(line, 1) if ord(c) > 127)
                raise FormatError(
                    f"{self.path}:{self.lineno}: expected {what}, got byte 0x{byte:02x} in column {col}: "
                    "instance files are ASCII text (is this a binary file?)"
                )
            tokens = line.split()
            if tokens:
                return self.lineno, tokens
        return None

    def error(self, lineno: int, tokens: list[str], expected: str) -> FormatError:
        text = " ".join(tokens)
        shown = repr(text if len(text) <= 60 else text[:57] + "...")
        hint = " (control characters: is this a binary file?)" if any(c < " " for c in text) else ""
        return FormatError(f"{self.path}:{lineno}: expected {expected}, got {shown}{hint}")

    def ended(self, what: str) -> FormatError:
        if self.lineno == 0:
            return FormatError(f"{self.path}:1: the file is empty: expected {what}")
        return FormatError(f"{self.path}:{self.lineno}: ended early: expected {what}")

    def integer(self, what: str, where: str = "") -> tuple[int, int, str]:
        """(line number, value, token) of a line holding one integer; ``where`` adds context to errors."""
        line = self.next(what + where)
        if line is None:
            raise self.ended(what + where)
        lineno, tokens = line
        value = _int(tokens[0]) if len(tokens) == 1 else None
        if value is None:
            raise self.error(lineno, tokens, f"{what} (one integer){where}")
        return lineno, value, tokens[0]


def _int(token: str) -> int | None:
    """The integer a token spells, ``[+-]?[0-9]+`` as np.loadtxt reads it (int() would also take "1_000")."""
    digits = token[1:] if token[0] in "+-" else token
    if not digits.isdigit():  # the line is ASCII, so this means 0-9
        return None
    sign = -1 if token[0] == "-" else 1
    digits = digits.lstrip("0") or "0"
    if len(digits) > 4000:  # int() refuses such strings; the number is past every limit and messages show the token
        return sign * 10**4000
    return sign * int(digits)


def _short(token: str) -> str:
    return token if len(token) <= 40 else f"{token[:20]}...({len(token)} characters)"


def _count(lines: _Lines) -> tuple[int, int]:
    lineno, n, token = lines.integer("the number of items")
    if n < 0:
        raise FormatError(f"{lines.path}:{lineno}: n = {_short(token)}: the number of items must be >= 0")
    return lineno, n


def _capacity(lines: _Lines, where: str = "") -> int:
    lineno, capacity, token = lines.integer("the capacity", where)
    if capacity < 0:
        raise FormatError(f"{lines.path}:{lineno}: capacity = {_short(token)}: the capacity must be >= 0")
    if capacity >= MAX_WEIGHT:
        raise FormatError(
            f"{lines.path}:{lineno}: capacity = {_short(token)}: the capacity must be < 2**62 = {MAX_WEIGHT}"
        )
    return capacity


def _read_text_slow(path: Path, fmt: str) -> FileInstance:
    columns = _COLUMNS[fmt]
    ncol = len(columns.split())
    # latin-1 decodes every byte, so a binary file is reported by line instead of by a UnicodeDecodeError
    with _text(path, "latin-1") as f:
        lines = _Lines(f, path)
        n_line, n = _count(lines)
        items = f"{n} item{'s' if n != 1 else ''} (n = {n} on line {n_line})"
        if fmt == "kp":
            capacity = _capacity(lines)
        weights, values = array("q"), array("q")
        for i in range(n):
            line = lines.next(f"'{columns}'")
            if line is None:
                raise FormatError(
                    f"{path}: expected {n} item lines '{columns}', found {i}: the file ends at line {lines.lineno} "
                    f"(n = {n} on line {n_line})"
                )
            lineno, tokens = line
            row = [_int(t) for t in tokens] if len(tokens) == ncol else [None]
            if None in row:
                raise lines.error(
                    lineno, tokens, f"'{columns}' ({ncol} integers) for item {i + 1} of {n} (n = {n} on line {n_line})"
                )
            profit, weight = row[-2], row[-1]
            if not (0 <= profit < _MAX_VALUE and 0 <= weight < MAX_WEIGHT):
                raise _item_error(path, lineno, profit, weight, tokens)
            values.append(profit)
            weights.append(weight)
        if fmt != "kp":
            capacity = _capacity(lines, f" after the {items}")
        extra = lines.next("the end of the file")
        if extra is not None:
            raise lines.error(extra[0], extra[1], f"the end of the file after the {items}")
    return FileInstance(np.array(weights, dtype=np.int64), np.array(values, dtype=np.int64), capacity, path.stem, fmt)


def _item_error(path: Path, lineno: int, profit: int, weight: int, tokens: list[str]) -> FormatError:
    where = f"{path}:{lineno}"
    if profit < 0:
        return FormatError(f"{where}: profit = {_short(tokens[-2])}: profits must be >= 0")
    if profit >= _MAX_VALUE:
        return FormatError(f"{where}: profit = {_short(tokens[-2])}: profits must be < 2**63 = {_MAX_VALUE} (int64)")
    if weight < 0:
        return FormatError(f"{where}: weight = {_short(tokens[-1])}: weights must be >= 0")
    return FormatError(f"{where}: weight = {_short(tokens[-1])}: weights must be < 2**62 = {MAX_WEIGHT}")


# ---------------------------------------------------------------- text formats, with numpy


def _read_text_fast(path: Path, fmt: str) -> FileInstance | None:
    """The instance, if the file is well formed and within the limits; None (or ValueError) for anything else.

    Only the header and the trailer go through :class:`_Lines`; np.loadtxt reads the items in C, splitting lines
    exactly as _Lines does and rejecting any token that is not an int64.
    """
    ncol = len(_COLUMNS[fmt].split())
    size = path.stat().st_size
    with _text(path, "ascii") as f:
        lines = _Lines(f, path)
        _, n = _count(lines)
        if n * (2 * ncol - 1) > size:  # loadtxt allocates max_rows rows up front; an item line takes >= 2*ncol-1 bytes
            return None
        capacity = _capacity(lines) if fmt == "kp" else None
        rows = np.empty((0, ncol), dtype=np.int64)
        if n:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "blank lines do not count towards max_rows"
                # From an open file loadtxt takes lines one at a time and stops after the n-th row, so the trailer
                # is still there to read (the tests with trailing lines would catch a numpy that read ahead).
                rows = np.loadtxt(f, dtype=np.int64, comments=None, max_rows=n, ndmin=2)
        if rows.shape != (n, ncol):
            return None
        if fmt != "kp":
            capacity = _capacity(lines)
        if lines.next("the end of the file") is not None:
            return None
    values, weights = rows[:, -2], rows[:, -1]
    if n and (weights.min() < 0 or weights.max() >= MAX_WEIGHT or values.min() < 0):
        return None
    return FileInstance(weights, values, capacity, path.stem, fmt)


# ---------------------------------------------------------------- JSON


def _read_json(path: Path) -> FileInstance:
    raw = path.read_bytes().removeprefix(BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FormatError(
            f"{path}:{line}: byte 0x{raw[exc.start]:02x} is not UTF-8: expected JSON text (is this a binary file?)"
        ) from None
    del raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        line = _deepest_line(text)
        raise FormatError(f"{path}:{line}: invalid JSON for an instance: brackets nested too deeply") from None
    except ValueError:  # an integer literal longer than int() converts (4300 digits by default)
        digits = getattr(sys, "get_int_max_str_digits", lambda: 4300)()  # Python 3.10.7+
        m = re.search(f"[0-9]{{{digits + 1}}}", text)
        line = text.count("\n", 0, m.start()) + 1 if m else 1
        raise FormatError(f"{path}:{line}: a number with more digits than any instance can use") from None
    keys = ("weights", "values", "capacity")
    if not isinstance(data, dict) or not set(keys) <= data.keys():
        line = text.count("\n", 0, len(text) - len(text.lstrip())) + 1
        missing = ", ".join(repr(k) for k in keys if k not in data) if isinstance(data, dict) else None
        raise FormatError(
            f"{path}:{line}: expected a JSON object with 'weights', 'values' and 'capacity'"
            + (f"; {missing} missing" if missing else f", got {type(data).__name__}")
        )

    def fail(key: str, index: int | None, message: str) -> NoReturn:
        raise FormatError(f"{path}:{_json_line(text, key, index)}: {message}")

    weights = _json_numbers(data, "weights", fail, whole=True)
    values = _json_numbers(data, "values", fail, whole=False)
    if len(weights) != len(values):
        fail("values", None, f"'values' has {len(values)} entries but 'weights' has {len(weights)}: they must match")
    capacity = data["capacity"]
    if type(capacity) is float and capacity.is_integer():
        capacity = int(capacity)
    if type(capacity) is not int or not 0 <= capacity < MAX_WEIGHT:
        shown = _short(json.dumps(data["capacity"]))
        fail("capacity", None, f"capacity = {shown}: the capacity must be a whole number in [0, 2**62)")
    name = data.get("name", path.stem)
    if not isinstance(name, str):
        fail("name", None, f"name = {json.dumps(name)[:40]}: expected a string")
    return FileInstance(weights, values, int(capacity), name, "json")


def _json_numbers(data: dict, key: str, fail, whole: bool) -> np.ndarray:
    """data[key] as int64 (whole numbers) or float64, every entry checked against the solver's limits."""
    items = data[key]
    what = "weights must be whole numbers in [0, 2**62)" if whole else "values must be finite numbers >= 0"
    if not isinstance(items, list):
        fail(key, None, f"'{key}' must be a list of numbers, got {json.dumps(items)[:40]}")
    kinds = set(map(type, items))
    if not kinds <= {int, float}:  # bool is an int subclass, but type() tells them apart: true/false are refused
        i = next(i for i, x in enumerate(items) if type(x) not in (int, float))
        fail(key, i, f"{key}[{i}] = {json.dumps(items[i])[:40]}: {what}")
    dtype = np.int64 if kinds <= {int} else np.float64
    try:
        arr = np.array(items, dtype=dtype)
    except OverflowError:  # an int past int64 (past float64 among floats)
        i = next(i for i, x in enumerate(items) if not _fits(x, dtype))
        fail(key, i, f"{key}[{i}] = {_short(str(items[i]))}: {what} (and fit in {dtype.__name__})")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr < 0)
        if whole:
            bad |= (arr != np.floor(arr)) | (arr >= MAX_WEIGHT)
    else:
        bad = (arr < 0) | (arr >= MAX_WEIGHT) if whole else arr < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        fail(key, i, f"{key}[{i}] = {json.dumps(items[i])}: {what}")
    return arr.astype(np.int64) if whole else arr


def _deepest_line(text: str) -> int:
    """The line where brackets nest deepest (brackets inside strings do not count): for error messages only."""
    flat = re.sub(r'"(?:[^"\\\\]|\\\\.)*"', '""', text).encode()
    b = np.frombuffer(flat, dtype=np.uint8)
    depth = np.cumsum(np.isin(b, list(b"[{")), dtype=np.int64) - np.cumsum(np.isin(b, list(b"]}")), dtype=np.int64)
    return flat.count(b"\n", 0, int(depth.argmax()) if depth.size else 0) + 1


def _fits(x: int | float, dtype) -> bool:
    try:
        dtype(x)
    except OverflowError:
        return False
    return True


def _json_line(text: str, key: str, index: int | None = None) -> int:
    """The line of data[key] (of data[key][index] if given) in a valid JSON object: for error messages only."""
    scan, ws = json.JSONDecoder().scan_once, json.decoder.WHITESPACE.match
    pos, found = ws(text, 0).end() + 1, None  # past the "{"
    while text[ws(text, pos).end()] != "}":
        pos = ws(text, pos).end()
        name, pos = scan(text, pos)
        pos = ws(text, ws(text, pos).end() + 1).end()  # past the ":"
        if name == key:
            found = pos  # the last duplicate key wins, as in json.loads
        pos = ws(text, scan(text, pos)[1]).end()
        pos += text[pos] == ","
    if found is None:
        return 1
    if index is not None:
        pos = ws(text, found + 1).end()  # past the "["
        for _ in range(index):
            pos = ws(text, scan(text, pos)[1]).end() + 1  # past the element and its ","
            pos = ws(text, pos).end()
        found = pos
    return text.count("\n", 0, found) + 1


def write_json(path: str | Path, weights, values, capacity: int, name: str | None = None) -> None:
    """Write an instance in our JSON format."""
    data = {"name": name or Path(path).stem, "capacity": int(capacity)}
    data["weights"] = [int(x) for x in weights]
    data["values"] = [x.item() if hasattr(x, "item") else x for x in values]
    Path(path).write_text(json.dumps(data))

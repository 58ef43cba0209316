"""Read knapsack instance files: kplib (.kp), Jooken (.in), Pisinger's knapPI files (two layouts), and our JSON.

- kplib:        n, capacity, then n lines "profit weight" (blank lines ignored)
- jooken:       n, then n lines "id profit weight", then capacity
- pisinger:     n, then n lines "profit weight", then capacity (copies of knapPI instances without a header)
- pisinger-csv: Pisinger's own files, one or many instances each: a name line, "n N", "c C", "z Z" (the known
                optimum), "time T" (optional, ignored), n rows "i,p,w,x" (x: the known solution), a line "-----"
                (optional after the last instance)
- json:         {"weights": [...], "values": [...], "capacity": C, "name": optional}

The text formats are ASCII; lines end with \\n, \\r\\n or \\r; numbers are integers ``[+-]?[0-9]+`` separated by
whitespace (by commas in pisinger-csv's rows). Weights and the capacity must lie in [0, 2**62) and profits in
[0, 2**63), the solver's limits. A malformed file raises :class:`FormatError` naming the file, the line (and in a
pisinger-csv file the instance) and what was expected.
"""

from __future__ import annotations

import io
import itertools
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

FORMATS = ("auto", "kp", "jooken", "pisinger", "pisinger-csv", "json")
_COLUMNS = {"kp": "profit weight", "jooken": "id profit weight", "pisinger": "profit weight"}
_MAX_VALUE = 2**63  # profits are int64


class FormatError(ValueError):
    """The file does not follow its format; the message names the file, the line and what was expected."""


@dataclass(frozen=True)
class FileInstance:
    """An instance read from a file.

    Attributes:
        weights: int64 array of shape (n,), entries in [0, 2**62), C-contiguous.
        values: shape (n,), int64 (text formats, JSON integers) or float64 (JSON with fractional values),
            C-contiguous.
        capacity: in [0, 2**62).
        name: the JSON "name", pisinger-csv's name line, else the file name without its suffix.
        format: "kp", "jooken", "pisinger", "pisinger-csv" or "json".
        optimum: the optimum the file states (pisinger-csv's z), else None.
        solution: the solution the file states (pisinger-csv's x column) as a bool array of shape (n,), else None;
            :func:`check_known_solution` measures it.
        line: the line the instance starts on (a pisinger-csv file holds several).
    """

    weights: np.ndarray
    values: np.ndarray
    capacity: int
    name: str
    format: str
    optimum: int | None = None
    solution: np.ndarray | None = None
    line: int = 1

    def __post_init__(self) -> None:
        # the parsers' columns are strided views of their rows: a solve would copy them on every call (and could
        # not take the compiled checks of knapsack_gpu.problem), so the copy is made once, here
        object.__setattr__(self, "weights", np.ascontiguousarray(self.weights))
        object.__setattr__(self, "values", np.ascontiguousarray(self.values))


def read_instance(
    path: str | Path, fmt: str = "auto", *, fast: bool = True, instance: str | int | None = None
) -> FileInstance:
    """Read an instance file, or one instance of a file that holds several (Pisinger's own knapPI files).

    Args:
        path: the file; "-" reads standard input (named "stdin", the format by content).
        fmt: "auto" (by extension, then by content), "kp", "jooken", "pisinger", "pisinger-csv" or "json".
        fast: parse the item lines with numpy (memory about the size of the arrays); a file it does not accept
            whole is read again line by line, which finds the offending line. False reads line by line only
            (the reference parse the tests compare against). pisinger-csv has the line-by-line parse only.
        instance: which of the file's instances, by name or 1-based index (see :func:`select`); None takes the
            file's only one.

    Raises:
        FormatError: malformed content or a number outside the solver's limits, naming the file and the line.
        ValueError: ``instance`` names none of the file's instances, or is None where the file holds several.
        OSError: the file cannot be read.
    """
    return select(read_instances(path, fmt, fast=fast), instance, path)


def read_instances(path: str | Path, fmt: str = "auto", *, fast: bool = True) -> list[FileInstance]:
    """Every instance of a file, in file order: one, except in Pisinger's own files (pisinger-csv), which may hold
    many. Arguments and errors as :func:`read_instance`'s; a file is read and checked whole."""
    if str(path) == "-":
        data = sys.stdin.buffer.read()
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "stdin"
            file.write_bytes(data)
            try:
                return read_instances(file, fmt, fast=fast)
            except (ValueError, OSError) as exc:  # name the input as the user gave it, not the copy
                raise (FormatError if isinstance(exc, FormatError) else ValueError)(
                    str(exc).replace(str(file), "<stdin>")
                ) from None
    path = Path(path)
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "auto":
        fmt = detect(path)
    if fmt == "json":
        return [_read_json(path)]
    if fmt == "pisinger-csv":
        return _read_csv(path, fast)
    if fast:
        try:
            inst = _read_text_fast(path, fmt)
        except ValueError:  # includes FormatError and UnicodeDecodeError; the line-by-line pass names the line
            inst = None
        if inst is not None:
            return [inst]
    return [_read_text_slow(path, fmt)]


def select(instances: list[FileInstance], instance: str | int | None, path: str | Path = "the file") -> FileInstance:
    """One of a file's instances.

    Args:
        instances: what :func:`read_instances` returned for ``path``.
        instance: an int, or a string of digits, is a 1-based index (pisinger-csv refuses names that are
            integers, so this is never ambiguous); any other string is a name. None: the file's only instance.
        path: the file, for messages.

    Raises:
        ValueError: no such instance; a name that several instances share; None where there are several.
    """
    count = len(instances)
    if instance is None:
        if count == 1:
            return instances[0]
        raise ValueError(
            f"{path} holds {count} instances ({_names(instances)}): choose one by name or 1-based index "
            "(--instance on the command line, instance= in read_instance)"
        )
    if isinstance(instance, int) or str(instance).isdigit():
        index = int(instance)
        if not 1 <= index <= count:
            held = f"{count} instances, numbered 1 to {count}" if count > 1 else "1 instance: choose 1 or its name"
            raise ValueError(f"{path}: instance {index}: the file holds {held} ({_names(instances)})")
        return instances[index - 1]
    found = [inst for inst in instances if inst.name == instance]
    if len(found) == 1:
        return found[0]
    if found:
        lines = ", ".join(str(inst.line) for inst in found)
        numbers = ", ".join(str(i) for i, inst in enumerate(instances, 1) if inst.name == instance)
        raise ValueError(
            f"{path}: {len(found)} instances are named {instance!r} (lines {lines}): choose one by its index "
            f"({numbers})"
        )
    raise ValueError(f"{path}: no instance is named {instance!r}; it holds {_names(instances)} (or give an index)")


def _names(instances: list[FileInstance]) -> str:
    """The instances' names for a message: all of a few, else the first two and the last."""
    names = [inst.name for inst in instances]
    return ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]}, ..., {names[-1]}"


BOM = b"\xef\xbb\xbf"


def _text(path: Path, encoding: str):
    """The file as text (universal newlines), past a leading UTF-8 byte-order mark if there is one."""
    raw = open(path, "rb")  # noqa: SIM115  (closed with the wrapper)
    if raw.read(len(BOM)) != BOM:
        raw.seek(0)
    return io.TextIOWrapper(raw, encoding=encoding, newline=None)


def detect(path: Path) -> str:
    """The format of a file: JSON by extension or a leading "{", kplib by extension, else by the first two lines
    (pisinger-csv: a name, then a header line such as "n 50")."""
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
    if second is not None and len(first[1]) == 1 and _int(first[1][0]) is None and second[1][0] in _HEADER:
        return "pisinger-csv"
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
        "line or the capacity; or an instance name, then a line such as 'n 50'); pass --format "
        f"{', '.join(FORMATS[1:-1])} or json"
    )


# ---------------------------------------------------------------- text formats, line by line (the reference)


class _Lines:
    """The non-blank lines of a text file as (line number, tokens), splitting as np.loadtxt does: universal
    newlines (the file is opened with newline=None) and str.split() whitespace. Messages start with
    :meth:`where`: the file, the line, and ``context`` (pisinger-csv sets it to the instance being read)."""

    def __init__(self, f, path: Path):
        self.f, self.path, self.lineno, self.context = f, path, 0, ""

    def where(self, lineno: int) -> str:
        return f"{self.path}:{lineno}: {self.context}"

    def next(self, what: str) -> tuple[int, list[str]] | None:
        """The next non-blank line, or None at the end of the file; a line that is not ASCII is an error."""
        for line in self.f:
            self.lineno += 1
            if not line.isascii():
                col, byte = next((i, ord(c)) for i, c in enumerate(line, 1) if ord(c) > 127)
                raise FormatError(
                    f"{self.where(self.lineno)}expected {what}, got byte 0x{byte:02x} in column {col}: "
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
        return FormatError(f"{self.where(lineno)}expected {expected}, got {shown}{hint}")

    def ended(self, what: str) -> FormatError:
        if self.lineno == 0:
            return FormatError(f"{self.path}:1: the file is empty: expected {what}")
        return FormatError(f"{self.where(self.lineno)}ended early: expected {what}")

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
    return lineno, _check_count(lines.where(lineno), n, token)


def _check_count(where: str, n: int, token: str) -> int:
    if n < 0:
        raise FormatError(f"{where}n = {_short(token)}: the number of items must be >= 0")
    return n


def _capacity(lines: _Lines, where: str = "") -> int:
    lineno, capacity, token = lines.integer("the capacity", where)
    return _check_capacity(lines.where(lineno), capacity, token)


def _check_capacity(where: str, capacity: int, token: str) -> int:
    if capacity < 0:
        raise FormatError(f"{where}capacity = {_short(token)}: the capacity must be >= 0")
    if capacity >= MAX_WEIGHT:
        raise FormatError(f"{where}capacity = {_short(token)}: the capacity must be < 2**62 = {MAX_WEIGHT}")
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
                raise _item_error(lines.where(lineno), profit, weight, tokens[-2], tokens[-1])
            values.append(profit)
            weights.append(weight)
        if fmt != "kp":
            capacity = _capacity(lines, f" after the {items}")
        extra = lines.next("the end of the file")
        if extra is not None:
            raise lines.error(extra[0], extra[1], f"the end of the file after the {items}")
    return FileInstance(np.array(weights, dtype=np.int64), np.array(values, dtype=np.int64), capacity, path.stem, fmt)


def _item_error(where: str, profit: int, weight: int, profit_token: str, weight_token: str) -> FormatError:
    """Why an item is outside the solver's limits; ``where`` is the message's start (:meth:`_Lines.where`)."""
    if profit < 0:
        return FormatError(f"{where}profit = {_short(profit_token)}: profits must be >= 0")
    if profit >= _MAX_VALUE:
        return FormatError(f"{where}profit = {_short(profit_token)}: profits must be < 2**63 = {_MAX_VALUE} (int64)")
    if weight < 0:
        return FormatError(f"{where}weight = {_short(weight_token)}: weights must be >= 0")
    return FormatError(f"{where}weight = {_short(weight_token)}: weights must be < 2**62 = {MAX_WEIGHT}")


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


# ---------------------------------------------------------------- Pisinger's own files (pisinger-csv)

# The header lines after an instance's name. His generator writes them in this order; any order is read.
_HEADER = {"n": "the number of items", "c": "the capacity", "z": "the known optimum", "time": "the solve time"}
_NAME = "an instance name such as knapPI_1_50_1000_1"
_ROW = "'i,p,w,x' (4 integers separated by commas)"


def _separator(tokens: list[str]) -> bool:
    """The line of dashes that ends an instance ("-----")."""
    return len(tokens) == 1 and len(tokens[0]) >= 3 and not tokens[0].strip("-")


def _read_csv(path: Path, fast: bool) -> list[FileInstance]:
    """Every instance of one of Pisinger's own files (his largest hold 100 instances of 10,000 items)."""
    instances = []
    with _text(path, "latin-1") as f:  # latin-1: a binary file is reported by line, as in the other text formats
        lines = _Lines(f, path)
        line = lines.next(_NAME)
        if line is None:
            raise lines.ended(_NAME)
        while line is not None:
            instances.append(_csv_instance(lines, *line, fast=fast))
            lines.context = ""
            line = lines.next(_NAME)
    return instances


def _csv_instance(lines: _Lines, name_line: int, tokens: list[str], fast: bool) -> FileInstance:
    """One instance, from its name line (read already) to its "-----" line or the end of the file."""
    name = tokens[0]
    # A name that is an integer would make --instance 3 ambiguous (name or index); none of his files has one.
    if len(tokens) != 1 or _int(name) is not None or name in _HEADER or _separator(tokens) or "," in name:
        raise lines.error(name_line, tokens, _NAME)
    lines.context = f"instance {name}: "
    header: dict[str, tuple[int, int | None]] = {}
    while (line := lines.next("a header line or the first item row")) is not None and line[1][0] in _HEADER:
        lineno, (key, *rest) = line
        if key in header:
            raise FormatError(f"{lines.where(lineno)}a second '{key}' line: the first is line {header[key][0]}")
        value = _int(rest[0]) if len(rest) == 1 else None
        where = lines.where(lineno)
        if key == "time":
            value = None  # the generator's solve time ("time 0.00"): read past
        elif value is None:
            raise lines.error(lineno, line[1], f"'{key}' and one integer ({_HEADER[key]})")
        elif key == "n":
            _check_count(where, value, rest[0])
        elif key == "c":
            _check_capacity(where, value, rest[0])
        elif value < 0:
            raise FormatError(f"{where}z = {_short(rest[0])}: the known optimum must be >= 0")
        header[key] = (lineno, value)
    for key in ("n", "c"):
        if key not in header:
            what = f"a line '{key} <integer>' ({_HEADER[key]}) before the item rows"
            raise lines.ended(what) if line is None else lines.error(*line, what)
    n_line, n = header["n"]
    of_n = f"(n = {n} on line {n_line})"
    rows = _csv_rows_fast(lines, line, n) if fast and n else None
    if rows is None:
        rows = _csv_rows(lines, line, n, n_line)
    end = line if n == 0 else lines.next("'-----'")
    if end is not None and not _separator(end[1]):
        raise lines.error(*end, f"'-----' after the {n} item rows {of_n}")
    return FileInstance(
        rows[:, 2],
        rows[:, 1],
        header["c"][1],
        name,
        "pisinger-csv",
        optimum=header["z"][1] if "z" in header else None,
        solution=rows[:, 3].astype(bool),
        line=name_line,
    )


def _csv_rows(lines: _Lines, first: tuple[int, list[str]] | None, n: int, n_line: int) -> np.ndarray:
    """The n item rows as int64 (n, 4) [i, p, w, x], line by line (the reference); ``first``: the line that ended
    the header. Raises FormatError at the first row that is wrong."""
    rows = array("q")
    line, of_n = first, f"(n = {n} on line {n_line})"
    for i in range(1, n + 1):
        if i > 1:
            line = lines.next(_ROW)
        if line is None:
            raise lines.ended(f"{n} item rows 'i,p,w,x', found {i - 1} {of_n}")
        lineno, tokens = line
        if _separator(tokens):
            raise FormatError(f"{lines.where(lineno)}'-----' after {i - 1} item rows, but n = {n} on line {n_line}")
        fields = [t.strip() for t in " ".join(tokens).split(",")]
        row = [_int(t) if t else None for t in fields] if len(fields) == 4 else [None]
        if None in row:
            raise lines.error(lineno, tokens, f"{_ROW} for item {i} of {n} {of_n}")
        index, profit, weight, x = row
        where = lines.where(lineno)
        if index != i:
            raise FormatError(f"{where}i = {_short(fields[0])}, expected {i}: rows go from 1 to n in order")
        if not (0 <= profit < _MAX_VALUE and 0 <= weight < MAX_WEIGHT):
            raise _item_error(where, profit, weight, fields[1], fields[2])
        if x not in (0, 1):
            raise FormatError(f"{where}x = {_short(fields[3])}: x (the known solution) must be 0 or 1")
        rows.extend(row)
    return np.array(rows, dtype=np.int64).reshape(n, 4)


def _csv_rows_fast(lines: _Lines, first: tuple[int, list[str]] | None, n: int) -> np.ndarray | None:
    """What :func:`_csv_rows` returns, about 5 times faster, if the rows are n consecutive lines it accepts; else
    None, with the lines read put back for it (which finds what is wrong)."""
    if first is None:
        return None
    block = list(itertools.islice(lines.f, n - 1))  # the file's raw lines after the first row
    texts = [" ".join(first[1]), *block]
    flat = ",".join(texts)
    rows = None
    # A blank line or "-----" among them has no commas. int() reads "[+-]?[0-9]+" with whitespace around it, as
    # the reference does, and "1_000", which it does not.
    if flat.isascii() and "_" not in flat and set(map(str.count, texts, itertools.repeat(","))) == {3}:
        try:
            rows = np.array(list(map(int, flat.split(","))), dtype=np.int64).reshape(n, 4)
        except (ValueError, OverflowError):  # not integers, past int64, or fewer than n lines before the end
            rows = None
    if rows is not None:
        p, w, x = rows[:, 1], rows[:, 2], rows[:, 3]
        if (rows[:, 0] == np.arange(1, n + 1)).all() and p.min() >= 0 and w.min() >= 0 and w.max() < MAX_WEIGHT:
            if ((x == 0) | (x == 1)).all():
                lines.lineno += len(block)
                return rows
    lines.f = itertools.chain(block, lines.f)
    return None


def known_solution(inst: FileInstance) -> dict | None:
    """The solution the file states (pisinger-csv's x column), measured against the file's capacity and z.

    Returns:
        None where the file states none, else {"items", "weight", "value", "problem"}: "problem" says how it is
        over the capacity or not worth z (a file's error: the solver's answer does not depend on it), else None.
    """
    if inst.solution is None:
        return None
    weight = sum(inst.weights[inst.solution].tolist())  # Python integers: sums of int64 entries can pass int64
    value = sum(inst.values[inst.solution].tolist())
    problems = []
    if weight > inst.capacity:
        problems.append(f"weighs {weight}, over the capacity c = {inst.capacity}")
    if inst.optimum is not None and value != inst.optimum:
        problems.append(f"is worth {value}, not the file's z = {inst.optimum}")
    items = int(inst.solution.sum())
    return {"items": items, "weight": weight, "value": value, "problem": " and ".join(problems) or None}


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
        ended = " (the text ends there: is the file cut short?)" if exc.pos >= len(text.rstrip()) else ""
        raise FormatError(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{ended}"
        ) from None
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

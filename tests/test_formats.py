"""Instance files at the edges: numbers past the solver's limits, wrong counts, binary data, blank files, JSON types.

Every error must name the file and the line. The numpy parse must agree with the line-by-line reference parse
whenever it accepts a file, and use memory about the size of the arrays it returns.
"""

from __future__ import annotations

import json
import random
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from knappi import KNAPPI_1_50_1000_1, brute_forced, knappi_text

import knapsack_gpu.formats as formats
from knapsack_gpu.formats import FormatError, read_instance
from knapsack_gpu.reference import reference_dp

BIG = 2**62  # weights and the capacity must be below this
INT64 = 2**63


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode("latin-1") if isinstance(data, str) else data)
    return p


def read_both(path: Path, fmt: str = "auto"):
    """The instance read by the numpy path, checked equal to the reference's (or the same error from both)."""
    outcomes = []
    for fast in (True, False):
        try:
            outcomes.append(read_instance(path, fmt, fast=fast))
        except FormatError as exc:
            outcomes.append(exc)
    fast, ref = outcomes
    if isinstance(ref, FormatError):
        assert isinstance(fast, FormatError), f"the numpy path accepted what the reference rejects: {ref}"
        assert str(fast) == str(ref)
        raise ref
    assert not isinstance(fast, FormatError), fast
    assert fast.weights.dtype == ref.weights.dtype == np.int64
    assert np.array_equal(fast.weights, ref.weights) and np.array_equal(fast.values, ref.values)
    assert (fast.capacity, fast.name, fast.format) == (ref.capacity, ref.name, ref.format)
    return fast


# id, file name, content, the error (a regex; every one starts with the file and the line)
TEXT_ERRORS = [
    # numbers beyond int64, and beyond the solver's 2**62 for weights and capacities
    (
        "profit-past-int64",
        "a.kp",
        "2\n10\n1 2\n99999999999999999999 4\n",
        r"a.kp:4: profit = 99999999999999999999: profits must be < 2\*\*63",
    ),
    ("profit-2**63", "a.kp", f"1\n10\n{INT64} 4\n", r"a.kp:3: profit = 9223372036854775808: profits must be <"),
    ("weight-below-int64", "a.kp", "1\n10\n5 -99999999999999999999\n", r"a.kp:3: weight = -9+: weights must be >= 0"),
    ("weight-2**62", "a.kp", f"1\n10\n5 {BIG}\n", rf"a.kp:3: weight = {BIG}: weights must be < 2\*\*62"),
    ("weight-5001-digits", "a.kp", "1\n10\n5 1" + "0" * 5000 + "\n", r"a.kp:3: weight = 10+\.\.\.\(5001 characters\)"),
    ("capacity-2**62", "a.kp", f"1\n{BIG}\n5 6\n", rf"a.kp:2: capacity = {BIG}: the capacity must be < 2\*\*62"),
    (
        "capacity-past-int64",
        "b.in",
        "1\n0 5 6\n\n99999999999999999999999\n",
        r"b.in:4: capacity = 9+: the capacity must",
    ),
    ("capacity-neg", "a.kp", "1\n-1\n5 6\n", r"a.kp:2: capacity = -1: the capacity must be >= 0"),
    # signs
    ("n-negative", "a.kp", "-3\n10\n1 2\n", r"a.kp:1: n = -3: the number of items must be >= 0"),
    ("profit-neg", "a.kp", "2\n10\n1 2\n-3 4\n", r"a.kp:4: profit = -3: profits must be >= 0"),
    ("weight-neg", "p", "2\n1 2\n3 -2\n10\n", r"p:3: weight = -2: weights must be >= 0"),
    # n against the item lines
    (
        "kp-n-too-big",
        "a.kp",
        "5\n10\n1 2\n3 4\n",
        r"a.kp: expected 5 item lines 'profit weight', found 2: the file ends at line 4 \(n = 5 on line 1\)",
    ),
    (
        "kp-n-too-small",
        "a.kp",
        "2\n10\n\n1 2\n3 4\n5 6\n",
        r"a.kp:6: expected the end of the file after the 2 items \(n = 2 on line 1\), got '5 6'",
    ),
    (
        "jooken-n-too-big",
        "b.in",
        "3\n0 5 6\n1 7 8\n10\n",
        r"b.in:4: expected 'id profit weight' \(3 integers\) for item 3 of 3 \(n = 3 on line 1\), got '10'",
    ),
    (
        "jooken-n-too-small",
        "b.in",
        "1\n0 5 6\n1 7 8\n10\n",
        r"b.in:3: expected the capacity \(one integer\) after the 1 item \(n = 1 on line 1\), got '1 7 8'",
    ),
    ("n-past-int64", "a.kp", "10000000000000000000000\n10\n1 2\n", r"a.kp: expected 10+ item lines .* found 1: "),
    # blank and truncated files
    ("empty", "a.kp", "", r"a.kp:1: the file is empty: expected the number of items"),
    ("blank", "a.kp", "\n \t\n\r\n", r"a.kp:3: ended early: expected the number of items"),
    ("no-capacity", "a.kp", "3\n", r"a.kp:1: ended early: expected the capacity"),
    ("cut-mid-line", "a.kp", "3\n10\n1 2\n3 4\n5", r"a.kp:5: expected 'profit weight' \(2 integers\) for item 3"),
    ("empty-no-extension", "d", "", r"d:1: the file is empty or blank"),
    # not integers, and binary data
    ("float", "a.kp", "1\n10\n1.5 2\n", r"a.kp:3: expected 'profit weight' \(2 integers\)"),
    ("underscore", "a.kp", "1\n10\n1_000 2\n", r"a.kp:3: expected 'profit weight'"),
    (
        "non-ascii",
        "a.kp",
        "1\n10\n\xff\xfe 2\n",
        r"a.kp:3: expected 'profit weight', got byte 0xff in column 1: .*ASCII.*binary file",
    ),
    ("nul", "a.kp", "1\n10\n1\x00 2\n", r"a.kp:3: .*got '1\\x00 2' \(control characters: is this a binary"),
    ("utf8-no-extension", "d", "1\n\xc3\xa9 2\n10\n", r"d:2: expected an item line or the capacity, got byte 0xc3"),
    # lines end at \n, \r\n or \r (universal newlines), as before
    ("cr-lines", "a.kp", "3\r10\r\r1 2\r3 x\r5 6\r", r"a.kp:5: expected 'profit weight'"),
    ("crlf-lines", "a.kp", "3\r\n10\r\n1 2\r\n3 -4\r\n5 6\r\n", r"a.kp:4: weight = -4"),
]


@pytest.mark.parametrize("name, text, match", [c[1:] for c in TEXT_ERRORS], ids=[c[0] for c in TEXT_ERRORS])
def test_text_errors_name_file_and_line(tmp_path, name, text, match):
    path = write(tmp_path, name, text)
    with pytest.raises(FormatError) as exc:
        read_both(path)
    assert re.match(match, str(exc.value).removeprefix(f"{tmp_path}/")), str(exc.value)


def test_urandom_bytes_are_reported_by_line(tmp_path):
    data = random.Random(7).randbytes(5000)
    for name in ("g.kp", "g.in", "g"):
        path = write(tmp_path, name, data)
        with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}:\d+: .*binary file"):
            read_both(path)


@pytest.mark.parametrize(
    "value, ok",
    [(BIG - 1, True), (BIG, False), (0, True)],
    ids=["2**62-1", "2**62", "0"],
)
def test_weight_and_capacity_limits_are_exact(tmp_path, value, ok):
    for text in (f"1\n{value}\n5 6\n", f"1\n10\n5 {value}\n"):
        path = write(tmp_path, "a.kp", text)
        if ok:
            inst = read_both(path)
            assert value in (inst.capacity, inst.weights[0])
        else:
            with pytest.raises(FormatError, match=r"a.kp:[23]: .* must be < 2\*\*62"):
                read_both(path)
    inst = read_both(write(tmp_path, "b.kp", f"1\n10\n{INT64 - 1} 6\n"))
    assert inst.values.tolist() == [INT64 - 1]


def test_tolerated_layout(tmp_path):
    """Blank lines anywhere, tabs, CRLF, signs and leading zeros, a missing final newline, n = 0."""
    text = "\r\n 3 \r\n\t\r\n+010\r\n1\t2\r\n\r\n  -0 004 \r\n\f5 6\v\r\n\r\n"
    inst = read_both(write(tmp_path, "a.kp", text))
    assert inst.weights.tolist() == [2, 4, 6] and inst.values.tolist() == [1, 0, 5] and inst.capacity == 10
    inst = read_both(write(tmp_path, "b.in", "2\n0 1 2\n\n1 3 4\n7"))
    assert inst.weights.tolist() == [2, 4] and inst.capacity == 7
    for name, text in (("c.kp", "0\n5\n\n"), ("d.in", "0\n5\n")):
        inst = read_both(write(tmp_path, name, text))
        assert inst.weights.shape == inst.values.shape == (0,) and inst.capacity == 5


def items_text(fmt: str, w: np.ndarray, v: np.ndarray, capacity: int, rng) -> str:
    """A file of the format with random blank lines, CRLF endings, tabs and leading zeros (what the parsers skip)."""
    rows = [f"{i} {p} {x}" if fmt == "jooken" else f"{p}\t{x}" for i, (p, x) in enumerate(zip(v, w, strict=True))]
    rows[::7] = [f" 0{r} " for r in rows[::7]]
    lines = [str(len(w))] + ([str(capacity)] if fmt == "kp" else []) + rows + ([] if fmt == "kp" else [str(capacity)])
    blank = rng.random(len(lines)) < 0.05
    return "".join(line + ("\r\n\n" if b else "\n") for line, b in zip(lines, blank, strict=True))


@pytest.mark.parametrize("fmt, name", [("kp", "big.kp"), ("jooken", "big.in"), ("pisinger", "knapPI_big")])
def test_large_file_fast_parse_matches_reference(tmp_path, monkeypatch, rng, fmt, name):
    n = 100_000
    w = rng.integers(0, BIG, n, dtype=np.int64)
    w[:10] = [0, BIG - 1, 1, 2, 3, 4, 5, 6, 7, 8]
    v = rng.integers(0, INT64 - 1, n, dtype=np.int64, endpoint=True)
    v[:3] = [0, INT64 - 1, 1]
    path = write(tmp_path, name, items_text(fmt, w, v, BIG - 1, rng))
    ref = read_instance(path, fast=False)
    assert ref.weights.tolist() == w.tolist() and ref.values.tolist() == v.tolist() and ref.format == fmt

    def no_reference(*args):
        raise AssertionError("the fast path gave up on a well-formed file")

    monkeypatch.setattr(formats, "_read_text_slow", no_reference)
    tracemalloc.start()
    try:
        fast = read_instance(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert fast.weights.dtype == fast.values.dtype == np.int64
    assert np.array_equal(fast.weights, ref.weights) and np.array_equal(fast.values, ref.values)
    assert fast.capacity == ref.capacity == BIG - 1
    # The arrays loadtxt fills, plus a little; Python lists of tokens took about 30 times this.
    columns = 3 if fmt == "jooken" else 2
    assert peak < 1.5 * columns * 8 * n + 2**20, f"peak {peak} bytes for {n} items"


def mutate(r: random.Random, text: str, alphabet: str) -> str:
    """``text`` with 1 to 3 characters inserted, deleted or replaced (from ``alphabet``) at random places."""
    chars = list(text)
    for _ in range(r.randint(1, 3)):
        i = r.randrange(len(chars) + 1)
        op = r.random()
        if op < 0.4:
            chars.insert(i, r.choice(alphabet))
        elif op < 0.7 and i < len(chars):
            del chars[i]
        elif i < len(chars):
            chars[i] = r.choice(alphabet)
    return "".join(chars)


@pytest.mark.parametrize("seed", range(6))
def test_fast_path_never_accepts_what_the_reference_rejects(tmp_path, seed):
    """Mutate good files byte by byte: whenever the numpy path returns an instance, the reference returns the same."""
    r = random.Random(seed)
    alphabet = "0123456789+- \t\r\n\v\f\x1c\x00_.ex\xff"
    bases = {
        "kp": "3\n10\n1 2\n3 4\n\n5 6\n",
        "jooken": "3\n0 1 2\n1 3 4\n2 5 6\n10\n",
        "pisinger": "3\n1 2\n3 4\n5 6\n10\n",
    }
    accepted = 0
    for trial in range(150):
        fmt = r.choice(list(bases))
        text = mutate(r, bases[fmt], alphabet)
        path = write(tmp_path, f"t{trial}", text)
        try:
            fast = formats._read_text_fast(path, fmt)
        except ValueError:
            fast = None
        try:
            ref = formats._read_text_slow(path, fmt)
        except FormatError as exc:
            assert fast is None, f"{text!r}: numpy accepted what the reference rejects: {exc}"
            continue
        if fast is not None:
            accepted += 1
            assert fast.weights.tolist() == ref.weights.tolist(), repr(text)
            assert fast.values.tolist() == ref.values.tolist() and fast.capacity == ref.capacity
    assert accepted > 10  # the mutations leave enough files valid for the comparison to mean something


# JSON: id, content, the error
JSON_ERRORS = [
    (
        "truncated",
        '{"weights": [1], "values": [2], "capacity": 3',
        r"c.json:1:46: invalid JSON at line 1, column 46: .*the text ends there",
    ),  # fmt: skip
    ("empty", "", r"c.json:1:1: invalid JSON at line 1, column 1"),
    ("list", "[1, 2]", r"c.json:1: expected a JSON object with 'weights', 'values' and 'capacity'"),
    (
        "weights-not-list",
        '{\n"weights": 5, "values": [], "capacity": 1}',
        r"c.json:2: 'weights' must be a list of numbers",
    ),
    (
        "value-string",
        '{"weights": [1, 2],\n "values": [1,\n "2"], "capacity": 3}',
        r'c.json:3: values\[1\] = "2": values',
    ),
    ("weight-bool", '{"weights": [1, true], "values": [1, 2], "capacity": 3}', r"c.json:1: weights\[1\] = true"),
    ("weight-null", '{"weights": [1, null], "values": [1, 2], "capacity": 3}', r"c.json:1: weights\[1\] = null"),
    ("weight-nested", '{"weights": [[1]], "values": [1], "capacity": 3}', r"c.json:1: weights\[0\] = \[1\]"),
    (
        "weight-fraction",
        '{"weights": [1.5], "values": [1], "capacity": 3}',
        r"c.json:1: weights\[0\] = 1.5: weights must be whole",
    ),
    ("weight-negative", '{"weights":\n[1,\n\n-2], "values": [1, 1], "capacity": 3}', r"c.json:4: weights\[1\] = -2"),
    ("weight-2**62", f'{{"weights": [{BIG}], "values": [1], "capacity": 3}}', rf"c.json:1: weights\[0\] = {BIG}"),
    (
        "value-past-int64",
        f'{{"weights": [1], "values": [{INT64}], "capacity": 3}}',
        r"c.json:1: values\[0\] = 9223372036854775808",
    ),
    (
        "value-nan",
        '{"weights": [1], "values": [NaN], "capacity": 3}',
        r"c.json:1: values\[0\] = NaN: values must be finite",
    ),
    ("value-inf", '{"weights": [1], "values": [1e400], "capacity": 3}', r"c.json:1: values\[0\] = Infinity"),
    (
        "lengths",
        '{"weights": [1, 2], "values": [1],\n"capacity": 3}',
        r"c.json:1: 'values' has 1 entries but 'weights'",
    ),
    (
        "capacity-string",
        '{"weights": [1], "values": [1],\n"capacity": "3"}',
        r'c.json:2: capacity = "3": the capacity must be',
    ),
    ("capacity-fraction", '{"weights": [1], "values": [1], "capacity": 2.5}', r"c.json:1: capacity = 2.5"),
    ("capacity-2**62", f'{{"weights": [1], "values": [1], "capacity": {BIG}}}', rf"c.json:1: capacity = {BIG}"),
    (
        "name-number",
        '{"weights": [1], "values": [1], "capacity": 3,\n\n "name": 7}',
        r"c.json:3: name = 7: expected a str",
    ),
    ("not-utf8", b'{"weights": [1],\n"values": [1], "name": "\xff"}', r"c.json:2: byte 0xff is not UTF-8"),
    (
        "deep",
        '{"weights": [1], "values": [1],\n\n"capacity": ' + "[" * 100_000 + "]" * 100_000 + "}",
        r"c.json:3: invalid JSON",
    ),
    ("deep-unclosed", "[" * 100_000, r"c.json:1: invalid JSON"),
    (
        "5000-digits",
        '{"weights": [1],\n"values": [' + "1" * 5000 + '], "capacity": 1}',
        r"c.json:2: a number with more digits",
    ),
    ("missing-key", '{"weights": [1], "values": [1]}', r"c.json:1: expected a JSON object .*; 'capacity' missing"),
]


@pytest.mark.parametrize("text, match", [c[1:] for c in JSON_ERRORS], ids=[c[0] for c in JSON_ERRORS])
def test_json_errors_name_file_and_line(tmp_path, text, match):
    path = write(tmp_path, "c.json", text.encode() if isinstance(text, str) else text)
    with pytest.raises(FormatError) as exc:
        read_instance(path)
    assert re.match(match, str(exc.value).removeprefix(f"{tmp_path}/")), str(exc.value)


def test_json_accepts_what_the_library_accepts(tmp_path):
    data = {"name": "é", "weights": [1, 2.0, 0], "values": [1.5, 2, 0], "capacity": 10.0, "extra": None}
    inst = read_instance(write(tmp_path, "c.json", json.dumps(data, ensure_ascii=False).encode()))
    assert inst.weights.dtype == np.int64 and inst.weights.tolist() == [1, 2, 0]
    assert inst.values.dtype == np.float64 and inst.values.tolist() == [1.5, 2.0, 0.0]
    assert inst.capacity == 10 and type(inst.capacity) is int and inst.name == "é"
    inst = read_instance(write(tmp_path, "d", f'  {{"weights": [{BIG - 1}], "values": [{INT64 - 1}], "capacity": 0}}'))
    assert inst.format == "json" and inst.values.dtype == np.int64 and inst.values.tolist() == [INT64 - 1]


# ---------------------------------------------------------------- Pisinger's own files (pisinger-csv)


# Two instances; line numbers below refer to this text.
TWO = (
    "knapPI_1_3_1000_1\nn 3\nc 10\nz 13\ntime 0.00\n1,6,4,1\n2,7,6,1\n3,5,5,0\n-----\n\n"  # lines 1-10
    "knapPI_1_3_1000_2\nn 3\nc 5\nz 7\ntime 0.00\n1,6,4,0\n2,7,5,1\n3,1,1,0\n-----\n"  # lines 11-19
)


def read_all_both(path: Path, fmt: str = "auto"):
    """Every instance read with the numpy rows and line by line, checked equal (or the same error from both)."""
    outcomes = []
    for fast in (True, False):
        try:
            outcomes.append(formats.read_instances(path, fmt, fast=fast))
        except FormatError as exc:
            outcomes.append(exc)
    fast, ref = outcomes
    if isinstance(ref, FormatError):
        assert isinstance(fast, FormatError) and str(fast) == str(ref), f"numpy: {fast!r}, reference: {ref}"
        raise ref
    assert not isinstance(fast, FormatError), fast
    assert len(fast) == len(ref)
    for a, b in zip(fast, ref, strict=True):
        assert a.weights.dtype == a.values.dtype == np.int64 and a.solution.dtype == bool
        for field in ("weights", "values", "solution"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
        assert (a.capacity, a.name, a.format, a.optimum, a.line) == (b.capacity, b.name, b.format, b.optimum, b.line)
    return fast


def test_real_knappi_sample_parses_and_its_z_and_x_hold(tmp_path):
    inst = read_instance(write(tmp_path, "knapPI_1_50_1000.csv", KNAPPI_1_50_1000_1))
    assert inst.format == "pisinger-csv" and inst.name == "knapPI_1_50_1000_1" and inst.line == 1
    assert inst.capacity == 995 and inst.optimum == 8373
    assert len(inst.weights) == 50 and inst.values[:2].tolist() == [94, 506] and inst.weights[:2].tolist() == [485, 326]
    assert reference_dp(inst.weights.tolist(), inst.values.tolist(), inst.capacity)[0] == 8373
    known = formats.known_solution(inst)
    assert known == {"items": 11, "weight": 971, "value": 8373, "problem": None}
    assert np.flatnonzero(inst.solution).tolist() == [6, 10, 12, 13, 23, 25, 30, 32, 37, 38, 48]


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"newline": "\r\n", "blank": "\r\n\r\n"},
        {"time": False, "last_separator": False},
        {"blank": ""},
        {"newline": " \t\n", "blank": "\n  \n\n"},
    ],
    ids=["as-written", "crlf", "no-time-no-last-dashes", "no-blank-lines", "trailing-whitespace"],
)
def test_every_instance_is_read_with_its_z_and_x(tmp_path, rng, layout):
    cases = brute_forced(rng, 6)
    text = knappi_text(cases, **layout)
    insts = read_all_both(write(tmp_path, "many.csv", text))
    assert [inst.name for inst in insts] == [c[0] for c in cases]
    name_lines = [i for i, line in enumerate(text.splitlines(), 1) if line.startswith("knapPI")]
    for inst, line, (_, w, v, capacity, z, x) in zip(insts, name_lines, cases, strict=True):
        assert inst.format == "pisinger-csv" and inst.line == line
        assert inst.weights.tolist() == w and inst.values.tolist() == v and inst.capacity == capacity
        assert inst.optimum == z and inst.solution.tolist() == [bool(b) for b in x]
        assert formats.known_solution(inst) == {
            "items": sum(x),
            "weight": sum(np.array(w)[inst.solution].tolist()),
            "value": z,
            "problem": None,
        }


def test_spaces_around_fields_and_blank_lines_between_rows(tmp_path):
    text = TWO.replace("2,7,6,1\n", "\n 2 ,\t7, 6 ,1  \n\n").replace("3,1,1,0", "+3,01,1,-0")
    a, b = read_all_both(write(tmp_path, "t.csv", text))
    assert a.weights.tolist() == [4, 6, 5] and a.values.tolist() == [6, 7, 5] and a.solution.tolist() == [1, 1, 0]
    assert b.line == 13 and b.values.tolist() == [6, 7, 1] and b.solution.tolist() == [0, 1, 0]


def lines_of(text: str, line: int, new: str | None) -> str:
    """``text`` with its 1-based ``line`` replaced by ``new`` (None: removed)."""
    lines = text.split("\n")
    lines[line - 1 : line] = [] if new is None else [new]
    return "\n".join(lines)


I1, I2 = "instance knapPI_1_3_1000_1: ", "instance knapPI_1_3_1000_2: "
# id, the file, the error after "f.csv:" (a regex)
CSV_ERRORS = [
    ("fewer-rows-than-n", lines_of(TWO, 18, None), rf"18: {I2}'-----' after 2 item rows, but n = 3 on line 12"),
    (
        "more-rows-than-n",
        lines_of(TWO, 8, "3,5,5,0\n4,1,1,0"),
        rf"9: {I1}expected '-----' after the 3 item rows \(n = 3 on line 2\), got '4,1,1,0'",
    ),
    (
        "file-ends-before-n-rows",
        lines_of(TWO, 19, None).replace("n 3\nc 5", "n 4\nc 5"),
        rf"18: {I2}ended early: expected 4 item rows 'i,p,w,x', found 3 \(n = 4 on line 12\)",
    ),
    (
        "not-an-integer",
        lines_of(TWO, 7, "2,7.5,6,1"),
        rf"7: {I1}expected 'i,p,w,x' \(4 integers separated by commas\) for item 2 of 3 \(n = 3 on line 2\), "
        "got '2,7.5,6,1'",
    ),
    ("three-fields", lines_of(TWO, 17, "2,7,5"), rf"17: {I2}expected 'i,p,w,x' .* for item 2 of 3 .*, got '2,7,5'"),
    (
        "underscore",
        lines_of(TWO, 17, "2,7_0,5,1"),
        rf"17: {I2}expected 'i,p,w,x' .* for item 2 of 3 .*, got '2,7_0,5,1'",
    ),
    ("negative-weight", lines_of(TWO, 17, "2,7,-5,1"), rf"17: {I2}weight = -5: weights must be >= 0"),
    ("negative-profit", lines_of(TWO, 6, "1,-6,4,1"), rf"6: {I1}profit = -6: profits must be >= 0"),
    ("weight-2**62", lines_of(TWO, 6, f"1,6,{BIG},1"), rf"6: {I1}weight = {BIG}: weights must be < 2\*\*62 = {BIG}"),
    (
        "profit-past-int64",
        lines_of(TWO, 6, f"1,{INT64},4,1"),
        rf"6: {I1}profit = {INT64}: profits must be < 2\*\*63 = {INT64} \(int64\)",
    ),
    ("x-not-0-or-1", lines_of(TWO, 16, "1,6,4,2"), rf"16: {I2}x = 2: x \(the known solution\) must be 0 or 1"),
    ("index-out-of-order", lines_of(TWO, 17, "3,7,5,1"), rf"17: {I2}i = 3, expected 2: rows go from 1 to n in order"),
    ("index-from-0", lines_of(TWO, 6, "0,6,4,1"), rf"6: {I1}i = 0, expected 1: rows go from 1 to n in order"),
    (
        "n-not-integer",
        lines_of(TWO, 12, "n three"),
        rf"12: {I2}expected 'n' and one integer \(the number of items\), got 'n three'",
    ),
    ("n-negative", lines_of(TWO, 2, "n -3"), rf"2: {I1}n = -3: the number of items must be >= 0"),
    ("c-2**62", lines_of(TWO, 13, f"c {BIG}"), rf"13: {I2}capacity = {BIG}: the capacity must be < 2\*\*62 = {BIG}"),
    ("z-negative", lines_of(TWO, 4, "z -1"), rf"4: {I1}z = -1: the known optimum must be >= 0"),
    (
        "no-c-line",
        lines_of(TWO, 3, None),
        rf"5: {I1}expected a line 'c <integer>' \(the capacity\) before the item rows, got '1,6,4,1'",
    ),
    ("header-twice", lines_of(TWO, 14, "z 7\nn 3"), rf"15: {I2}a second 'n' line: the first is line 12"),
    (
        "no-dashes-between",
        lines_of(TWO, 9, None),
        rf"10: {I1}expected '-----' after the 3 item rows \(n = 3 on line 2\), got 'knapPI_1_3_1000_2'",
    ),
    ("integer-name", lines_of(TWO, 11, "17"), r"11: expected an instance name such as knapPI_1_50_1000_1, got '17'"),
    (
        "binary",
        lines_of(TWO, 17, "2,7,\xff5,1"),
        rf"17: {I2}expected 'i,p,w,x' .*, got byte 0xff in column 5: instance files are ASCII text .*",
    ),
]


@pytest.mark.parametrize("text, match", [c[1:] for c in CSV_ERRORS], ids=[c[0] for c in CSV_ERRORS])
def test_pisinger_csv_errors_name_file_line_and_instance(tmp_path, text, match):
    path = write(tmp_path, "f.csv", text)
    with pytest.raises(FormatError) as exc:
        read_all_both(path)
    assert re.fullmatch(match, str(exc.value).removeprefix(f"{path}:")), str(exc.value)


def test_select_by_name_and_index(tmp_path):
    path = write(tmp_path, "t.csv", TWO)
    assert read_instance(path, instance="knapPI_1_3_1000_2").capacity == 5
    assert read_instance(path, instance=2).capacity == read_instance(path, instance="2").capacity == 5
    assert read_instance(path, instance=1).name == "knapPI_1_3_1000_1"
    with pytest.raises(ValueError, match=r"t.csv holds 2 instances \(knapPI_1_3_1000_1, knapPI_1_3_1000_2\): choose"):
        read_instance(path)
    with pytest.raises(ValueError, match=r"instance 3: the file holds 2 instances, numbered 1 to 2"):
        read_instance(path, instance=3)
    with pytest.raises(ValueError, match=r"instance 0: the file holds 2 instances"):
        read_instance(path, instance="0")
    with pytest.raises(ValueError, match=r"no instance is named 'knapPI_1_3_1000_3'; it holds knapPI_1_3_1000_1, "):
        read_instance(path, instance="knapPI_1_3_1000_3")
    twice = write(tmp_path, "twice.csv", TWO.replace("_1000_2", "_1000_1"))
    with pytest.raises(ValueError, match=r"2 instances are named 'knapPI_1_3_1000_1' \(lines 1, 11\): .* \(1, 2\)"):
        read_instance(twice, instance="knapPI_1_3_1000_1")
    assert read_instance(twice, instance=2).capacity == 5
    # a single-instance file answers to its one index and its name too
    kp = write(tmp_path, "a.kp", "1\n10\n5 6\n")
    assert read_instance(kp, instance=1).name == read_instance(kp, instance="a").name == "a"


def test_known_solution_reports_what_is_wrong(tmp_path):
    over = read_instance(write(tmp_path, "t.csv", TWO), instance=1)
    assert formats.known_solution(over)["problem"] is None
    bad = lines_of(lines_of(TWO, 8, "3,5,5,1"), 17, "2,7,5,0")  # instance 1: 15 > 10; instance 2: worth 0
    one, two = read_instance(write(tmp_path, "b.csv", bad), instance=1), read_instance(tmp_path / "b.csv", instance=2)
    assert formats.known_solution(one) == {
        "items": 3,
        "weight": 15,
        "value": 18,
        "problem": "weighs 15, over the capacity c = 10 and is worth 18, not the file's z = 13",
    }
    assert formats.known_solution(two)["problem"] == "is worth 0, not the file's z = 7"
    assert formats.known_solution(read_instance(write(tmp_path, "a.kp", "1\n10\n5 6\n"))) is None


def test_pisinger_csv_is_detected_by_content(tmp_path):
    for name in ("knapPI_1_50_1000.csv", "noext", "x.in", "x.txt"):
        assert formats.detect(write(tmp_path, name, TWO)) == "pisinger-csv"
    assert formats.detect(write(tmp_path, "h", "\n\nknapPI_1\r\nc 5\r\nn 0\r\n")) == "pisinger-csv"  # any header first
    assert read_instance(tmp_path / "h").weights.shape == (0,)
    with pytest.raises(
        FormatError, match=r"cannot tell the format .* pass --format kp, jooken, pisinger, pisinger-csv or"
    ):
        formats.detect(write(tmp_path, "d", "knapPI 1\nn 5\n"))


def test_pisinger_csv_fast_rows_match_reference(tmp_path, monkeypatch, rng):
    """20 instances of 500 items: the numpy rows, never falling back, read what the reference reads."""
    cases = []
    for j in range(1, 21):
        w, v, x = rng.integers(0, BIG, 500), rng.integers(0, INT64 - 1, 500, endpoint=True), rng.integers(0, 2, 500)
        w[:2], v[:2] = [0, BIG - 1], [0, INT64 - 1]
        cases.append((f"knapPI_big_{j}", w.tolist(), v.tolist(), BIG - 1, int(rng.integers(0, 2**40)), x.tolist()))
    path = write(tmp_path, "big.csv", knappi_text(cases, newline="\r\n"))
    ref = formats.read_instances(path, fast=False)

    def no_reference(*args):
        raise AssertionError("the numpy rows gave up on a well-formed instance")

    monkeypatch.setattr(formats, "_csv_rows", no_reference)
    fast = formats.read_instances(path)
    for a, b, case in zip(fast, ref, cases, strict=True):
        assert a.weights.tolist() == b.weights.tolist() == case[1] and a.values.tolist() == b.values.tolist() == case[2]
        assert a.solution.tolist() == b.solution.tolist() and (a.line, a.optimum) == (b.line, b.optimum)


@pytest.mark.parametrize("seed", range(4))
def test_pisinger_csv_fast_rows_never_accept_what_the_reference_rejects(tmp_path, seed):
    """Mutate a good file byte by byte: the numpy rows and the reference read the same, or fail the same."""
    r = random.Random(seed)
    alphabet = "0123456789+-, \t\r\n\v\x1c_.xnc\xff"
    same = 0
    for trial in range(120):
        try:
            read_all_both(write(tmp_path, f"t{trial}.csv", mutate(r, TWO, alphabet)), "pisinger-csv")
            same += 1
        except FormatError:
            pass
    assert same > 10  # enough mutants stay valid for the comparison to mean something

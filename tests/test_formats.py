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

import knapsack_gpu.formats as formats
from knapsack_gpu.formats import FormatError, read_instance

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
        text = list(bases[fmt])
        for _ in range(r.randint(1, 3)):
            i = r.randrange(len(text) + 1)
            op = r.random()
            if op < 0.4:
                text.insert(i, r.choice(alphabet))
            elif op < 0.7 and i < len(text):
                del text[i]
            elif i < len(text):
                text[i] = r.choice(alphabet)
        path = write(tmp_path, f"t{trial}", "".join(text))
        try:
            fast = formats._read_text_fast(path, fmt)
        except ValueError:
            fast = None
        try:
            ref = formats._read_text_slow(path, fmt)
        except FormatError as exc:
            assert fast is None, f"{''.join(text)!r}: numpy accepted what the reference rejects: {exc}"
            continue
        if fast is not None:
            accepted += 1
            assert fast.weights.tolist() == ref.weights.tolist(), repr("".join(text))
            assert fast.values.tolist() == ref.values.tolist() and fast.capacity == ref.capacity
    assert accepted > 10  # the mutations leave enough files valid for the comparison to mean something


# JSON: id, content, the error
JSON_ERRORS = [
    ("truncated", '{"weights": [1], "values": [2], "capacity": 3', r"c.json:1: invalid JSON"),
    ("empty", "", r"c.json:1: invalid JSON"),
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

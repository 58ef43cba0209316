"""The CLI's progress bar in a real terminal (issue 51): ``knapsack-gpu solve`` in a pseudo-terminal, its bytes played
through a small terminal emulator; the final screen holds the result on lines of its own and no bar left short of
100%. KNAPSACK_GPU_PROGRESS_DELAY=0 draws the bar from the first phase, so nothing here depends on the machine's
speed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import HANG_S

import knapsack_gpu
from knapsack_gpu import generate
from knapsack_gpu.cli import main
from knapsack_gpu.formats import write_json

pty = pytest.importorskip("pty", reason="POSIX terminals only")
pytest.importorskip("tqdm")

import fcntl  # noqa: E402  (POSIX, as pty)
import select  # noqa: E402
import struct  # noqa: E402
import termios  # noqa: E402

ROWS, COLS = 24, 300  # wide enough for the selection a short instance prints
PHASES = ("states", "dense pass", "Hirschberg")
BAR = re.compile(rf"({'|'.join(PHASES)}): ")
CSI = re.compile(r"\x1b\[([0-9;?]*)([@-~])")


def screen(text: str, cols: int = COLS) -> list[str]:
    """What a terminal ``cols`` wide shows after ``text``: carriage returns, line feeds, backspaces, cursor moves
    (ESC[nA/B/C/D), erases (ESC[K, ESC[2K), a wrap past the last column; other escapes change nothing shown."""
    lines: list[list[str]] = [[]]
    row = col = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":
            m = CSI.match(text, i)
            if m is None:  # a two-character escape (ESC 7, ESC =, ...)
                i += 2
                continue
            arg, cmd = m.groups()
            n = int(arg) if arg.isdigit() else 1
            if cmd == "A":
                row = max(0, row - n)
            elif cmd == "B":
                row += n
            elif cmd == "C":
                col = min(cols - 1, col + n)
            elif cmd == "D":
                col = max(0, col - n)
            elif cmd == "K":
                while len(lines) <= row:
                    lines.append([])
                if arg in ("", "0"):
                    del lines[row][col:]
                elif arg == "2":
                    lines[row] = []
                else:
                    lines[row][:col] = [" "] * min(col, len(lines[row]))
            i = m.end()
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row, col = row + 1, 0
        elif ch == "\b":
            col = max(0, col - 1)
        elif ch >= " ":
            if col >= cols:  # the pending wrap of a full line
                row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row]
            line.extend(" " * (col - len(line)))
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    lines.extend([] for _ in range(row + 1 - len(lines)))  # the cursor's line, empty or not
    return ["".join(line).rstrip() for line in lines]


def test_the_emulator_reads_carriage_returns_erases_and_wraps():
    assert screen("abc\rX\n") == ["Xbc", ""]
    assert screen("bar 10%\r       \rresult\n") == ["result", ""]
    assert screen("bar 0%result\n") == ["bar 0%result", ""]
    assert screen("one\ntwo\x1b[A\rONE\x1b[K\n") == ["ONE", "two"]
    assert screen("x" * 5 + "\r\nok", cols=5) == ["xxxxx", "ok"]  # a full line does not wrap before its newline
    assert screen("x" * 6, cols=5) == ["xxxxx", "x"]


def run_in_pty(argv: list[str], env: dict[str, str]) -> tuple[bytes, int]:
    """Run ``argv`` with stdin, stdout and stderr on one pseudo-terminal ROWS x COLS; everything it showed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    try:
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    finally:
        os.close(slave)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], HANG_S)  # a guard against a hang, not a budget
            if not ready:
                proc.kill()
                pytest.fail(f"{argv} printed nothing for {HANG_S} s")
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: every holder of the terminal's other side has closed it
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=HANG_S)
    return bytes(out), proc.returncode


class Phases:
    def __init__(self):
        self.names = []

    def start(self, total, unit, phase):
        self.names.append(phase)

    def update(self, done):
        pass


def _circle():
    return generate.FAMILIES["circle"](np.random.default_rng(1), 400, R=10**6, fraction=0.5)


def _jooken():
    return generate.jooken(np.random.default_rng(0), 200, 10**5, 6, 0.2, 0.001, 100)


CASES = {
    # two runs of the states engine (its first budget, then more), no total: the bar is reset between them
    "states-twice": (_circle, {}, ["states", "states"]),
    # one pruned dense pass, an exact total
    "dense-pass": (_jooken, {"strategy": "pruned"}, ["dense pass"]),
    # Hirschberg's passes under a memory limit: an estimated total the solve may end short of
    "hirschberg": (_jooken, {"strategy": "pruned", "memory_limit": 2_000_000}, ["Hirschberg"]),
}


@pytest.mark.parametrize("case", CASES)
def test_the_bar_in_a_terminal_is_cleared_before_the_result(tmp_path, monkeypatch, capsys, case):
    make, kwargs, phases = CASES[case]
    w, v, c = make()
    seen = Phases()
    knapsack_gpu.solve(w, v, c, device="cpu", progress=seen, **kwargs)
    assert seen.names == phases, "the instance no longer takes the phases this case is about: pick another"

    path = tmp_path / "instance.json"
    write_json(path, w, v, c, name="pty")
    strategy = kwargs.get("strategy", "auto")
    monkeypatch.setenv("KNAPSACK_GPU_STRATEGY", strategy)
    argv = ["solve", str(path), "--device", "cpu"]
    if "memory_limit" in kwargs:
        argv += ["--memory-limit", str(kwargs["memory_limit"])]
    assert main([*argv, "--no-progress"]) == 0
    plain = [line for line in capsys.readouterr().out.splitlines() if line]

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(KNAPSACK_GPU_PROGRESS_DELAY="0", KNAPSACK_GPU_STRATEGY=strategy, TERM="xterm")
    raw, rc = run_in_pty([sys.executable, "-m", "knapsack_gpu", *argv], env)
    assert rc == 0, raw.decode(errors="replace")
    text = raw.decode("utf-8", errors="replace")
    for phase in set(phases):
        assert f"{phase}: " in text, f"no {phase} bar was drawn: {text!r}"  # else this would test nothing
    shown = [line for line in screen(text) if line and not line.startswith("knapsack-gpu:")]  # compile notice
    left = [line for line in shown if BAR.search(line) and "100%|" not in line]
    assert not left, f"a bar left on the screen: {left}\n{text!r}"
    # the result's own lines, each from the first column: the same labels as without a bar, the same optimum
    assert [line.split()[0] for line in shown] == [line.split()[0] for line in plain], f"{shown}\n{text!r}"
    assert shown[0] == plain[0] and shown[1] == plain[1]  # instance ... and optimum ...

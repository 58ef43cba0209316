"""Shared fixtures: seeded randomness, the devices and backends to run on, and an oracle check."""

from __future__ import annotations

import os
from pathlib import Path

import torch

# Triton kernels run on CPU tensors through its interpreter when there is no GPU. The flag is read when a kernel is
# decorated, so it must be set before anything imports knapsack_gpu.kernels.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# A search past the interpreted trial compiles in the foreground in tests (no background compile processes left
# running after a test; tests/test_jit.py sets it back where it tests the background compile).
os.environ.setdefault("KNAPSACK_GPU_COMPILE_IN_BACKGROUND", "0")

# Child processes import this tree's package, not whichever knapsack_gpu is installed: README blocks run from a
# temporary folder and benchmarks/child.py from benchmarks/, where an editable install of another checkout would win.
_ROOT = str(Path(__file__).resolve().parent.parent)
os.environ["PYTHONPATH"] = os.pathsep.join([_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])

import random  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import knapsack_gpu.backends as backends  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
HAS_TRITON = backends.have_triton()

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
# Where the Triton backend runs: CUDA where there is one (the interpreter is off there), else CPU tensors in its
# interpreter. A test that names triton takes its device from here; the other backends run on the CPU.
TRITON_DEVICE = "cuda" if HAS_CUDA else "cpu"


def device_for(backend: str) -> str:
    return TRITON_DEVICE if backend == "triton" else "cpu"


# (device, backend) pairs that solve at full speed. Triton on the CPU runs in its interpreter: tested separately
# at small sizes (tests/test_kernels.py).
FAST = [("cpu", "numpy"), ("cpu", "torch")] + ([("cuda", "torch")] if HAS_CUDA else [])
if HAS_CUDA and HAS_TRITON:
    FAST.append(("cuda", "triton"))
FAST_IDS = [f"{d}-{b}" for d, b in FAST]

# No test may depend on how fast the machine is: a subprocess or a process group is given this long only so that a
# hang fails its test instead of the whole run. A guard, never a budget: the slowest child here (the device check's
# smoke run) took 31 s wall on this 2-core VM at a load average near 3, so even a much busier machine stays inside it.
HANG_S = 1800

try:  # hypothesis' deadline and its too_slow health check time each example: off by default, not only where set
    from hypothesis import HealthCheck, settings

    settings.register_profile("no-clock", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("no-clock")
except ImportError:  # the test extra: only tests/test_hypothesis.py and tests/test_states.py need it
    pass


# Under pytest-xdist (pyproject.toml's addopts: -n 2 --dist loadgroup) these files' tests run on one worker, each file
# as one unit of work: their tests share a module-scoped fixture that is costly to set up (test_distributed starts its
# gloo process groups, tens of seconds; test_partitioner compiles an MLP in a child), which would otherwise be set up
# once per worker. Paths as xdist's node ids spell them (from the rootdir).
ONE_WORKER = ("tests/test_distributed.py", "tests/test_partitioner.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup, with the files of ONE_WORKER as groups. (The xdist_group mark alone does not group under
    pytest 9.2: xdist 3.8 renames a node id pytest no longer reads, pytest-xdist issue 1386; the marks still count.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class Scheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in ONE_WORKER else super()._split_scope(nodeid)

    return Scheduling(config, log)


@pytest.fixture(autouse=True, scope="session")
def _compiled_kernels():
    """Default solves run the compiled kernels (compiling them where numba's disk cache lacks them), whatever that
    cache holds: the interpreted stand-in for kernels not cached yet is tested on its own (tests/test_jit.py)."""
    from knapsack_gpu import numba_jit

    numba_jit.end_trial()


@pytest.fixture(autouse=True)
def _seed():
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=FAST, ids=FAST_IDS)
def target(request):
    """(device, backend) to solve on."""
    return request.param

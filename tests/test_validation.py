"""Bad input gets a TypeError/ValueError that names the argument (and the index)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import knapsack_gpu


@pytest.mark.parametrize(
    "weights, values, capacity, error, match",
    [
        ([1, 2], [1], 3, ValueError, "weights has 2 entries but values has 1"),
        ([[1, 2]], [[1, 2]], 3, ValueError, r"weights must be 1-D, got shape \(1, 2\)"),
        (5, [1], 3, TypeError, "weights must be a list"),
        ([1, -2], [1, 1], 3, ValueError, r"weights\[1\] = -2: weights must be >= 0"),
        ([1, 2], [1, -1], 3, ValueError, r"values\[1\] = -1: values must be >= 0"),
        ([1, 2], [1.0, float("nan")], 3, ValueError, r"values\[1\] = nan: values must be finite"),
        ([1, 2], [float("inf"), 1.0], 3, ValueError, r"values\[0\] = inf: values must be finite"),
        ([1, float("nan")], [1, 1], 3, ValueError, r"weights\[1\] = nan"),
        ([1, 2], [1, 1], -1, ValueError, "capacity = -1: capacity must be >= 0"),
        ([1, 2], [1, 1], float("nan"), ValueError, "capacity must be (a )?finite"),
        ([1, 2], [1, 1], "3", TypeError, "capacity must be a(n integer| number)"),
        ([1, 2], [1, 1], True, TypeError, "capacity must be a(n integer| number)"),
        ([1, "a"], [1, 1], 3, TypeError, r"weights\[1\] = 'a' is not a number"),
        ([1, 2], [1, None], 3, TypeError, r"values\[1\] = None is not a number"),
        (["a", "b"], [1, 1], 3, TypeError, r"weights\[0\] = 'a' is not a number"),
        ([True, False], [1, 1], 3, TypeError, r"weights\[0\] = True is not a number"),
        (np.array([True, False]), [1, 1], 3, TypeError, "weights must be numbers, got booleans"),
        ([1, 2], [1, 2**70], 3, ValueError, r"values\[1\] = \d+ does not fit in int64"),
        ([1, 2**63], [1, 1], 3, ValueError, r"weights\[1\] = \d+ does not fit in int64"),
        ([1, 2**62], [1, 1], 3, ValueError, r"weights\[1\] = \d+: weights must be < 2\*\*62"),
        ([1, 2], [1, 1], 2**62, ValueError, "capacity must be < 2"),
        (np.array([1, 2]), np.array([1 + 1j, 2]), 3, TypeError, "not a number"),
        (torch.tensor([1, 2]), torch.tensor([1.0, -3.0]), 3, ValueError, r"values\[1\] = -3.0"),
        ([1, 2], [1, 1], torch.tensor([3, 4]), ValueError, "capacity must be a single number"),
    ],
    ids=lambda x: None,
)
def test_bad_input(weights, values, capacity, error, match):
    with pytest.raises(error, match=match):
        knapsack_gpu.solve(weights, values, capacity, device="cpu")
    if error is not TypeError or "capacity" not in match:
        with pytest.raises(error, match=match):
            knapsack_gpu.profile(weights, values, capacity, device="cpu")


def test_profile_takes_whole_number_weights_and_says_how_solve_takes_floats():
    """A profile's capacities are its cells: fractional weights and capacities are refused there by name, and the
    message says that solve() takes them exactly."""
    with pytest.raises(ValueError, match=r"weights\[1\] = 2.5: weights must be whole numbers here .*2\*\*24"):
        knapsack_gpu.profile([1, 2.5], [1, 1], 3, device="cpu")
    with pytest.raises(ValueError, match="capacity = 2.5: capacity must be a whole number"):
        knapsack_gpu.profile([1, 2], [1, 1], 2.5, device="cpu")


@pytest.mark.parametrize(
    "weights, capacity, match",
    [
        ([1e-30, 1.0], 3, r"weights\[1\] = 1.0: float weights are solved exactly.*weights\[0\] = 1e-30 needs 2\*\*1"),
        ([0.5, 2.0**61], 3, r"weights\[1\] = 2.30584.*needs 2\*\*1, which takes this one to 2\*\*62"),
        ([0.5, float("inf")], 3, r"weights\[1\] = inf: weights must be finite"),
        ([0.5, -1.5], 3, r"weights\[1\] = -1.5: weights must be >= 0"),
        ([1, 2], -0.5, "capacity = -0.5: capacity must be >= 0"),
        ([0.5, 2.0**60, 2.0**60, 2.0**60], 2.0**61 * 1.5, r"capacity = .*: at the weights' exact scale 2\*\*1 it is"),
    ],
)
def test_float_weights_past_what_the_engines_hold(weights, capacity, match):
    """Float weights are solved at their exact scale; where that scale passes 2**62 the error names the entry, the
    one that sets the scale, and what to do."""
    with pytest.raises(ValueError, match=match):
        knapsack_gpu.solve(weights, [1] * len(weights), capacity, device="cpu")
    with pytest.raises(ValueError, match=match):
        knapsack_gpu.plan_for(weights, [1] * len(weights), capacity, device="cpu")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"device": "tpu"}, ValueError, "device='tpu'"),
        ({"device": 3}, TypeError, "device must be"),
        ({"backend": "cupy"}, ValueError, "backend='cupy'; choose one of"),
        ({"memory_limit": -5}, ValueError, "memory_limit = -5"),
        ({"memory_limit": 1.5}, TypeError, "memory_limit must be a number of bytes or a size"),
        ({"dtype": torch.float16}, ValueError, "dtype=torch.float16 is not supported"),
        ({"dtype": "int32"}, ValueError, "is not supported"),
    ],
)
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        knapsack_gpu.solve([1, 2], [3, 4], 2, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_requested_without_cuda():
    with pytest.raises(ValueError, match="CUDA is not available"):
        knapsack_gpu.solve([1, 2], [3, 4], 2, device="cuda")
    with pytest.raises(ValueError, match="backend='numpy' runs on the CPU only"):
        knapsack_gpu.backends.resolve_backend("numpy", torch.device("cuda"), torch.int32)


def test_integer_dtype_refused_when_it_could_overflow_or_round():
    with pytest.raises(ValueError, match="needs whole-number values"):
        knapsack_gpu.solve([1, 2], [1.5, 2.0], 3, dtype=torch.int64, device="cpu")
    with pytest.raises(ValueError, match="would overflow"):
        knapsack_gpu.solve([1, 2], [2**30, 2**30 + 5], 3, dtype=torch.int32, device="cpu")


def test_backend_env_override(monkeypatch):
    monkeypatch.setenv(knapsack_gpu.backends.ENV_BACKEND, "torch")
    assert knapsack_gpu.solve([1, 2, 3], [3, 4, 5], 3, device="cpu").stats["backend"] == "torch"
    monkeypatch.setenv(knapsack_gpu.backends.ENV_BACKEND, "bogus")
    with pytest.raises(ValueError, match="KNAPSACK_GPU_BACKEND='bogus'"):
        knapsack_gpu.solve([1, 2, 3], [3, 4, 5], 3, device="cpu")


def test_accepts_lists_tuples_arrays_tensors_and_scalar_types():
    expect = knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8, device="cpu")
    for w, v, c in [
        ((3, 4, 5), (30, 50, 60), 8),
        (np.array([3, 4, 5], dtype=np.uint16), np.array([30, 50, 60], dtype=np.int8), np.int64(8)),
        (torch.tensor([3, 4, 5]), torch.tensor([30.0, 50.0, 60.0]), torch.tensor(8)),
        ([3.0, 4.0, 5.0], [30, 50, 60], 8.0),
        (np.array([3, 4, 5], dtype=object), [30, 50, 60], 8),
    ]:
        sol = knapsack_gpu.solve(w, v, c, device="cpu")
        assert (sol.value, sol.selected) == (expect.value, expect.selected)


def test_the_compiled_checks_agree_with_numpys():
    """make_instance checks contiguous int64 weights with int64 or float64 values in one compiled pass where the
    states engine's kernels are loaded: it passes exactly the arrays numpy's checks pass (boundary entries at random
    places), makes of them what numpy's make (whole float values as int64 up to 2**53), and a bad entry still gets
    numpy's message naming it."""
    from knapsack_gpu import jit, problem
    from knapsack_gpu.states import modes

    jit.warm("if")  # loads the compiled kernels (where numba is installed; a 2-item solve is a meet in the middle)
    if not jit.enabled():
        pytest.skip("numba is not installed: make_instance takes numpy's checks only")
    assert jit.ready("i")
    B = modes.compiled()
    rng = np.random.default_rng(11)
    int_edges = np.array([-(2**63), -1, 0, 1, 2**62 - 1, 2**62, 2**63 - 1], dtype=np.int64)
    float_edges = np.array([np.nan, np.inf, -np.inf, -1e-300, -0.0, 0.5, 2.0**53, 2.0**53 + 2, 1e300, 7.0])
    for trial in range(600):
        n = int(rng.integers(1, 40))
        w = rng.integers(0, 2**62, n, dtype=np.int64)
        floats = trial % 2 == 1
        v = rng.integers(0, 2**53 if floats else 2**63 - 1, n, dtype=np.int64)
        v = v.astype(np.float64) if floats else v
        if trial % 4 < 2 and rng.random() < 0.7:
            w[rng.integers(0, n)] = rng.choice(int_edges)
        if trial % 4 >= 2 and rng.random() < 0.7:
            v[rng.integers(0, n)] = rng.choice(float_edges if floats else int_edges)
        w_ok = bool(((w >= 0) & (w < 2**62)).all())
        v_ok = bool((np.isfinite(v) & (v >= 0)).all())
        ok = w_ok and v_ok
        whole = not floats or bool((v == np.floor(v)).all() and v.max() <= 2**53)
        if floats:
            assert B.float_items_valid(w, v) == (0 if not ok else 2 if whole else 1)
        else:
            assert B.items_valid(w, v) == ok
        if ok:
            inst = problem.make_instance(w, v, 10)
            assert inst.weights is w and inst.integral == whole
            assert inst.values.dtype == (np.int64 if whole else np.float64) and np.array_equal(inst.values, v)
            assert (inst.values is v) == (not floats or not whole)
            continue
        bad, a = ("weights", w) if not w_ok else ("values", v)
        i = int(np.flatnonzero(~(((a >= 0) & (a < 2**62)) if bad == "weights" else (np.isfinite(a) & (a >= 0))))[0])
        with pytest.raises(ValueError, match=rf"{bad}\[{i}\] = "):
            problem.make_instance(w, v, 10)


def test_the_environment_is_read_as_os_environ_reads_it(monkeypatch):
    """knapsack_gpu.env.get (the fast read of the variables every solve consults) sees what os.environ sees: a
    variable set, changed and removed through os.environ (as monkeypatch does), and one never set; and a solve
    follows KNAPSACK_GPU_STRATEGY as it changes."""
    import os

    from knapsack_gpu import env

    name = "KNAPSACK_GPU_TEST_ONLY_VARIABLE"
    assert env.get(name, "unset") == "unset"
    monkeypatch.setenv(name, "one")
    assert env.get(name, "unset") == "one" == os.environ[name]
    monkeypatch.setenv(name, "")
    assert env.get(name, "unset") == ""
    monkeypatch.delenv(name)
    assert env.get(name, "unset") == "unset"
    w, v = [3, 4, 5], [4, 5, 6]
    assert knapsack_gpu.solve(w, v, 7, device="cpu").stats["strategy"] == "states"
    monkeypatch.setenv("KNAPSACK_GPU_STRATEGY", "dense")
    assert knapsack_gpu.solve(w, v, 7, device="cpu").stats["strategy"].startswith("dense")
    monkeypatch.setenv("KNAPSACK_GPU_STRATEGY", "bogus")
    with pytest.raises(ValueError, match="KNAPSACK_GPU_STRATEGY"):
        knapsack_gpu.solve(w, v, 7, device="cpu")


def test_a_devices_kind_and_name_are_its_type_and_str_read_once():
    """knapsack_gpu.devices.kind and .name (the cached reads of torch.device.type and str(device) a solve makes)
    answer what .type and str() answer, for every device a solve may see (indexed or not), the second time too."""
    import torch

    from knapsack_gpu import devices

    for name in ("cpu", "cuda", "cuda:0", "cuda:1", "meta", "cpu:0"):
        dev = torch.device(name)
        assert devices.kind(dev) == dev.type == devices.kind(torch.device(name)) == name.split(":")[0]
        assert devices.name(dev) == str(dev) == devices.name(torch.device(name))


def test_one_byte_size_reader_for_every_flag_and_argument():
    """Issue 59: --device-memory 141GB was 141 * 10**9 while the Python example passed 141 * 2**30. Every entry point
    reads sizes as the CLI does: GB = 10**9, GiB = 2**30, and names a bad one."""
    from knapsack_gpu.sizes import byte_count, parse_bytes

    assert parse_bytes("141GB") == byte_count("141GB", "x") == 141 * 10**9
    assert byte_count("141GiB", "x") == 141 * 2**30 and byte_count(512, "x") == 512 and byte_count(None, "x") is None
    sol = knapsack_gpu.solve([3, 4, 5], [30, 50, 60], 8, device="cpu", memory_limit="2MiB")
    assert sol.stats["memory_limit"] == 2 * 2**20
    r = knapsack_gpu.plan_for([3, 4, 5], [30, 50, 60], 8, device="cuda", device_memory="141GB")
    assert r.memory_limit == int(141 * 10**9 * 0.8)
    with pytest.raises(ValueError, match="memory_limit='2 parsecs'"):
        knapsack_gpu.solve([3], [4], 5, memory_limit="2 parsecs")
    with pytest.raises(TypeError, match="memory_limit must be a number of bytes or a size"):
        knapsack_gpu.solve([3], [4], 5, memory_limit=1.5)
    res = knapsack_gpu.solve_batch(np.array([[3, 4, 5]]), np.array([[30, 50, 60]]), 8, memory_limit="1MB")
    assert int(res.value[0]) == 90

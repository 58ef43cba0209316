"""Pisinger's own instance files (the pisinger-csv layout) for the format and CLI tests: a real sample, and files
written from random instances whose z and x come from the brute-force oracle."""

from __future__ import annotations

from knapsack_gpu.reference import brute_force

# The first instance of Pisinger's knapPI_1_50_1000.csv, as his files hold it (the rows as cvxpy's test suite quotes
# them, "from http://www.diku.dk/~pisinger/genhard.c"); test_formats checks z = 8373 against the reference DP.
KNAPPI_1_50_1000_1 = """knapPI_1_50_1000_1
n 50
c 995
z 8373
time 0.00
1,94,485,0
2,506,326,0
3,416,248,0
4,992,421,0
5,649,322,0
6,237,795,0
7,457,43,1
8,815,845,0
9,446,955,0
10,422,252,0
11,791,9,1
12,359,901,0
13,667,122,1
14,598,94,1
15,7,738,0
16,544,574,0
17,334,715,0
18,766,882,0
19,994,367,0
20,893,984,0
21,633,299,0
22,131,433,0
23,428,682,0
24,700,72,1
25,617,874,0
26,874,138,1
27,720,856,0
28,419,145,0
29,794,995,0
30,196,529,0
31,997,199,1
32,116,277,0
33,908,97,1
34,539,719,0
35,707,242,0
36,569,107,0
37,537,122,0
38,931,70,1
39,726,98,1
40,487,600,0
41,772,645,0
42,513,267,0
43,81,972,0
44,943,895,0
45,58,213,0
46,303,748,0
47,764,487,0
48,536,923,0
49,724,29,1
50,789,674,0
-----

"""


def knappi_text(instances, *, time=True, last_separator=True, newline="\n", blank="\n") -> str:
    """Pisinger's layout for [(name, weights, values, capacity, z, x)]."""
    parts = []
    for k, (name, w, v, capacity, z, x) in enumerate(instances):
        lines = [name, f"n {len(w)}", f"c {capacity}", f"z {z}"] + (["time 0.00"] if time else [])
        lines += [f"{i},{p},{wt},{xi}" for i, (p, wt, xi) in enumerate(zip(v, w, x, strict=True), 1)]
        lines += ["-----"] if last_separator or k < len(instances) - 1 else []
        parts.append("".join(line + newline for line in lines))
    return blank.join(parts)


def brute_forced(rng, count: int) -> list[tuple]:
    """Random instances with z and x from the brute-force oracle, n = 0..10."""
    out = []
    for j in range(1, count + 1):
        n = int(rng.integers(0, 11))
        w, v = rng.integers(1, 100, n).tolist(), rng.integers(1, 100, n).tolist()
        capacity = sum(w) // 2
        z, optimal = brute_force(w, v, capacity)
        out.append((f"knapPI_9_{n}_100_{j}", w, v, capacity, z, [int(i in optimal[0]) for i in range(n)]))
    return out

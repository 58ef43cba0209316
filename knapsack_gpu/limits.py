"""The numeric limits every input is checked against (no imports: file readers and the CLI use them without torch)."""

# Weights and capacities stay below 2**62 so that a weight plus a capacity never overflows int64.
MAX_WEIGHT = 2**62
# Whole-number float values are solved in integers only while float64 holds them exactly.
MAX_EXACT_FLOAT_INT = 2**53

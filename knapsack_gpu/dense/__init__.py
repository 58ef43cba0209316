"""The dense engine: the DP over capacity, one row update per item (:mod:`.passes`: numpy, torch, Triton), the
windows a pruned pass keeps (:mod:`.windows`), and the recovery of the chosen items by a bit table or Hirschberg splits
down to bit-table leaves (:mod:`.recover`, :mod:`.backtrack`). :mod:`knapsack_gpu.plan` chooses which dense plan runs.
"""

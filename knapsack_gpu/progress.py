"""Progress reporting: what a long solve tells a caller (the CLI draws a bar from it)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives progress from :func:`knapsack_gpu.solve`.

    ``start`` is called once the plan is known, with the number of item passes it expects (exact for a single
    bit-table pass, an estimate for Hirschberg, which may run a few more); ``update`` once per item pass.
    """

    def start(self, item_passes: int) -> None: ...

    def update(self, cells: int) -> None: ...

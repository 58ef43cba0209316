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


def check_progress(progress: object) -> None:
    """Refuse a progress listener without ``start`` and ``update`` now, not when the first DP pass calls it."""
    if progress is None:
        return
    missing = [name for name in ("start", "update") if not callable(getattr(progress, name, None))]
    if missing:
        raise TypeError(
            f"progress must be None or an object with start(item_passes) and update(cells) methods "
            f"(knapsack_gpu.progress.Progress); {progress!r} has no {' or '.join(missing)}"
        )

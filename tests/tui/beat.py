"""A stand-in for the beat of pacing.py: what was asked for, run when the test says."""

from __future__ import annotations

from collections.abc import Callable

from picode.tui.widgets.pacing import Due


class RecordedBeat:
    """Stands in for ``on_beat``: what was asked for, fired when the test says."""

    def __init__(self) -> None:
        self.waiting: list[tuple[int, Due]] = []

    def __call__(self, point: int, callback: Callable[[], object]) -> Due:
        due = Due(callback)
        self.waiting.append((point, due))
        return due

    def points(self) -> list[int]:
        return [point for point, due in self.waiting if due.callback is not None]

    def fire(self) -> int:
        """Everything waiting, in one go (as ``Beat`` runs what is due at one point):
        how many ran."""
        waiting, self.waiting = self.waiting, []
        ran = 0
        for _point, due in waiting:
            callback = due.callback
            if callback is not None:
                due.callback = None
                due.context.run(callback)
                ran += 1
        return ran

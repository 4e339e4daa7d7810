"""Shared helpers for the bench scripts: summaries of repeated samples and the machine line.

Every script reports the median and the spread (min–max, and the interquartile range when
there are enough samples) of its runs, next to a baseline measured in the same run.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(slots=True, frozen=True)
class Summary:
    median: float
    low: float
    high: float
    q1: float
    q3: float
    runs: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        if not values:
            raise ValueError("no samples to summarise")
        ordered = sorted(values)
        if len(ordered) >= 4:
            q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
        else:
            q1, q3 = ordered[0], ordered[-1]
        return cls(statistics.median(ordered), ordered[0], ordered[-1], q1, q3, len(ordered))

    def ratio(self, baseline: Summary) -> float:
        return self.median / baseline.median if baseline.median else float("nan")


def fmt(summary: Summary, scale: float = 1e3, unit: str = "ms", digits: int = 1) -> str:
    """``median unit (min–max)``; values are multiplied by ``scale`` first."""
    unit = f" {unit}" if unit else ""
    return (
        f"{summary.median * scale:.{digits}f}{unit} "
        f"({summary.low * scale:.{digits}f}–{summary.high * scale:.{digits}f})"
    )


def spread(summary: Summary, scale: float = 1e3, digits: int = 1) -> str:
    return f"{summary.low * scale:.{digits}f}–{summary.high * scale:.{digits}f}"


def iqr(summary: Summary, scale: float = 1e3, digits: int = 1) -> str:
    return f"{summary.q1 * scale:.{digits}f}–{summary.q3 * scale:.{digits}f}"


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line describing where the numbers came from."""
    try:
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        load = "?"
    return (
        f"machine: {os.cpu_count()} CPUs ({cpu_model()}), Python {platform.python_version()} "
        f"({sys.implementation.name}), {platform.system()} {platform.release()}, "
        f"load average {load}"
    )

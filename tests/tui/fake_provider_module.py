"""Stands in for a provider SDK module in the start-up tests (importing it is the point)."""

IMPORTED = True

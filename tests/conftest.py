"""Suite-wide fixtures."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _unfreeze_after_test() -> Iterator[None]:
    """The app freezes its long-lived objects (``gc.freeze``); in one test process those
    would be a whole earlier test's app, never collected."""
    yield
    gc.unfreeze()

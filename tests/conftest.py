"""Suite-wide fixtures."""

from __future__ import annotations

import gc
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.wire.server import WireServer


@pytest.fixture(autouse=True)
def _unfreeze_after_test() -> Iterator[None]:
    """The app freezes its long-lived objects (``gc.freeze``); in one test process those
    would be a whole earlier test's app, never collected."""
    yield
    gc.unfreeze()


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME outside the temp folder, for sandbox tests: the sandbox lets commands write in
    ``/tmp``, so a HOME there could not show a blocked write."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="picode-home-", dir="/var/tmp"))
    except OSError:
        pytest.skip("/var/tmp is not writable here")
    monkeypatch.setenv("HOME", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started scripted HTTP server on 127.0.0.1 (tests/wire), stopped after the test."""
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()

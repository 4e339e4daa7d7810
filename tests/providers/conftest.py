from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.wire.server import WireServer


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started scripted HTTP server on 127.0.0.1, stopped after the test."""
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()

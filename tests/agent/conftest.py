from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent import fakes


@pytest.fixture(autouse=True)
def _close_faux_providers() -> Iterator[None]:
    yield
    while fakes.OPEN_PROVIDERS:
        fakes.OPEN_PROVIDERS.pop().close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.apis import DRIVERS, AnthropicDriver, ApiDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Start, terminals
from tests.wire.server import WireServer


@pytest.fixture
def picode(tmp_path: Path) -> PicodeEnv:
    return PicodeEnv(tmp_path)


@pytest.fixture(params=DRIVERS, ids=[driver.name for driver in DRIVERS])
def api(request: pytest.FixtureRequest, wire: WireServer, picode: PicodeEnv) -> ApiDriver:
    """One wire API, with picode pointed at the test server for it."""
    driver: ApiDriver = request.param
    picode.env.update(driver.environment(wire))
    config = driver.config(wire)
    if config:
        picode.add_config(config)
    return driver


@pytest.fixture
def tui(wire: WireServer, picode: PicodeEnv) -> Iterator[Start]:
    """Starts picode TUIs in ptys on the test server (Anthropic's API); every one is killed
    at the end, pass or fail."""
    api = use(AnthropicDriver(), wire, picode)
    with terminals(picode, api.model) as start:
        yield start

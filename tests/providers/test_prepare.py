"""``prepare_provider``: the SDK imported and the client built before the first request,
which then reuses that client instead of building its own on the event loop."""

from __future__ import annotations

import asyncio
import importlib

import pytest

from picode.ai.options import StreamOptions
from picode.ai.providers import _client_cache
from picode.ai.stream import PROVIDER_MODULES, prepare_provider
from tests.providers.models import wire_model
from tests.wire.server import WireServer


@pytest.mark.parametrize("api", sorted(PROVIDER_MODULES))
def test_the_prepared_client_is_the_one_the_request_uses(wire: WireServer, api: str) -> None:
    model = wire_model(api, wire)
    options = StreamOptions(api_key="test-key")

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        try:
            await prepare_provider(model, options)
            prepared = [client for client, _close in _client_cache._clients[loop].values()]
            assert len(prepared) == 1
            module = importlib.import_module(PROVIDER_MODULES[api])
            assert await module._client(model, options) is prepared[0]
        finally:
            await _client_cache.close_clients()

    asyncio.run(scenario())


def test_preparing_without_a_key_fails_as_the_request_would(wire: WireServer) -> None:
    from picode.ai.errors import MissingApiKeyError

    model = wire_model("anthropic-messages", wire, provider="nokey-provider")

    with pytest.raises(MissingApiKeyError):
        asyncio.run(prepare_provider(model, StreamOptions()))

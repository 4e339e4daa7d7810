"""A streamed OpenAI request sent the way both OpenAI providers send theirs.

The body is encoded by picode (``_json_body``: the params are wire-format already, and the
SDK's typed transform of the whole history is skipped) and each event is handed over as
the JSON the server sent (``cast_to=object``), not as the SDK's typed object. Imported
only by the OpenAI providers, which import the SDK anyway."""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI, AsyncStream

from picode.ai.providers._json_body import encode_body


async def post_stream(client: AsyncOpenAI, path: str, params: dict[str, Any]) -> AsyncStream[Any]:
    """POST ``params`` with ``stream: true`` to ``path``; the stream of decoded events."""
    return await client.post(
        path,
        content=encode_body({**params, "stream": True}),
        # As the SDK's own methods ask: the API key goes as a bearer token.
        options={"security": {"bearer_auth": True}},
        cast_to=object,
        stream=True,
        stream_cls=AsyncStream[object],
    )

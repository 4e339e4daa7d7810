"""A streamed Gemini request through google-genai's API client, read as plain JSON.

``client.aio.models.generate_content_stream`` validates every streamed chunk into a
``GenerateContentResponse`` and its config into a ``GenerateContentConfig``; pydantic
builds those models' schemas on first use. That was ~150 ms of CPU on the way to the first
answer after launch, and ~0.2 ms a chunk after (docs/benchmarks.md, issue 36). Here the
request goes through the same client, as ``generate_content_stream`` sends it: its URL,
headers and API key (``_build_request``), its HTTP client, retry policy and HTTP errors
(``_async_request``, raising ``APIError``), its SSE framing (``HttpResponse``); only the
body is picode's (``_google_body``, encoded by ``_json_body``) and each chunk stays the
dict the server sent. These are the client's own methods under its public
``async_request_streamed``, which would re-encode every chunk and wrap it in a model.

The API client is built as ``genai.Client`` builds it, without importing ``genai.client``:
that module imports the modules of every API (models, files, caches, live, ...: ~170
modules) that the client object sets up and picode never calls.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from google.genai import errors, types
from google.genai._api_client import BaseApiClient
from google.genai._base_url import get_base_url

from picode.ai.providers._json_body import encode_body

#: ``GOOGLE_GENAI_CLIENT_MODE`` values with which ``genai.Client`` records or replays.
_REPLAY_MODES = ("record", "replay", "auto")


def api_client(api_key: str | None, http_options: types.HttpOptions) -> BaseApiClient:
    """``genai.Client(api_key=…, vertexai=False, http_options=…).aio._api_client``."""
    if os.environ.get("GOOGLE_GENAI_CLIENT_MODE") in _REPLAY_MODES:
        from google import genai  # the SDK's test recorder: its own client, as it is

        client = genai.Client(api_key=api_key, vertexai=False, http_options=http_options)
        return client.aio._api_client
    # What Client.__init__ does before it builds the API client.
    base_url = get_base_url(False, http_options)
    if base_url:
        http_options.base_url = base_url
    return BaseApiClient(vertexai=False, api_key=api_key, http_options=http_options)


async def post_stream(
    api: BaseApiClient, path: str, body: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """POST ``body`` to ``path``; the stream of its chunks (an async generator to close)."""
    request = api._build_request("post", path, {}, None)
    request.data = encode_body(body)
    response = await api._async_request(http_request=request, stream=True)
    return _chunks(response)


async def _chunks(response: Any) -> AsyncIterator[dict[str, Any]]:
    segments = response.async_segments()
    try:
        async for chunk in segments:
            if not isinstance(chunk, dict):
                continue
            error = chunk.get("error")
            if error is not None:
                # An error mid-stream arrives as a chunk; the SDK raises it the same way.
                if not isinstance(error, dict):  # not Google's shape: keep its text
                    chunk = {"error": {"message": str(error)}}
                    error = chunk["error"]
                code = error.get("code")
                if not isinstance(code, int):
                    raise errors.APIError(0, chunk, response)
                await errors.APIError.raise_error_async(code, chunk, response)
            yield chunk
    finally:
        await segments.aclose()
        # Closing the generator above leaves the SDK's inner reader to the garbage
        # collector; an abort must close the connection now.
        stream = response.response_stream
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
        elif (release := getattr(stream, "release", None)) is not None:
            release()  # aiohttp
